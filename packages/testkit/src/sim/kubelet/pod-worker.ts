/**
 * One pod on one simulated node: sets up its volumes, runs init containers in order (sidecars, i.e. init
 * containers with `restartPolicy: Always`, keep running), then the regular containers together, restarts them per
 * the pod's `restartPolicy` with exponential backoff, and settles the pod's phase. It never writes to the cluster:
 * it calls `notify` and the kubelet loop writes the status it reports.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { timestamp } from '../../store/store.js';
import type { Container, Pod } from '../types.js';
import type { KubeletCluster } from './cluster.js';
import { ContainerConfigError, containerEnv, expand } from './env.js';
import { PathMapper, type MountMapping } from './paths.js';
import { LogBuffer, startProcess, type ContainerProcess, type ExitInfo } from './process.js';
import { removeTree } from './remove.js';
import { podStatus, type ContainerRecord, type PodRuntime } from './status.js';
import { podDir, resolveVolumes, writeProjected, type ProjectedFile, type ResolvedVolume } from './volumes.js';

/** What a pod worker needs from its kubelet. */
export interface WorkerContext {
  cluster: KubeletCluster;
  /** The node's root directory. */
  root: string;
  hostIP: string;
  /** Environment every container starts with (before its own variables). */
  baseEnv: Record<string, string>;
  restartBackoffMs: number;
  maxRestartBackoffMs: number;
  maxLogBytes: number;
  /** Content of `serviceAccountToken` volume projections. */
  serviceAccountToken: string;
  /** Called whenever the reported status may have changed. */
  notify: () => void;
}

interface ContainerConfig {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

/** A Go duration string, as the kubelet's back-off messages print it (`200ms`, `1.6s`, `1m20s`). */
function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = (ms % 60_000) / 1000;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** Whether something is at `p` (as `existsSync`: any error counts as nothing). */
async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** Runs one pod; see the module comment. */
export class PodWorker {
  readonly uid: string;
  private readonly rt: PodRuntime;
  private readonly dir: string;
  private volumes = new Map<string, ResolvedVolume>();
  private readonly processes = new Set<ContainerProcess>();
  private readonly owners = new Map<ContainerProcess, ContainerRecord>();
  private readonly wakers = new Set<() => void>();
  private run: Promise<void> | undefined;
  /** The volume setup attempt in flight, if any. */
  private setup: Promise<void> | undefined;
  /** Whether another attempt was asked for while one was in flight (what it read may be stale). */
  private setupAgain = false;
  /** Whether a volume setup attempt has finished (so there is a status worth reporting). */
  private attempted = false;
  private terminating = false;
  private stopped = false;
  /** The last volume setup problem, while the pod cannot start. */
  volumeProblem: string | undefined;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly pod: Pod,
  ) {
    this.uid = pod.metadata.uid ?? '';
    this.dir = podDir(ctx.root, this.uid);
    const inits = pod.spec?.initContainers ?? [];
    const waiting = inits.length > 0 ? 'PodInitializing' : 'ContainerCreating';
    const record = (c: Container, kind: ContainerRecord['kind'], reason: string): ContainerRecord => ({
      name: c.name,
      image: c.image ?? '',
      kind,
      state: { waiting: { reason } },
      restartCount: 0,
      everStarted: false,
      logs: [],
      stopping: false,
    });
    this.rt = {
      phase: 'Pending',
      sandboxReady: false,
      podIPAssigned: false,
      startTime: timestamp(),
      hostIP: ctx.hostIP,
      podIP: '127.0.0.1',
      containers: [
        ...inits.map((c) => record(c, c.restartPolicy === 'Always' ? 'sidecar' : 'init', 'PodInitializing')),
        ...(pod.spec?.containers ?? []).map((c) => record(c, 'main', waiting)),
      ],
    };
  }

