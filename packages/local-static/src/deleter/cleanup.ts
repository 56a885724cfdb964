/**
 * The in-process cleanups: emptying a filesystem volume without leaving it, and running a block cleaner command,
 * each bounded by a timeout.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Clock } from '@kprov/provisioner-lib';
import { formatGoDuration } from '@kprov/provisioner-lib/runtime';
import { DEFAULT_MOUNT_INFO, readMountPoints } from '../discovery/mounts.js';
import { lstat, readdir, realpath } from '../fs/async.js';

/** A cleanup that ran longer than its timeout and was stopped. */
export class CleanupTimeoutError extends Error {
  override readonly name = 'CleanupTimeoutError';
}

/** Runs `work` with a signal that aborts when `signal` does or after `timeoutMs` on `clock`; a timeout rejects with {@link CleanupTimeoutError}. */
export async function withTimeout<T>(
  clock: Clock,
  timeoutMs: number,
  signal: AbortSignal,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new CleanupTimeoutError(`${what} timed out after ${formatGoDuration(timeoutMs)}`));
  }, timeoutMs);
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(controller.signal);
  } catch (err) {
    if (timedOut) throw controller.signal.reason as Error;
    throw err;
  } finally {
    clock.clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** Options of {@link removeContents}. */
export interface RemoveContentsOptions {
  /** The mount table in which mounts inside the volume are looked for. Default `/proc/self/mountinfo`. */
  mountInfoPath?: string;
  /** Environment of `rm` (its `PATH` finds it). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** Longest total length of the names handed to one `rm` (well under Linux's 2 MiB of arguments and environment). */
const RM_BATCH_BYTES = 256 * 1024;
/** Lines of `rm`'s complaints kept for the error. */
const RM_ERROR_LINES = 5;

/** `names` in batches whose total length stays under {@link RM_BATCH_BYTES}. */
function batches(names: readonly string[]): string[][] {
  const out: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const name of names) {
    const size = Buffer.byteLength(name) + 1;
    if (batch.length > 0 && bytes + size > RM_BATCH_BYTES) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(name);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/**
 * Removes everything inside the directory `dir` and keeps `dir` itself (the mount point). `dir` must be a real
 * directory: neither a symbolic link nor reached through one.
 *
 * Nothing of another filesystem is touched: a top-level entry that is a mount point, or has one anywhere below it (in
 * the mount table, so a bind mount of the same filesystem counts too), is left whole and reported after the others
 * were removed.
 *
 * The rest is removed by GNU `rm -r -f --one-file-system`, the real tool, rather than by a walk in JavaScript. Node.js
 * has no `openat`/`unlinkat`: a walk by path names follows a directory that is swapped for a symbolic link between its
 * check and its use, and `fs.rm` (a JavaScript walk on Node.js 22, libstdc++'s `remove_all` for `rmSync` on 24) does not
 * stay on one filesystem. `rm` walks by file descriptors opened with `O_NOFOLLOW`: symbolic links are removed, never
 * followed, also when one replaces a directory while it runs; it does not enter a directory of another filesystem (one
 * mounted after the mount table was read); it runs in its own process group, so the event loop is never blocked and an
 * abort (the cleanup's timeout) kills it. It empties a volume in the time `rm -rf` takes by hand (`pnpm bench -- --only
 * local-static`): 150,000 small files in under a second on tmpfs, where the walk it replaces took half a minute.
 */
export async function removeContents(
  dir: string,
  signal: AbortSignal,
  options: RemoveContentsOptions = {},
): Promise<void> {
  const top = await lstat(dir);
  if (top.isSymbolicLink() || !top.isDirectory()) throw new Error(`"${dir}" is not a directory; nothing was removed`);
  const real = await realpath(dir);
  if (real !== resolve(dir))
    throw new Error(`"${dir}" is reached through a symbolic link (it is ${real}); nothing was removed`);
  // Mount points below the volume, by the top-level entry they are in.
  const nested = new Map<string, string>();
  for (const point of await readMountPoints(options.mountInfoPath ?? DEFAULT_MOUNT_INFO)) {
    if (!point.startsWith(`${real}/`)) continue;
    const entry = point.slice(real.length + 1).split('/')[0] ?? '';
    const known = nested.get(entry);
    if (known === undefined || point.length < known.length) nested.set(entry, point);
  }
  const errors: string[] = [];
  const removable: string[] = [];
  for (const name of await readdir(dir)) {
    signal.throwIfAborted();
    const point = nested.get(name);
    if (point !== undefined) {
      errors.push(`"${point}" is another filesystem mounted inside the volume; it is left as it is`);
      continue;
    }
    removable.push(name);
  }
  for (const batch of batches(removable)) {
    const complaints: string[] = [];
    try {
      // Names relative to the volume, which rm is started in: no path of a parent to resolve again for each.
      await runCleanerCommand(['rm', '-r', '-f', '--one-file-system', '--', ...batch], {
        cwd: real,
        env: { ...(options.env ?? process.env), LC_ALL: 'C' },
        signal,
        onLine: (line, stream) => {
          if (stream === 'stderr' && complaints.length < RM_ERROR_LINES) complaints.push(line);
        },
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason as Error;
      errors.push(complaints.length > 0 ? complaints.join('; ') : (err as Error).message);
    }
  }
  if (errors.length > 0) throw new Error(`failed to remove the contents of "${dir}": ${errors.sort().join('; ')}`);
}

/** Options of {@link runCleanerCommand}. */
export interface CleanerCommandOptions {
  /** The full environment of the command. */
  env: NodeJS.ProcessEnv;
  /** Its working directory. Default this process's. */
  cwd?: string;
  /** Aborting it kills the command (its whole process group) and rejects with the signal's reason. */
  signal: AbortSignal;
  /** Each line the command prints, with the stream it came from. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * Runs `argv` (element 0 the executable, no shell) in its own process group; resolves when it exits 0, rejects with
 * its exit status or signal otherwise. When `signal` aborts the group is killed (SIGKILL), so that a hung cleaner
 * and what it started are gone.
 */
export function runCleanerCommand(argv: readonly string[], options: CleanerCommandOptions): Promise<void> {
  return new Promise<void>((resolvePromise, reject) => {
    const [file, ...args] = argv;
    if (file === undefined) {
      reject(new Error('empty cleaner command'));
      return;
    }
    if (options.signal.aborted) {
      reject(options.signal.reason as Error);
      return;
    }
    const child = spawn(file, args, {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const onAbort = (): void => kill();
    options.signal.addEventListener('abort', onAbort, { once: true });
    // node:readline is loaded here, when a cleaner first runs, not with the binary: at rest it is about 1 MiB of RSS
    // a node's provisioner would hold for nothing (bench/README.md, local-static).
    const { createInterface } = process.getBuiltinModule('node:readline');
    for (const [stream, readable] of [
      ['stdout', child.stdout],
      ['stderr', child.stderr],
    ] as const) {
      createInterface({ input: readable }).on('line', (line) => options.onLine?.(line, stream));
    }
    child.once('error', (err) => {
      options.signal.removeEventListener('abort', onAbort);
      reject(new Error(`cannot run ${file}: ${err.message}`, { cause: err }));
    });
    child.once('close', (code, sig) => {
      options.signal.removeEventListener('abort', onAbort);
      if (options.signal.aborted) reject(options.signal.reason as Error);
      else if (code === 0) resolvePromise();
      else
        reject(
          new Error(
            code === null ? `${file} was killed by ${sig ?? 'a signal'}` : `${file} exited with status ${code}`,
          ),
        );
    });
  });
}
