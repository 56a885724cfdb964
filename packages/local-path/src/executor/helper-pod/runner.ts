/**
 * Runs a helper pod to completion: creates it (replacing a leftover of the same name, unless the leftover records
 * another provisioner), watches it until it Succeeded, Failed or `cmdTimeoutSeconds` elapsed, then always deletes it.
 *
 * Fix over upstream, which only ever notices `Succeeded` and so waits out the whole timeout when the script fails:
 * a `Failed` pod fails at once, and the error carries the exit code and the last lines of the pod's log.
 *
 * @module
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import {
  apiStatus,
  describeError,
  isAlreadyExists,
  isNotFound,
  makeCoreV1Calls,
  realClock,
  silentLogger,
  sleep,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type Logger,
} from '@kprov/provisioner-lib';
import { lastLines } from '../output.js';
import { ANNOTATION_PROVISIONER, madeByAnotherProvisioner } from './labels.js';
import { waitForPod } from './pod-watch.js';

/** Default interval between two looks at a leftover helper pod that is being deleted, in ms. */
export const DEFAULT_POLL_INTERVAL_MS = 200;

/** The helper pod ended in phase `Failed`; `logTail` holds its last log lines. */
export class HelperPodFailedError extends Error {
  override readonly name = 'HelperPodFailedError';
  constructor(
    message: string,
    /** `namespace/name` of the helper pod. */
    readonly pod: string,
    /** The last log lines (up to `FAILED_LOG_LINES`). */
    readonly logTail: readonly string[],
  ) {
    super(message);
  }
}

/** The helper pod did not finish within `cmdTimeoutSeconds` (upstream's `<action> process timeout after <N> seconds`). */
export class HelperPodTimeoutError extends Error {
  override readonly name = 'HelperPodTimeoutError';
}

/** Options of {@link HelperPodRunner}. */
export interface HelperPodRunnerOptions {
  /** How to reach the API server: requests go through `makeCoreV1Calls`, the pod is watched through a `RestClient`. */
  readonly kubeConfig: KubeConfig;
  readonly logger?: Logger | undefined;
  /**
   * Interval between two looks at a leftover pod of the same name while it is being deleted, in ms (the helper pod
   * itself is watched). Default {@link DEFAULT_POLL_INTERVAL_MS}.
   */
  readonly pollIntervalMs?: number | undefined;
  /** Time source (tests). Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** What to run. */
export interface HelperPodRun {
  /** The built helper pod (`buildHelperPod`): name and namespace set. */
  readonly pod: V1Pod;
  /** Limit on the wait, in seconds (`cmdTimeoutSeconds`). */
  readonly timeoutSeconds: number;
  /** Aborts the wait (the pod is still deleted). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Leave a pod that Succeeded in place (its log is still logged): the caller deletes it once the result is saved,
   * so that a crash in between leaves a record of the operation. A pod that failed or timed out is always deleted.
   */
  readonly keepOnSuccess?: boolean | undefined;
}

/** A log, or why it could not be read. */
type LogRead = { readonly text: string } | { readonly error: string };

/** The phase and, for a failed pod, what its first container reported. */
function outcome(pod: V1Pod): string {
  const status = pod.status?.containerStatuses?.[0];
  const terminated = status?.state?.terminated;
  if (terminated === undefined) return pod.status?.message ?? pod.status?.reason ?? 'no container status';
  const reason = terminated.reason === undefined ? '' : ` (${terminated.reason})`;
  return `container ${status?.name ?? ''} exited with code ${terminated.exitCode}${reason}`;
}

/**
 * What to show of a failed pod whose log is empty or unreadable: why the log could not be read, then the first
 * container's terminated message (the kubelet's copy of `terminationMessagePath`, or of the log's tail with
 * `terminationMessagePolicy: FallbackToLogsOnError`).
 */
function withTerminationMessage(pod: V1Pod, logs: LogRead): string {
  const message = lastLines(pod.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '');
  const shown = message.length === 0 ? '' : `the container's terminated message:\n${message.join('\n')}`;
  if ('error' in logs) return `could not read the log: ${logs.error}${shown === '' ? '' : `; ${shown}`}`;
  return shown === '' ? 'no log output' : `no log output; ${shown}`;
}

/** Creates, waits for and deletes helper pods through the API. */
export class HelperPodRunner {
  private readonly kubeConfig: KubeConfig;
  private readonly core: CoreV1Calls;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly clock: Clock;
  /** `namespace/name` of the pods a {@link run} of this runner is busy with. */
  private readonly running = new Set<string>();