  /** The pod's `terminationGracePeriodSeconds` in ms (default 30 s). */
  get gracePeriodMs(): number {
    return (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
  }

  /** Whether the pod's containers have been started (volumes were set up). */
  get started(): boolean {
    return this.run !== undefined;
  }

  /** Whether there is a status to report: the first volume setup attempt has finished, or the pod is terminating. */
  get reportable(): boolean {
    return this.attempted || this.terminating;
  }

  /**
   * Sets up the volumes and then starts the containers, in the background; `notify` is called when the attempt
   * has finished (see {@link volumeProblem} for why it failed, and {@link started}). Asked again while an attempt
   * is in flight, it runs one more attempt after it, since what the first read may have changed since. A no-op once
   * started or terminating.
   */
  requestStart(): void {
    if (this.run !== undefined || this.terminating) return;
    if (this.setup !== undefined) {
      this.setupAgain = true;
      return;
    }
    this.setup = this.setUp().finally(() => {
      this.setup = undefined;
      if (this.setupAgain) {
        this.setupAgain = false;
        this.requestStart();
      }
    });
  }

  private async setUp(): Promise<void> {
    let problem: string | undefined;
    try {
      this.volumes = await resolveVolumes(this.ctx.cluster, this.pod, {
        root: this.ctx.root,
        serviceAccountToken: this.ctx.serviceAccountToken,
      });
      await mkdir(this.sandbox(), { recursive: true });
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    if (this.terminating) return;
    const first = !this.attempted;
    this.attempted = true;
    if (problem !== undefined) {
      // Only a new problem is worth a report; the same one again would only make the kubelet retry at once.
      const changed = problem !== this.volumeProblem;
      this.volumeProblem = problem;
      if (first || changed) this.ctx.notify();
      return;
    }
    this.volumeProblem = undefined;
    this.rt.sandboxReady = true;
    this.rt.podIPAssigned = true;
    this.run = this.runPod().catch((err: unknown) => {
      // Not expected: a bug in the simulation. Report the pod as failed rather than hang.
      this.volumeProblem = err instanceof Error ? err.message : String(err);
      this.rt.phase = 'Failed';
      this.rt.sandboxReady = false;
      this.ctx.notify();
    });
    this.ctx.notify();
  }

  /** The status to report for the pod as known now. */
  status(pod: Pod): Record<string, unknown> {
    return podStatus(pod, this.rt, timestamp());
  }

  /** A container's tracked record. */
  container(name: string): ContainerRecord | undefined {
    return this.rt.containers.find((c) => c.name === name);
  }

  /**
   * Kills every container (SIGTERM to its process group, SIGKILL after `graceMs`), starts nothing more, and
   * resolves once all processes are gone and the phase is settled.
   */
  async terminate(graceMs: number): Promise<void> {
    if (!this.terminating) {
      this.terminating = true;
      for (const c of this.rt.containers) c.stopping = true;
      this.killAll(graceMs);
    }
    // A setup attempt in flight starts nothing once terminating, but its directories must exist before removeDir.
    await this.setup;
    await this.run;
    this.stopped = true;
  }

  /** Whether {@link terminate} has finished: no process is left and the phase is settled. */
  get terminated(): boolean {
    return this.stopped;
  }

  /** Removes the pod's kubelet directory (its emptyDirs and written-out configMaps and secrets). */
  async removeDir(): Promise<void> {
    await removeTree(this.dir);
  }

  private killAll(graceMs: number, only?: (c: ContainerRecord) => boolean): void {
    for (const wake of [...this.wakers]) wake();
    const procs = only === undefined ? [...this.processes] : [...this.processes].filter((p) => only(this.ownerOf(p)));
    for (const p of procs) {
      if (graceMs <= 0) p.kill('SIGKILL');
      else {
        p.kill('SIGTERM');
        const t = setTimeout(() => p.kill('SIGKILL'), graceMs);
        t.unref();
        void p.done.then(() => clearTimeout(t));
      }
    }
  }

  private ownerOf(p: ContainerProcess): ContainerRecord {
    const c = this.owners.get(p);
    if (c === undefined) throw new Error('process without container');
    return c;
  }

  private sandbox(): string {
    return path.join(this.dir, 'sandbox');
  }

  /** Sleeps, or returns early when the pod is terminating. */
  private sleep(ms: number): Promise<void> {
    if (this.terminating) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        this.wakers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      // Waiting containers must not keep the process alive on their own; stop() wakes them.
      t.unref();
      this.wakers.add(done);
    });
  }

