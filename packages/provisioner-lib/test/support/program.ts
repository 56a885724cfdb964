/**
 * A Node program run as a child process, as a user runs a provisioner: its JSON output lines, its exit, and waits
 * that fail at once (with the exit code and the end of stderr) when the program exits before the awaited state.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { WAIT } from '@kprov/testkit/vitest';

/** One line the program wrote to stdout, parsed; `{ text }` for a line that is not JSON. */
export type ProgramLine = Record<string, unknown>;

/** How a program ended: `code` is null when a signal killed it. */
export interface ProgramExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running (or ended) child program. */
export class Program {
  readonly lines: ProgramLine[] = [];
  readonly exited: Promise<ProgramExit>;
  private exit: ProgramExit | undefined;
  private stderr = '';
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  /**
   * Starts `process.execPath <script> ...args` with stdin closed and stdout, stderr piped, in `env` (default this
   * process's environment).
   */
  constructor(script: string, args: readonly string[], env?: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env === undefined ? {} : { env }),
    });
    const stdout = this.child.stdout;
    if (stdout === null) throw new Error('no stdout pipe');
    const lines = createInterface({ input: stdout });
    lines.on('line', (text) => {
      try {
        this.lines.push(JSON.parse(text) as ProgramLine);
      } catch {
        this.lines.push({ text });
      }
      this.notify();
    });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    // 'close' comes after stdout ended, so every line is in `lines` once `exited` resolves.
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      });
    });
  }

  /** The program's process ID. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** What the program wrote to stderr so far. */
  get stderrText(): string {
    return this.stderr;
  }

  /** Whether the program is still running. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /** Lines whose `msg` (log lines) or `event` (controller events) is `what`. */
  find(what: string): ProgramLine[] {
    return this.lines.filter((l) => l.msg === what || l.event === what);
  }

  count(what: string): number {
    return this.find(what).length;
  }

  /** Sends a signal (SIGTERM by default). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }

  /** Kills the program if it still runs and waits for its end. For clean-up after a test. */
  async dispose(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  /**
   * Resolves once `predicate` holds for the output so far; rejects when the program exits first (saying how, with
   * the end of its stderr) or after `timeoutMs` (default: the tests' WAIT).
   */
  until(predicate: (p: Program) => boolean, what: string, timeoutMs = WAIT.timeout): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (predicate(this)) {
          done();
          resolve();
        } else if (this.exit !== undefined) {
          done();
          reject(new Error(`the program exited (${this.describeExit()}) before: ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for: ${what}; the program is ${this.running ? 'running' : `gone (${this.describeExit()})`}`,
          ),
        );
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  private describeExit(): string {
    const exit = this.exit;
    if (exit === undefined) return 'running';
    const how = exit.signal === null ? `code ${String(exit.code)}` : `signal ${exit.signal}`;
    const tail = this.stderr.trim().split('\n').slice(-3).join(' | ');
    return tail === '' ? how : `${how}; stderr: ${tail}`;
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
