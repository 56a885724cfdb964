import { spawn, type ChildProcess } from 'node:child_process';

/** Options of {@link startNodeProcess}. */
export interface StartNodeProcessOptions {
  /** Working directory. Default: this process's. */
  cwd?: string;
  /** Environment. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Give up (and kill the child) after this many ms without the ready text. Default 30 000. */
  timeoutMs?: number;
  /** Told about the child as soon as it is spawned, before it is ready. Default none. */
  onSpawn?: (child: ChildProcess) => void;
}

/**
 * Starts `node <args>` (this process's Node binary) and resolves once the child printed `ready` on stdout, for
 * driving a provisioner binary and `kprov-testkit serve` as separate processes, as a user would run them.
 *
 * @param name - the child's name in error messages.
 * @param ready - text whose appearance on stdout means the child is up (e.g. a log line it prints when started).
 * @throws Error when the child exits or the timeout passes first; the message has its stdout and stderr.
 */
export async function startNodeProcess(
  name: string,
  args: readonly string[],
  ready: string,
  options: StartNodeProcessOptions = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  options.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not print "${ready}" within ${timeoutMs} ms:\n${stdout}${stderr}`)),
        timeoutMs,
      );
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes(ready)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready:\n${stdout}${stderr}`));
      });
    });
  } catch (err) {
    await stopProcess(child);
    throw err;
  }
  return child;
}

/** Sends SIGTERM to a child that is still running and waits for it to exit. Nothing for `undefined` or an exited child. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