  constructor(options: HelperPodRunnerOptions) {
    this.kubeConfig = options.kubeConfig;
    this.core = makeCoreV1Calls(options.kubeConfig);
    this.logger = options.logger ?? silentLogger;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.clock = options.clock ?? realClock;
  }

  /** Whether a {@link run} of this runner is busy with the pod `namespace/name` (creating, waiting or deleting it). */
  isRunning(namespace: string, name: string): boolean {
    return this.running.has(`${namespace}/${name}`);
  }

  /**
   * Runs the pod: resolves when it Succeeded; throws a {@link HelperPodFailedError} as soon as it Failed, a
   * {@link HelperPodTimeoutError} (`<action> process timeout after <N> seconds`, `create` for both actions as
   * upstream) when `timeoutSeconds` elapse first, the signal's reason when aborted, or the API error. The pod's log
   * is logged and the pod deleted in every case, including when the create request itself was aborted or failed (it
   * may still have reached the server).
   */
  async run(run: HelperPodRun): Promise<void> {
    const name = run.pod.metadata?.name ?? '';
    const namespace = run.pod.metadata?.namespace ?? '';
    const key = `${namespace}/${name}`;
    if (this.running.has(key)) throw new Error(`helper pod ${key} is already being run`);
    this.running.add(key);
    try {
      await this.runOnce(run, name, namespace);
    } finally {
      this.running.delete(key);
    }
  }

