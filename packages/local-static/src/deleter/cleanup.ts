/**
 * The in-process cleanups: emptying a filesystem volume without leaving it, and running a block cleaner command,
 * each bounded by a timeout.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { lstat, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Clock } from '@kprov/provisioner-lib';
import { formatGoDuration } from '@kprov/provisioner-lib/runtime';

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

/** Removes `path` (not following symlinks), staying on device `dev`. */
async function removeEntry(path: string, dev: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const info = await lstat(path);
  if (!info.isDirectory()) {
    // Files, symlinks (the link itself, never its target), sockets, devices.
    await unlink(path);
    return;
  }
  if (info.dev !== dev)
    throw new Error(`"${path}" is another filesystem mounted inside the volume; it is left as it is`);
  const names = await readdir(path);
  // The directory may not have been swapped for a link to elsewhere between the check and the read.
  const again = await lstat(path);
  if (again.ino !== info.ino || again.dev !== info.dev || !again.isDirectory())
    throw new Error(`"${path}" changed while being cleaned`);
  for (const name of names) await removeEntry(join(path, name), dev, signal);
  await rmdir(path);
}

/**
 * Removes everything inside the directory `dir` and keeps `dir` itself (the mount point). Symbolic links are removed,
 * never followed; a directory of another filesystem mounted inside is refused (left as it is, reported); the first
 * failure of each top-level entry is reported after the others were tried. `dir` itself must be a real directory:
 * neither a symbolic link nor reached through one.
 */
export async function removeContents(dir: string, signal: AbortSignal): Promise<void> {
  const top = await lstat(dir);
  if (top.isSymbolicLink() || !top.isDirectory()) throw new Error(`"${dir}" is not a directory; nothing was removed`);
  const real = await realpath(dir);
  if (real !== resolve(dir))
    throw new Error(`"${dir}" is reached through a symbolic link (it is ${real}); nothing was removed`);
  const errors: string[] = [];
  for (const name of await readdir(dir)) {
    signal.throwIfAborted();
    try {
      await removeEntry(join(dir, name), top.dev, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason as Error;
      errors.push((err as Error).message);
    }
  }
  if (errors.length > 0) throw new Error(`failed to remove the contents of "${dir}": ${errors.join('; ')}`);
}

/** Options of {@link runCleanerCommand}. */
export interface CleanerCommandOptions {
  /** The full environment of the command. */
  env: NodeJS.ProcessEnv;
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
    const child = spawn(file, args, { env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const onAbort = (): void => kill();
    options.signal.addEventListener('abort', onAbort, { once: true });
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
