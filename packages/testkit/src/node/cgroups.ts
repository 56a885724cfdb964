/**
 * A node's own cgroup subtree: the kubelet's `cgroupRoot`, made in every cgroup hierarchy of the machine so that two
 * nodes on one machine never share `kubepods`, and removed again (deepest first) once the node's processes are gone.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The mount points of the machine's cgroup hierarchies (v1 controllers and the v2 unified one). */
export function cgroupMounts(): string[] {
  const mounts: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // `<id> <parent> <dev> <root> <mount point> <options> [optional...] - <fstype> <source> <super options>`
    const [left, right] = line.split(' - ');
    const fstype = right?.split(' ')[0];
    if (left === undefined || (fstype !== 'cgroup' && fstype !== 'cgroup2')) continue;
    const point = left.split(' ')[4];
    if (point !== undefined) mounts.push(point.replace(/\\040/g, ' '));
  }
  return mounts;
}

/** Makes `/<name>` in every hierarchy: the kubelet wants its `cgroupRoot` to exist. */
export async function createCgroupRoot(name: string): Promise<void> {
  for (const mount of cgroupMounts()) await mkdir(path.join(mount, name), { recursive: true });
}

/** Every process id still in the subtree `dir` of one hierarchy. */
async function pidsUnder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  const walk = async (d: string): Promise<void> => {
    const text = await readFile(path.join(d, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const p of text.split('\n')) if (p !== '') pids.push(Number(p));
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await walk(path.join(d, e.name));
  };
  await walk(dir);
  return pids;
}

/** Removes `dir` and the cgroups below it, deepest first; a cgroup already gone is fine. */
async function removeTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await removeTree(path.join(dir, e.name));
  await rmdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/**
 * Removes `/<name>` from every hierarchy. Processes still in it (a container that outlived its node, after a crash)
 * are killed first; a cgroup that stays busy for `timeoutMs` is an error naming it.
 */
export async function removeCgroupRoot(name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const mount of cgroupMounts()) {
    const dir = path.join(mount, name);
    for (;;) {
      for (const pid of await pidsUnder(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      try {
        await removeTree(dir);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() > deadline)
          throw new Error(`removing the node's cgroup ${dir}: ${(err as Error).message}`, { cause: err });
        // A killed process leaves its cgroup once the kernel has reaped it.
        await sleep(50);
      }
    }
  }
}
