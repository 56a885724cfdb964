/**
 * `docker/kprov-node.sh`, which starts Node.js in the provisioners' images: with jemalloc as the allocator when the
 * system has it (the images install it; the cases that need it are skipped elsewhere), with Node.js and V8 flags that
 * keep its memory low (KPROV_NODE_FLAGS replaces them; with a young-generation size in NODE_OPTIONS, none that sizes
 * it); without a memory limit it caps V8's young generation at 16 MiB semi-spaces, which Node.js would otherwise size
 * from the whole machine's memory; under a memory limit, or with the size in NODE_OPTIONS, it adds no cap.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// The benchmark's memory cgroup, the same that runs its controller process as a container with a limit would.
import { memoryLimitedNode } from '../bench/memory-limit.js';

const SCRIPT = fileURLToPath(new URL('../docker/kprov-node.sh', import.meta.url));

/**
 * Runs a program through the script that keeps 200 MiB of small objects alive (all of it survives the young
 * generation, as a filling informer cache does) and reports its Node.js flags and the young generation's size.
 */
const PROBE = `
  const v8 = require('node:v8');
  const kept = [];
  for (let i = 0; i < 2_000_000; i++) kept.push({ i, s: 'x' + i, a: [i] });
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
  console.log(JSON.stringify({ execArgv: process.execArgv, youngMiB: young / 2 ** 20, kept: kept.length }));
`;

interface Probe {
  execArgv: string[];
  youngMiB: number;
}