  private async runOnce(run: HelperPodRun, name: string, namespace: string): Promise<void> {
    const signal = run.signal ?? new AbortController().signal;
    const log = this.logger.child({ helperPod: `${namespace}/${name}` });
    const deadline = this.clock.now() + run.timeoutSeconds * 1000;
    // Set once a create request may have reached the server: an aborted or failed request can still have created
    // the pod, so from then on the pod is cleaned up whatever happens.
    let attempted = false;
    let succeeded = false;
    let logs: LogRead | undefined;
    try {
      log.info({}, `create the helper pod ${name} into ${namespace}`);
      let created: V1Pod;
      for (let attempt = 1; ; attempt++) {
        try {
          attempted = true;
          created = await this.core.createNamespacedPod({ namespace, body: run.pod }, withSignal(signal));
          break;
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          // This request created nothing: the pod of that name is a leftover of an earlier attempt (or a racing one, or
          // another provisioner's), not this run's to log or delete. Remove it (unless another's) and try again.
          attempted = false;
          if (attempt >= 3) throw err;
          await this.removeLeftover(run.pod, deadline, signal);
        }
      }
      const pod = await waitForPod({
        kubeConfig: this.kubeConfig,
        core: this.core,
        namespace,
        name,
        resourceVersion: created.metadata?.resourceVersion,
        until: (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed',
        deadline,
        onTimeout: () => new HelperPodTimeoutError(`create process timeout after ${run.timeoutSeconds} seconds`),
        signal,
        clock: this.clock,
        logger: log,
      });
      if (pod.status?.phase === 'Failed') {
        logs = await this.readLog(run.pod, log);
        const tail = 'text' in logs ? lastLines(logs.text) : [];
        const shown =
          tail.length > 0 ? `last ${tail.length} log lines:\n${tail.join('\n')}` : withTerminationMessage(pod, logs);
        throw new HelperPodFailedError(
          `helper pod ${namespace}/${name} failed: ${outcome(pod)}; ${shown}`,
          `${namespace}/${name}`,
          tail,
        );
      }
      succeeded = true;
    } finally {
      if (attempted) await this.finish(run.pod, logs, log, !(succeeded && run.keepOnSuccess === true));
    }
  }

  /**
   * Deletes a helper pod (one kept by `keepOnSuccess`, or a leftover), unless a {@link run} is busy with it. A pod
   * that is already gone is fine; other errors are thrown.
   */
  async remove(namespace: string, name: string, signal?: AbortSignal): Promise<void> {
    if (this.isRunning(namespace, name)) return;
    try {
      await this.core.deleteNamespacedPod(
        { name, namespace, gracePeriodSeconds: 0 },
        withSignal(signal ?? new AbortController().signal),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Deletes a pod of the same name as `pod` left from an earlier attempt and waits until it is gone. A leftover that
   * records another provisioner than `pod` (`labels.ts`) is that provisioner's: it is not deleted, the run fails. One
   * that records none (made by an earlier version) is deleted, as before.
   */
  private async removeLeftover(pod: V1Pod, deadline: number, signal: AbortSignal): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const leftover = await this.readPod(name, namespace, signal);
    if (leftover === undefined) return;
    if (madeByAnotherProvisioner(leftover, pod.metadata?.annotations?.[ANNOTATION_PROVISIONER])) {
      const owner = leftover.metadata?.annotations?.[ANNOTATION_PROVISIONER] ?? '';
      throw new Error(`helper pod ${namespace}/${name} already exists and belongs to the provisioner ${owner}`);
    }
    // Only the pod that was checked: one made again since is looked at by the next attempt. With a body, the API
    // server reads the delete options from it alone (its query parameters are ignored): the grace period goes there.
    const uid = leftover.metadata?.uid;
    try {
      await this.core.deleteNamespacedPod(
        { name, namespace, body: { gracePeriodSeconds: 0, ...(uid === undefined ? {} : { preconditions: { uid } }) } },
        withSignal(signal),
      );
      this.logger.info({ pod: `${namespace}/${name}` }, 'Deleted a leftover helper pod');
    } catch (err) {
      if (isNotFound(err) || apiStatus(err)?.code === 409) return;
      throw err;
    }
    for (;;) {
      const current = await this.readPod(name, namespace, signal);
      if (current === undefined || current.metadata?.uid !== uid) return;
      if (this.clock.now() >= deadline)
        throw new HelperPodTimeoutError(`leftover helper pod ${namespace}/${name} is still being deleted`);
      await sleep(this.clock, this.pollIntervalMs, signal);
    }
  }

  /** The pod, or `undefined` when there is none; other errors are thrown. */
  private async readPod(name: string, namespace: string, signal: AbortSignal): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name, namespace }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The first container's log, or why it could not be read (logged, unless the pod is gone). */
  private async readLog(pod: V1Pod, log: Logger): Promise<LogRead> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const container = pod.spec?.containers[0]?.name;
    try {
      return {
        text: await this.core.readNamespacedPodLog({
          name,
          namespace,
          ...(container === undefined ? {} : { container }),
        }),
      };
    } catch (err) {
      if (!isNotFound(err)) log.warn({ err: describeError(err) }, `failed to save ${name} logs: ${describeError(err)}`);
      return { error: describeError(err) };
    }
  }

  /** Logs the pod's output (reading it when not read yet) and, when `remove`, deletes the pod; errors are only logged. */
  private async finish(pod: V1Pod, logs: LogRead | undefined, log: Logger, remove: boolean): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const read = logs ?? (await this.readLog(pod, log));
    if ('text' in read && read.text !== '') {
      log.info({}, `Start of ${name} logs`);
      for (const line of read.text.split('\n')) if (line !== '') log.info({}, line);
      log.info({}, `End of ${name} logs`);
    }
    if (!remove) return;
    try {
      await this.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    } catch (err) {
      if (!isNotFound(err))
        log.error({ err: describeError(err) }, `unable to delete the helper pod: ${describeError(err)}`);
    }
  }
}
