/**
 * Waits for one pod to reach a state, through a watch of that pod alone (field selector `metadata.name`), so a
 * helper pod's end is seen the moment the kubelet reports it, at the cost of one request (a watch from the
 * resourceVersion its create returned; a list+watch only if that watch cannot be resumed) however long the script
 * runs. Upstream polls the pod every second instead, which spends the client's QPS budget
 * (5 per second by default) on every helper pod in flight.
 *
 * @module
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import {
  realClock,
  RestClient,
  silentLogger,
  Watcher,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type Logger,
} from '@kprov/provisioner-lib';

/** The pod was deleted (or never existed) before it reached the awaited state. */
export class PodGoneError extends Error {
  override readonly name = 'PodGoneError';
}

/** What {@link waitForPod} needs. */
export interface WaitForPodOptions {
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Calls;
  readonly namespace: string;
  readonly name: string;
  /** Watch from this resourceVersion (e.g. the create response's) instead of listing first. Default: list first. */
  readonly resourceVersion?: string | undefined;
  /** True for the state awaited (e.g. phase Succeeded or Failed). */
  readonly until: (pod: V1Pod) => boolean;
  /** Give up at this time of `clock` (ms), rejecting with `onTimeout()`. */
  readonly deadline: number;
  readonly onTimeout: () => Error;
  /** Stops the wait, rejecting with the signal's reason. */
  readonly signal: AbortSignal;
  /** Time source of the deadline and the watch's backoff. Default the real clock. */
  readonly clock?: Clock | undefined;
  /** For the watch's restarts. Default silent. */
  readonly logger?: Logger | undefined;
}

/**
 * Resolves with the pod once `until(pod)` holds. Rejects with a {@link PodGoneError} when the pod is deleted or not
 * found, with `onTimeout()` at the deadline, or with the signal's reason when aborted. The watch restarts by itself
 * (the library's `Watcher`) when the connection drops.
 */
export async function waitForPod(options: WaitForPodOptions): Promise<V1Pod> {
  const { core, namespace, name } = options;
  const clock = options.clock ?? realClock;
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(options.signal.reason);
  options.signal.addEventListener('abort', onAbort, { once: true });
  const timer = clock.setTimeout(() => stop.abort(options.onTimeout()), Math.max(0, options.deadline - clock.now()));
  if (options.signal.aborted) onAbort();
  let reached: V1Pod | undefined;
  let listed = false;
  const fieldSelector = `metadata.name=${name}`;
  const watcher = new Watcher<V1Pod>({
    list: (p, signal) =>
      core.listNamespacedPod(
        { namespace, fieldSelector, limit: p.limit, ...(p.continue === undefined ? {} : { _continue: p.continue }) },
        withSignal(signal),
      ),
    watch: new RestClient(options.kubeConfig),
    path: `/api/v1/namespaces/${namespace}/pods`,
    fieldSelector,
    ...(options.resourceVersion === undefined ? {} : { resourceVersion: options.resourceVersion }),
    clock,
    logger: options.logger ?? silentLogger,
  });
  const consider = (pod: V1Pod): void => {
    if (reached === undefined && options.until(pod)) {
      reached = pod;
      stop.abort();
    }
  };
  try {
    await watcher.run((event) => {
      switch (event.type) {
        case 'Init':
          listed = false;
          break;
        case 'InitApply':
          listed = true;
          consider(event.object);
          break;
        case 'InitDone':
          if (!listed && reached === undefined) stop.abort(new PodGoneError(`pod ${namespace}/${name} does not exist`));
          break;
        case 'Apply':
          consider(event.object);
          break;
        case 'Delete':
          if (reached === undefined) stop.abort(new PodGoneError(`pod ${namespace}/${name} was deleted`));
          break;
      }
    }, stop.signal);
  } finally {
    clock.clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
  if (reached !== undefined) return reached;
  throw stop.signal.reason as Error;
}