function probe(env: NodeJS.ProcessEnv = {}, via: string[] = []): Probe {
  const out = execFileSync(via[0] ?? 'sh', [...via.slice(1), ...(via.length > 0 ? [] : [SCRIPT]), '-e', PROBE], {
    env: { ...process.env, KPROV_NODE: process.execPath, NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Probe;
}

const CAP = '--max-semi-space-size=16';
const unlimited = !(process.constrainedMemory() > 0 && process.constrainedMemory() < totalmem());

/** Where Debian's libjemalloc2 (which the images install) puts the library, if this machine has it. */
const JEMALLOC = readdirSync('/usr/lib', { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name.endsWith('-linux-gnu'))
  .map((d) => join('/usr/lib', d.name, 'libjemalloc.so.2'))
  .find((file) => existsSync(file));

/** Runs a program through the script that reports the shared libraries its Node.js process has mapped. */
function mappedLibraries(env: NodeJS.ProcessEnv = {}): string {
  const program = `process.stdout.write(require('node:fs').readFileSync('/proc/self/maps', 'utf8'))`;
  return execFileSync('sh', [SCRIPT, '-e', program], {
    env: { ...process.env, KPROV_NODE: process.execPath, NODE_OPTIONS: '', LD_PRELOAD: '', ...env },
    encoding: 'utf8',
  });
}

// Each probe keeps 200 MiB alive; with V8's --optimize-for-size (1 MiB semi-spaces, everything promoted) it takes
// about 4 s alone on 2 cores, and longer beside the other test files (the repo project allows 120 s a test).
describe('the images start Node.js through docker/kprov-node.sh', () => {
  describe('the memory allocator', () => {
    it.runIf(JEMALLOC !== undefined)('is jemalloc when the system has it', () => {
      expect(mappedLibraries()).toContain('libjemalloc.so.2');
    });

    it.runIf(JEMALLOC !== undefined)("stays glibc's with KPROV_MALLOC=glibc", () => {
      expect(mappedLibraries({ KPROV_MALLOC: 'glibc' })).not.toContain('libjemalloc');
    });

    it('leaves an LD_PRELOAD of the operator alone', () => {
      // A library every Linux system has, preloaded: the script must not replace it with jemalloc.
      const libc = readdirSync('/usr/lib', { withFileTypes: true })
        .filter((d) => d.isDirectory() && d.name.endsWith('-linux-gnu'))
        .map((d) => join('/usr/lib', d.name, 'libc.so.6'))
        .find((file) => existsSync(file));
      if (libc === undefined) return;
      const maps = mappedLibraries({ LD_PRELOAD: libc });
      expect(maps).toContain('libc.so.6');
      expect(maps).not.toContain('libjemalloc');
    });
  });

  describe("Node.js's and V8's flags", () => {
    const LEAN = ['--v8-pool-size=1', '--no-turbofan', '--liftoff-only'];
    const SIZE = '--optimize-for-size';

    it("are V8's mode for small devices, one V8 thread, no TurboFan, Liftoff-only WebAssembly by default", () => {
      const p = probe();
      expect(p.execArgv).toEqual(expect.arrayContaining([SIZE, ...LEAN]));
      // What --optimize-for-size does to the young generation: two 1 MiB semi-spaces, with 200 MiB kept alive.
      expect(p.youngMiB).toBeLessThanOrEqual(2);
    });

    it('are those but the mode for small devices with a young-generation size in NODE_OPTIONS', () => {
      const p = probe({ NODE_OPTIONS: '--max-semi-space-size=64' });
      expect(p.execArgv).toEqual(expect.arrayContaining(LEAN));
      expect(p.execArgv).not.toContain(SIZE);
    });

    it('are what KPROV_NODE_FLAGS says, none when it is empty', () => {
      expect(probe({ KPROV_NODE_FLAGS: '--v8-pool-size=2' }).execArgv).toContain('--v8-pool-size=2');
      const none = probe({ KPROV_NODE_FLAGS: '' }).execArgv;
      for (const flag of [SIZE, ...LEAN]) expect(none).not.toContain(flag);
    });
  });

  it.runIf(unlimited)('caps the young generation at two 16 MiB semi-spaces when there is no memory limit', () => {
    const p = probe();
    expect(p.execArgv).toContain(CAP);
    expect(p.youngMiB).toBeGreaterThan(0);
    expect(p.youngMiB).toBeLessThanOrEqual(32);
  });

  it('leaves the size to NODE_OPTIONS when it sets one', () => {
    // A size above the cap, so that the one that applies shows: with the script's cap on the command line (which
    // wins over NODE_OPTIONS) the young generation would stop at 32 MiB. (Below the cap, V8's young generation
    // varies between runs: 4 to 14 MiB with 2 MiB semi-spaces.)
    const p = probe({ NODE_OPTIONS: '--max-semi-space-size=64' });
    expect(p.execArgv).not.toContain(CAP);
    expect(p.youngMiB).toBeGreaterThan(32);
  });

  describe('under a memory limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kprov-node-'));
    const limit = memoryLimitedNode(2 * 1024 ** 3, dir).catch((err: unknown) => err as Error);
    afterAll(async () => {
      const l = await limit;
      if (!(l instanceof Error)) await l.remove();
      rmSync(dir, { recursive: true, force: true });
    });

    it('adds no young-generation cap: Node.js sizes the young generation from the limit', async (ctx) => {
      const l = await limit;
      if (l instanceof Error) {
        ctx.skip(`needs a memory cgroup (root and a cgroup memory controller): ${l.message}`);
        return;
      }
      // The wrapper moves itself into the group and starts Node.js, which runs the script: both in the group.
      const runScript = `const r = require('node:child_process').spawnSync('sh', [${JSON.stringify(SCRIPT)}, '-e', ${JSON.stringify(PROBE)}], { encoding: 'utf8' }); process.stdout.write(r.stdout); process.stderr.write(r.stderr);`;
      const p = JSON.parse(
        execFileSync(l.execPath, ['-e', runScript], {
          env: { ...process.env, KPROV_NODE: process.execPath, NODE_OPTIONS: '' },
          encoding: 'utf8',
        }),
      ) as Probe;
      expect(p.execArgv).not.toContain(CAP);
    });
  });
});
