// Runs the controller process under a memory limit, as a container with `resources.limits.memory` would run it:
// Node.js reads the limit of its cgroup at start and sizes V8's heap, and its young generation, from it instead of
// from the machine's memory. Needs root and a cgroup memory controller (v1 or v2); see bench/README.md.
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';

/** "512M", "1G", "268435456": bytes. */
export function parseMemoryLimit(text) {
  const m = /^(\d+)([KMG]i?)?$/i.exec(text.trim());
  if (m === null)
    throw new Error(`--controller-memory-limit "${text}": expected bytes or a number with K, M or G (512M)`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').slice(0, 1).toLowerCase()];
  return Number(m[1]) * unit;
}

function cgroupRoot() {
  const v2 = '/sys/fs/cgroup';
  if (
    existsSync(join(v2, 'cgroup.controllers')) &&
    readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')
  ) {
    return { dir: v2, limitFile: 'memory.max' };
  }
  if (existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes'))
    return { dir: '/sys/fs/cgroup/memory', limitFile: 'memory.limit_in_bytes' };
  return undefined;
}

/**
 * A memory cgroup limited to `bytes` and a wrapper that starts Node.js in it (through `target`, an executable that
 * takes Node.js's arguments; default Node.js itself): `{ execPath, remove }`, `execPath` for `fork`. Throws, saying
 * why, when this machine cannot do it.
 */
export async function memoryLimitedNode(bytes, tmpDir, target = process.execPath) {
  const root = cgroupRoot();
  if (root === undefined)
    throw new Error('--controller-memory-limit needs a cgroup memory controller (none found under /sys/fs/cgroup)');
  const group = join(root.dir, `kprov-bench-${process.pid}`);
  try {
    await mkdir(group, { recursive: true });
    await writeFile(join(group, root.limitFile), String(bytes));
  } catch (err) {
    throw new Error(
      `--controller-memory-limit: cannot create the cgroup ${group} (${err instanceof Error ? err.message : String(err)}); it needs root`,
      { cause: err },
    );
  }
  const execPath = join(tmpDir, 'node-in-cgroup.sh');
  // The shell moves itself into the group, then becomes Node.js: the limit holds from Node's first instruction.
  await writeFile(execPath, `#!/bin/sh\necho $$ > '${join(group, 'cgroup.procs')}'\nexec '${target}' "$@"\n`);
  await chmod(execPath, 0o755);
  return {
    execPath,
    bytes,
    remove: async () => {
      await rmdir(group).catch(() => undefined);
    },
  };
}