  private async runPod(): Promise<void> {
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    const supervisors: Promise<void>[] = [];
    for (const c of this.rt.containers.filter((x) => x.kind !== 'main')) {
      if (c.kind === 'sidecar') {
        supervisors.push(this.supervise(c, 'Always'));
        while (!c.everStarted && !c.stopping) await this.sleep(10);
        continue;
      }
      let ok = false;
      while (!ok && !c.stopping) {
        const code = await this.runOnce(c);
        ok = code === 0;
        if (ok || c.stopping) break;
        if (policy === 'Never') return this.finish('Failed', supervisors);
        await this.backOff(c);
      }
      if (this.terminating) return this.finish(undefined, supervisors);
    }
    const main = this.rt.containers.filter((x) => x.kind === 'main');
    await Promise.all(main.map((c) => this.supervise(c, policy)));
    return this.finish(undefined, supervisors);
  }

  /** Settles the phase (from the regular containers' exit codes unless given), stops sidecars, tears the sandbox down. */
  private async finish(phase: 'Succeeded' | 'Failed' | undefined, sidecars: Promise<void>[]): Promise<void> {
    for (const c of this.rt.containers) if (c.kind === 'sidecar') c.stopping = true;
    this.killAll(this.terminating ? 0 : 1000, (c) => c.kind === 'sidecar');
    await Promise.all(sidecars);
    const main = this.rt.containers.filter((c) => c.kind === 'main');
    const allSucceeded = main.every((c) => 'terminated' in c.state && c.state.terminated.exitCode === 0);
    this.rt.phase = phase ?? (allSucceeded ? 'Succeeded' : 'Failed');
    this.rt.sandboxReady = false;
    this.ctx.notify();
  }

  /** Runs a container until it may not restart any more. */
  private async supervise(c: ContainerRecord, policy: string): Promise<void> {
    while (!c.stopping) {
      const code = await this.runOnce(c);
      if (c.stopping || code === undefined) return;
      if (!(policy === 'Always' || (policy === 'OnFailure' && code !== 0))) return;
      await this.backOff(c);
    }
  }

  private async backOff(c: ContainerRecord): Promise<void> {
    const delay = Math.min(this.ctx.restartBackoffMs * 2 ** c.restartCount, this.ctx.maxRestartBackoffMs);
    c.lastState = c.state;
    const podName = `${this.pod.metadata.name ?? ''}_${this.pod.metadata.namespace ?? ''}(${this.uid})`;
    c.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${goDuration(delay)} restarting failed container=${c.name} pod=${podName}`,
      },
    };
    this.ctx.notify();
    await this.sleep(delay);
  }

  /** Starts one instance of a container and waits for it to end; `undefined` when it never started. */
  private async runOnce(c: ContainerRecord): Promise<number | undefined> {
    let config: ContainerConfig | undefined;
    while (config === undefined) {
      if (c.stopping) return undefined;
      try {
        config = await this.configure(c);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        c.state = {
          waiting: {
            reason: err instanceof ContainerConfigError ? 'CreateContainerConfigError' : 'CreateContainerError',
            message,
          },
        };
        this.ctx.notify();
        await this.sleep(this.ctx.restartBackoffMs);
      }
    }
    // Configuring waits for the disk: the pod may have been deleted meanwhile, and then the container never starts.
    if (c.stopping) return undefined;
    if (c.everStarted) c.restartCount += 1;
    const containerID = `sim://${randomBytes(32).toString('hex')}`;
    const startedAt = timestamp();
    const log = new LogBuffer(this.ctx.maxLogBytes);
    c.logs = [...c.logs.slice(-1), log];
    c.containerID = containerID;
    c.everStarted = true;
    c.state = { running: { startedAt } };
    if (c.kind === 'main' && this.rt.phase === 'Pending') this.rt.phase = 'Running';
    this.ctx.notify();
    let exit: ExitInfo;
    if (config.argv.length === 0) {
      // No command: the image's own process, which runs until the container is stopped.
      while (!c.stopping) await this.sleep(60_000);
      exit = { exitCode: 0 };
    } else {
      const proc = startProcess(config.argv, { cwd: config.cwd, env: config.env, log });
      this.processes.add(proc);
      this.owners.set(proc, c);
      if (c.stopping) proc.kill('SIGKILL');
      exit = await proc.done;
      this.processes.delete(proc);
      this.owners.delete(proc);
    }
    log.end();
    const terminated = {
      exitCode: exit.exitCode,
      reason: exit.startError !== undefined ? 'StartError' : exit.exitCode === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt: timestamp(),
      containerID,
    };
    const message = exit.startError ?? this.fallbackMessage(c, exit.exitCode, log);
    c.state = { terminated: message === undefined ? terminated : { ...terminated, message } };
    this.ctx.notify();
    return exit.exitCode;
  }

