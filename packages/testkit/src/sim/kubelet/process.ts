/**
 * A container as a host process: its own process group (so that everything it starts is killed with it), combined
 * stdout and stderr kept in a bounded {@link LogBuffer}, and its end reported like a container's (`128 + signal`
 * when killed). When the main process exits, the rest of its group is killed, as tearing down a container does.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';

/** How a container process ended. */
export interface ExitInfo {
  exitCode: number;
  /** Set when the process could not be started at all (kubelet reason `StartError`). */
  startError?: string;
}

/** A running container process. */
export interface ContainerProcess {
  readonly done: Promise<ExitInfo>;
  /** Signals the whole process group; a no-op once it has exited. */
  kill(signal: NodeJS.Signals): void;
}

/** Told about each chunk a container instance writes, and `null` once it has ended. */
export type LogListener = (chunk: Buffer | null) => void;

/** One container instance's combined output, keeping at most `maxBytes` (the newest). */
export class LogBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private readonly listeners = new Set<LogListener>();
  private isEnded = false;

  constructor(private readonly maxBytes: number) {}

  append(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.maxBytes * 2) this.compact();
    for (const l of this.listeners) l(chunk);
  }

  /** Marks the instance as ended: followers are told (`null`) and dropped. */
  end(): void {
    if (this.isEnded) return;
    this.isEnded = true;
    for (const l of this.listeners) l(null);
    this.listeners.clear();
  }

  /** Whether the instance has ended (nothing more will be appended). */
  get ended(): boolean {
    return this.isEnded;
  }

  /** Follows the output from now on; returns the function that stops following. Told `null` at once when ended. */
  follow(listener: LogListener): () => void {
    if (this.isEnded) {
      listener(null);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const kept = all.subarray(Math.max(0, all.length - this.maxBytes));
    this.chunks = [kept];
    this.size = kept.length;
  }

  /** The kept output as text. */
  text(): string {
    this.compact();
    return this.chunks[0]?.toString('utf8') ?? '';
  }
}

/** How long to wait for output still buffered in the pipes after the main process exited. */
const DRAIN_MS = 200;

/** Starts `argv` in its own process group; see the module comment. */
export function startProcess(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; log: LogBuffer },
): ContainerProcess {
  const [file, ...args] = argv;
  let exited = false;
  let pid: number | undefined;
  const killGroup = (signal: NodeJS.Signals): void => {
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };
  const startError = (detail: string): ExitInfo => ({
    exitCode: 128,
    startError: `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: ${detail}: unknown`,
  });
  const done = new Promise<ExitInfo>((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file ?? '', args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      exited = true;
      resolve(startError(err instanceof Error ? err.message : String(err)));
      return;
    }
    pid = child.pid;
    child.stdout?.on('data', (chunk: Buffer) => options.log.append(chunk));
    child.stderr?.on('data', (chunk: Buffer) => options.log.append(chunk));
    let info: ExitInfo | undefined;
    const settle = (): void => {
      if (info !== undefined) resolve(info);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (info !== undefined || exited) return;
      exited = true;
      const detail = err.code === 'ENOENT' ? `exec: "${file ?? ''}": executable file not found in $PATH` : err.message;
      info = startError(detail);
      settle();
    });
    child.on('exit', (code, signal) => {
      if (exited) return;
      exited = true;
      const signo = signal === null ? 0 : (os.constants.signals[signal] ?? 9);
      info = { exitCode: code ?? 128 + signo };
      // The container is gone: so is everything it left running.
      killGroup('SIGKILL');
      const timer = setTimeout(settle, DRAIN_MS);
      child.once('close', () => {
        clearTimeout(timer);
        settle();
      });
    });
  });
  return {
    done,
    kill(signal) {
      if (!exited) killGroup(signal);
    },
  };
}
