/**
 * The host commands a node is made with (ip, iptables, buildah, ctr, ...), run without a shell: their output
 * returned, and a failure turned into an error that quotes the command and the end of what it printed.
 */
import { execFile } from 'node:child_process';

/** Options of {@link run}. */
export interface RunOptions {
  /** Extra environment, on top of this process's. Default none. */
  env?: Record<string, string>;
  /** Give up (SIGKILL) after this many ms. Default 120 000. */
  timeoutMs?: number;
}

/** What a failed command printed last, at most this many lines. */
const TAIL_LINES = 10;

/**
 * Runs `file args` and resolves with its standard output.
 *
 * @throws Error `<file> <args> failed (exit code N): <the end of its stderr, else stdout>`.
 */
export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      {
        env: options.env === undefined ? process.env : { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 120_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (err === null) {
          resolve(stdout);
          return;
        }
        const how =
          err.killed === true
            ? `was killed after ${options.timeoutMs ?? 120_000} ms`
            : `failed (${typeof err.code === 'number' ? `exit code ${err.code}` : (err.code ?? err.message)})`;
        const said = (stderr.trim() === '' ? stdout : stderr).trim().split('\n').slice(-TAIL_LINES).join('\n');
        reject(new Error(`${[file, ...args].join(' ')} ${how}${said === '' ? '' : `:\n${said}`}`));
      },
    );
  });
}

/** Like {@link run}, but a failure is ignored: for clean-up steps whose object may be gone already. */
export async function runQuietly(file: string, args: readonly string[]): Promise<void> {
  await run(file, args, { timeoutMs: 30_000 }).catch(() => undefined);
}