  /**
   * The terminated message of a failed container whose `terminationMessagePolicy` is `FallbackToLogsOnError`: the
   * kubelet's tail of its log (the last 80 lines, at most 2,048 bytes). `/dev/termination-log` is not simulated, so
   * the `File` policy gives no message.
   */
  private fallbackMessage(c: ContainerRecord, exitCode: number, log: LogBuffer): string | undefined {
    const spec = [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])].find(
      (x) => x.name === c.name,
    );
    if (spec?.terminationMessagePolicy !== 'FallbackToLogsOnError' || exitCode === 0) return undefined;
    const lines = log.text().split('\n');
    if (lines.at(-1) === '') lines.pop();
    const tail = Buffer.from(lines.slice(-80).join('\n'));
    const text = tail.subarray(Math.max(0, tail.length - 2048)).toString('utf8');
    return text === '' ? undefined : text;
  }

  /** Mounts, environment, command line and working directory of a container, paths mapped to the host. */
  private async configure(c: ContainerRecord): Promise<ContainerConfig> {
    const spec = [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])].find(
      (x) => x.name === c.name,
    );
    if (spec === undefined) throw new Error(`no container ${c.name}`);
    const vars = containerEnv(this.ctx.cluster, this.pod, spec, { hostIP: this.ctx.hostIP, podIP: this.rt.podIP });
    const mounts: MountMapping[] = [];
    const projected: { dir: string; files: ProjectedFile[] }[] = [];
    for (const m of spec.volumeMounts ?? []) {
      const vol = this.volumes.get(m.name);
      if (vol === undefined)
        throw new ContainerConfigError(`unable to find volume "${m.name}" for container ${c.name}`);
      const subPath = m.subPathExpr !== undefined ? expand(m.subPathExpr, vars) : (m.subPath ?? '');
      let base: string;
      if (vol.kind === 'host') base = vol.hostPath;
      else {
        base = path.join(this.dir, 'containers', c.name, `kubernetes.io~${vol.type}`, m.name);
        projected.push({ dir: base, files: vol.files });
      }
      const hostPath = subPath === '' ? base : path.join(base, path.posix.normalize(subPath));
      if (subPath !== '' && vol.kind === 'host' && !(await exists(hostPath)))
        await mkdir(hostPath, { recursive: true, mode: 0o755 });
      mounts.push({ containerPath: m.mountPath, hostPath });
    }
    const mapper = new PathMapper(mounts);
    for (const p of projected) await writeProjected(p.dir, p.files, mapper);
    const raw =
      (spec.command ?? []).length > 0 ? [...(spec.command ?? []), ...(spec.args ?? [])] : [...(spec.args ?? [])];
    const argv = raw.map((a) => mapper.rewrite(expand(a, vars)));
    const env: Record<string, string> = {
      ...this.ctx.baseEnv,
      HOSTNAME: this.pod.metadata.name ?? '',
      HOME: this.sandbox(),
    };
    for (const [k, v] of vars) env[k] = mapper.rewrite(v);
    const workingDir = spec.workingDir ?? '';
    const cwd =
      workingDir === ''
        ? this.sandbox()
        : (mapper.resolve(workingDir) ?? path.join(this.sandbox(), path.posix.resolve('/', workingDir)));
    await mkdir(cwd, { recursive: true });
    return { argv, env, cwd };
  }
}
