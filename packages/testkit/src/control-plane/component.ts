/**
 * One control-plane binary (etcd, kube-apiserver, ...) run as a child process: its output appended to a log file,
 * its readiness awaited with a probe, and every way it can fail to come up turned into an error that names the
 * binary and quotes the end of its log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** What to run. */
export interface ComponentSpec {
  /** Name in messages: the binary's name. */
  name: string;
  /** Path of the binary. */
  binary: string;
  args: readonly string[];
  /** The whole environment of the process (nothing of this process's is passed on). */
  env: Record<string, string>;
  /** File the process's stdout and stderr are appended to. */
  logFile: string;
  /** How long {@link Component.stop} waits after SIGTERM before SIGKILL, in ms. Default 10 000. */
  graceMs?: number;
}

/** The exit of a component. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const LOG_TAIL_LINES = 25;

/** The last lines of a log file, for error messages. */
export function logTail(file: string, lines = LOG_TAIL_LINES): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '(no log)';
  }
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

/** A started component. */
export class Component {
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  private exit: ExitStatus | undefined;
  private stopping = false;

  private constructor(readonly spec: ComponentSpec) {
    const fd = openSync(spec.logFile, 'a');
    try {
      this.child = spawn(spec.binary, [...spec.args], { env: spec.env, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      this.child.once('error', (err) => {
        this.exit = { code: null, signal: null };
        spawnErrors.set(this, err);
        resolve(this.exit);
      });
    });
  }

  /**
   * Starts the component and resolves once `ready` returns true.
   *
   * @throws Error naming the binary, with the end of its log, when it exits first or `timeoutMs` passes (the
   *   process is stopped then).
   */
  static async start(spec: ComponentSpec, ready: () => Promise<boolean>, timeoutMs: number): Promise<Component> {
    const c = new Component(spec);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (c.exit !== undefined) throw c.failure('exited before it was ready');
      if (await ready().catch(() => false)) return c;
      if (Date.now() > deadline) {
        await c.stop();
        throw c.failure(`was not ready within ${timeoutMs} ms`);
      }
      await Promise.race([sleep(100), c.exited]);
    }
  }

  /** Whether the process is still running. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /** An error for a component that did not come up: what happened, how it exited, the end of its log. */
  failure(what: string): Error {
    const err = spawnErrors.get(this);
    if (err !== undefined)
      return new Error(`${this.spec.name} could not be started (${this.spec.binary}): ${err.message}`);
    const how =
      this.exit === undefined
        ? ''
        : this.exit.signal !== null
          ? ` (signal ${this.exit.signal})`
          : ` (exit code ${this.exit.code})`;
    return new Error(
      `${this.spec.name} ${what}${how}; the end of its log (${this.spec.logFile}):\n${logTail(this.spec.logFile)}`,
    );
  }

  /** SIGTERM, then SIGKILL after `graceMs` (default the spec's); resolves once the process has exited. */
  async stop(graceMs = this.spec.graceMs ?? 10_000): Promise<void> {
    if (this.exit !== undefined) return;
    this.stopping = true;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Whether {@link stop} was called (an exit is then expected, not a crash). */
  get stopRequested(): boolean {
    return this.stopping;
  }
}

const spawnErrors = new WeakMap<Component, Error>();
