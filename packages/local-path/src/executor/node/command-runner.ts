/**
 * Runs a `setup` or `teardown` script (or `setupCommand`/`teardownCommand`) of node mode as a child process of the
 * provisioner, where default mode runs it in a helper pod: the same command line and environment, its own process
 * group (everything it starts is killed with it on timeout or abort), its combined output logged and its last lines
 * kept for the error.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { describeError, realClock, silentLogger, type Clock, type Logger } from '@kprov/provisioner-lib';
import { lastLines } from '../output.js';
import type { VolumeAction } from '../script.js';

/** What to run. */
export interface CommandRun {
  /** Program and arguments (`["/bin/sh", "-c", <script>, "setup", "-p", ...]` or `[<setupCommand>, "-p", ...]`). */
  readonly argv: readonly string[];
  /** The whole environment of the child. */
  readonly env: Readonly<Record<string, string>>;
  /** Limit in seconds (`cmdTimeoutSeconds`): the process group is killed after it. */
  readonly timeoutSeconds: number;
  /** What it does, for messages: `create` or `delete` (upstream's `<action> process timeout after <N> seconds`). */
  readonly action: VolumeAction;
  /** Kills the process group. */
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
  /** Time source of the timeout. Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** The command exited non-zero, was killed, or could not start; `logTail` holds its last output lines. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  constructor(
    message: string,
    /** The last output lines (up to `FAILED_LOG_LINES`). */
    readonly logTail: readonly string[],
  ) {
    super(message);
  }
}

/** The command did not end within its timeout (and was killed). */
export class CommandTimeoutError extends Error {
  override readonly name = 'CommandTimeoutError';
}

/** Kills a process group; nothing when it is gone. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Runs the command to its end. Resolves when it exited 0; rejects with a {@link CommandFailedError} (non-zero exit,
 * killed, not started: the message names the exit and carries the last output lines), a {@link CommandTimeoutError}
 * after `timeoutSeconds`, or the signal's reason when aborted. The process group is always gone when it settles.
 */
export function runCommand(run: CommandRun): Promise<void> {
  const logger = run.logger ?? silentLogger;
  const clock = run.clock ?? realClock;
  const [file = '', ...args] = run.argv;
  return new Promise<void>((resolve, reject) => {
    if (run.signal?.aborted === true) {
      reject(run.signal.reason as Error);
      return;
    }
    let output = '';
    // How it ended: an error, or null for success; unset while it runs.
    const state: { result?: Error | null } = {};
    const child = spawn(file, args, {
      cwd: '/',
      env: { ...run.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const append = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const finish = (err: Error | null): void => {
      if (state.result !== undefined) return;
      state.result = err;
      killGroup(child.pid);
      clock.clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
    };
    const timer = clock.setTimeout(() => {
      finish(new CommandTimeoutError(`${run.action} process timeout after ${run.timeoutSeconds} seconds`));
    }, run.timeoutSeconds * 1000);
    const onAbort = (): void => finish(run.signal?.reason as Error);
    run.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      finish(new CommandFailedError(`${file} could not be started: ${describeError(err)}`, []));
      // A process that never started may not emit 'close'.
      if (child.pid === undefined && state.result) reject(state.result);
    });
    child.on('close', (code, signalName) => {
      const lines = lastLines(output);
      if (lines.length > 0) logger.info({ output: lines }, `Output of the ${run.action} command`);
      if (state.result === undefined) {
        if (code === 0) finish(null);
        else {
          const how = code === null ? `was killed by ${signalName ?? 'a signal'}` : `exited with code ${code}`;
          const tail = lines.length === 0 ? 'no output' : `last output lines: ${lines.join(' | ')}`;
          finish(new CommandFailedError(`the ${run.action} command ${how}; ${tail}`, lines));
        }
      }
      if (state.result) reject(state.result);
      else resolve();
    });
  });
}
