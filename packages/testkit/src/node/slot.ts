/**
 * Which nodes run on this machine, and what a node left behind when its process was killed. Each node takes a slot
 * N: the folder `<tmp>/kprov-nodes/N` (made with mkdir, so two processes never take the same one), which holds its
 * filesystem and the id of the process that owns it; its bridge, subnet, iptables rules and cgroups are named after N
 * (`network.ts`, `cgroups.ts`). A slot whose owner is gone (a test runner killed midway) is cleaned before a new
 * node starts: its processes killed, its rules, bridge, cgroups and mounts removed, its folder deleted.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeCgroupRoot } from './cgroups.js';
import { run, runQuietly } from './command.js';
import { MAX_SLOTS, nodeAddresses, removeNetwork } from './network.js';

/** The folder of every node's slot. */
export function nodesDir(): string {
  return path.join(tmpdir(), 'kprov-nodes');
}

/** The file naming the process that owns a slot: `<pid> <start time>` (the pair survives pid reuse). */
const OWNER = 'owner';
/** The file naming the process at the top of the node's namespaces (`unshare`). */
export const NAMESPACE_PID = 'namespace.pid';
/** A slot folder with no owner file yet is being claimed; older than this, its claimer died between two steps. */
const CLAIM_GRACE_MS = 60_000;

/** A node's slot: its number and its folder. */
export interface Slot {
  slot: number;
  dir: string;
}

/** The cgroup subtree of the node in `slot`. */
export function cgroupRootName(slot: number): string {
  return `kprov-node-${slot}`;
}

/**
 * The fields of /proc/PID/stat after the command name (state first, start time 20th), or `undefined` when there is
 * no such process.
 */
function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of process `pid`, or `undefined` when there is no such process. */
function startTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** Whether process `pid` runs (a zombie, waiting for its parent to read its exit, does not). */
function running(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

async function ownerAlive(dir: string): Promise<boolean | undefined> {
  const text = await readFile(path.join(dir, OWNER), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const [pid, start] = text.trim().split(' ');
  return start !== undefined && startTime(Number(pid)) === start;
}

/** Takes a free slot for this process, cleaning stale slots first. */
export async function claimSlot(): Promise<Slot> {
  await sweepStaleSlots();
  await mkdir(nodesDir(), { recursive: true });
  for (let slot = 1; slot <= MAX_SLOTS; slot++) {
    const dir = path.join(nodesDir(), String(slot));
    try {
      await mkdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    await writeFile(path.join(dir, OWNER), `${process.pid} ${startTime(process.pid) ?? ''}\n`);
    return { slot, dir };
  }
  throw new Error(`all ${MAX_SLOTS} node slots in ${nodesDir()} are taken: stop some nodes first`);
}

/** Cleans every slot whose owner is gone; see the module comment. */
export async function sweepStaleSlots(): Promise<void> {
  const names = await readdir(nodesDir()).catch(() => [] as string[]);
  for (const name of names) {
    const slot = Number(name);
    if (!Number.isInteger(slot) || slot < 1 || slot > MAX_SLOTS) continue;
    const dir = path.join(nodesDir(), name);
    const alive = await ownerAlive(dir);
    if (alive === true) continue;
    if (alive === undefined) {
      const age = Date.now() - (await stat(dir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age < CLAIM_GRACE_MS) continue;
    }
    await releaseSlot({ slot, dir });
  }
}

/** The mount points at or below `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const points: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const point = line.split(' ')[4]?.replace(/\\040/g, ' ');
    if (point !== undefined && (point === dir || point.startsWith(`${dir}/`))) points.push(point);
  }
  return points.sort((a, b) => b.length - a.length);
}

/**
 * Stops what is left of the node in `slot` and frees the slot: the namespace's processes killed, then its
 * iptables rules, bridge, cgroups and mounts removed, then its folder deleted (never across a mount: a mount that
 * would not go is an error rather than a reason to delete what it shows).
 */
export async function releaseSlot({ slot, dir }: Slot): Promise<void> {
  const pidText = await readFile(path.join(dir, NAMESPACE_PID), 'utf8').catch(() => undefined);
  const pid = Number(pidText);
  if (pidText !== undefined && Number.isInteger(pid) && pid > 0) {
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline.includes(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      // SIGKILL cannot be ignored; the wait is for the kernel to tear the namespaces down.
      const deadline = Date.now() + 30_000;
      while (running(pid) && Date.now() < deadline) await sleep(20);
    }
  }
  await removeNetwork(nodeAddresses(slot));
  await removeCgroupRoot(cgroupRootName(slot));
  for (const point of mountsUnder(dir)) await runQuietly('umount', ['-l', point]);
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`cannot unmount ${left.join(', ')}: the node's folder ${dir} is kept`);
  await run('rm', ['-rf', '--one-file-system', dir]);
}
