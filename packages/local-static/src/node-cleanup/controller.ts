/**
 * Upstream's `CleanupController` (`pkg/node-cleanup/controller`): when a Node is deleted, the claims bound to local
 * PVs pinned to it are warned about, and deleted once `--pvc-deletion-delay` has passed if the node has not come back,
 * so that a StatefulSet can make them again elsewhere.
 *
 * @module
 */
import type { KubeConfig, V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  apiStatus,
  describeError,
  isNotFound,
  makeCoreV1Calls,
  newRateLimitingQueue,
  noopMetrics,
  realClock,
  silentLogger,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type EventRecorder,
  type Informer,
  type Logger,
  type MetricsSink,
  type RateLimitingQueue,
  type Store,
  type TimerHandle,
} from '@kprov/provisioner-lib';
import { formatGoDuration } from '@kprov/provisioner-lib/runtime';
import { createNodeCleanupMetrics, type NodeCleanupMetrics } from './metrics.js';
import { anyNodeExists, anyNodeExistsNow } from './node-exists.js';
import { isLocalVolumeOfClass, pinnedNodeNames } from './node-names.js';

/** Reason of the Warning Event put on a claim whose PV's nodes are all gone. */
export const REFERENCED_NODE_DELETED = 'ReferencedNodeDeleted';
/** `--pvc-deletion-delay` default: 60 s. */
export const DEFAULT_PVC_DELETION_DELAY_MS = 60_000;
/** Name of the work queue of PVs waiting out the delay (the `name` label of its `workqueue_*` metrics). */
export const STALE_PV_QUEUE = 'stalePVQueue';

/**
 * How the worker left a PV: its claim deleted, or why not (upstream's re-checks, in their order): the PV is gone, it
 * is not pinned to named nodes, one of its nodes exists (again), it has no claim, the claim is gone (or already being
 * deleted), or the claim is no longer the one the PV was bound to.
 */
export type CleanupOutcome =
  'claim-deleted' | 'volume-gone' | 'not-pinned' | 'node-exists' | 'no-claim' | 'claim-gone' | 'claim-changed';

/** Options of {@link CleanupController}. */
export interface CleanupControllerOptions {
  /** How to reach the API server, for the checks made right before a delete and the delete itself. */
  kubeConfig: KubeConfig;
  /** The PV cache. */
  volumes: Store<V1PersistentVolume>;
  /** The PVC cache. */
  claims: Store<V1PersistentVolumeClaim>;
  /** The Node informer: its deletions start the timers; its cache must have the `hostname` index (see `nodeInformer`). */
  nodes: Informer<V1Node>;
  /** `--storageclass-names`: only local PVs of these classes are looked at. None: nothing is. */
  storageClassNames: readonly string[];
  /** Where the Warning Events go (source component `cleanup-controller`, as upstream). */
  recorder: EventRecorder;
  /** `--pvc-deletion-delay`, in ms. Default {@link DEFAULT_PVC_DELETION_DELAY_MS}. */
  pvcDeletionDelayMs?: number;
  /** kprov: look for PVs of deleted nodes again every this many ms (`--resync`), besides on Node deletions; 0: never. Default 0. */
  resyncMs?: number;
  /** Where the PVC counters go. Default discarded. */
  metrics?: NodeCleanupMetrics;
  /** Where the queue's `workqueue_*` metrics go. Default discarded. */
  queueMetrics?: MetricsSink;
  /** Time source of the delay, the retries and the resync. Default the real clock. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
  /** Called after the worker is done with a PV, with how it left it. Default none. */
  onSynced?: (pvName: string, outcome: CleanupOutcome) => void;
}

/** Whether `claim` is still the claim `pv` was bound to: it names the PV and has the UID of the PV's `claimRef`. */
function stillBound(pv: V1PersistentVolume, claim: V1PersistentVolumeClaim): boolean {
  return claim.spec?.volumeName === pv.metadata?.name && claim.metadata?.uid === pv.spec?.claimRef?.uid;
}

/**
 * The controller: {@link scan} on every Node deletion (and at the start) puts a Warning `ReferencedNodeDeleted` on
 * each claim bound to a local PV of an opted-in class whose nodes are all gone, and queues the PV for after the
 * delay; {@link run}'s workers then check again and delete the claim.
 */
export class CleanupController {
  private readonly core: CoreV1Calls;
  private readonly queue: RateLimitingQueue<string>;
  private readonly classes: ReadonlySet<string>;
  private readonly delayMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: NodeCleanupMetrics;
  /**
   * PVs waiting out the delay: the UID of the claim they were queued for (no second Event for it meanwhile) and when
   * its delay ends (the queue keeps the earlier time of a PV queued again, for another claim).
   */
  private readonly pending = new Map<string, { uid: string; dueMs: number }>();
  private running = false;

  constructor(private readonly options: CleanupControllerOptions) {
    this.core = makeCoreV1Calls(options.kubeConfig);
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? createNodeCleanupMetrics();
    this.classes = new Set(options.storageClassNames);
    this.delayMs = options.pvcDeletionDelayMs ?? DEFAULT_PVC_DELETION_DELAY_MS;
    this.queue = newRateLimitingQueue<string>({
      name: STALE_PV_QUEUE,
      clock: this.clock,
      metrics: options.queueMetrics ?? noopMetrics,
    });
    options.nodes.addEventHandler({
      delete: () => {
        if (this.running) this.scan();
      },
    });
  }

  /** How many times the worker has put PV `name` back for a retry since it was last done with it. */
  requeues(name: string): number {
    return this.queue.numRequeues(name);
  }

  /**
   * Upstream's `startCleanupTimersIfNeeded`: for each local PV of an opted-in class, pinned to nodes that are all
   * gone, with a claim, not already waiting: the Warning Event on the claim, and the PV queued for after the delay.
   */
  scan(): void {
    for (const pv of this.options.volumes.list()) {
      if (!isLocalVolumeOfClass(pv, this.classes)) continue;
      const name = pv.metadata?.name ?? '';
      const nodeNames = pinnedNodeNames(pv);
      if (nodeNames === undefined) {
        this.logger.debug({ pv: name }, 'PV is not pinned to named nodes, leaving it');
        continue;
      }
      const ref = pv.spec?.claimRef;
      if (ref === undefined) continue;
      if (anyNodeExists(this.options.nodes.store, nodeNames)) continue;
      const uid = ref.uid ?? '';
      if (this.pending.get(name)?.uid === uid) continue;
      this.pending.set(name, { uid, dueMs: this.clock.now() + this.delayMs });
      const delay = formatGoDuration(this.delayMs);
      this.logger.info(
        { pv: name, claim: `${ref.namespace ?? ''}/${ref.name ?? ''}`, nodes: nodeNames, delay },
        'Starting timer for resource deletion',
      );
      this.options.recorder.event(
        {
          kind: ref.kind ?? 'PersistentVolumeClaim',
          apiVersion: ref.apiVersion ?? 'v1',
          namespace: ref.namespace ?? '',
          name: ref.name ?? '',
          uid,
          ...(ref.resourceVersion === undefined ? {} : { resourceVersion: ref.resourceVersion }),
        },
        'Warning',
        REFERENCED_NODE_DELETED,
        `PVC is tied to a deleted Node. PVC will be cleaned up in ${delay} if the Node doesn't come back`,
      );
      this.queue.addAfter(name, this.delayMs);
    }
  }

  /**
   * Starts `workers` workers, looks for PVs of deleted nodes once (and every `resyncMs`), and from then on on every
   * Node deletion; resolves once `signal` aborted and the workers stopped. Call it once the caches have synced.
   */
  async run(signal: AbortSignal, workers: number): Promise<void> {
    this.running = true;
    const loops = Array.from({ length: workers }, () => this.worker(signal));
    this.scan();
    let resync: { handle: TimerHandle } | undefined;
    const schedule = (): void => {
      const ms = this.options.resyncMs ?? 0;
      if (ms <= 0 || signal.aborted) return;
      resync = {
        handle: this.clock.setTimeout(() => {
          this.scan();
          schedule();
        }, ms),
      };
    };
    schedule();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.running = false;
    if (resync !== undefined) this.clock.clearTimeout(resync.handle);
    this.queue.shutDown();
    await Promise.all(loops);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      const name = next.item;
      try {
        if (signal.aborted) continue;
        // Queued again for a claim bound since: that claim gets its whole delay too.
        const early = (this.pending.get(name)?.dueMs ?? 0) - this.clock.now();
        if (early > 0) {
          this.queue.addAfter(name, early);
          continue;
        }
        const outcome = await this.sync(name, signal);
        this.queue.forget(name);
        this.pending.delete(name);
        this.options.onSynced?.(name, outcome);
      } catch (err) {
        if (signal.aborted) continue;
        this.logger.error({ pv: name, err: describeError(err) }, 'Error syncing PV, requeuing');
        this.queue.addRateLimited(name);
      } finally {
        this.queue.done(name);
      }
    }
  }

  /** Upstream's `syncHandler`, its checks made on the caches, then again on the API server right before the delete. */
  private async sync(name: string, signal: AbortSignal): Promise<CleanupOutcome> {
    const pv = this.options.volumes.get(name);
    if (pv === undefined) {
      this.logger.info({ pv: name }, 'PV in queue no longer exists');
      return 'volume-gone';
    }
    const nodeNames = pinnedNodeNames(pv);
    if (nodeNames === undefined) return 'not-pinned';
    if (anyNodeExists(this.options.nodes.store, nodeNames)) return 'node-exists';
    const ref = pv.spec?.claimRef;
    if (ref === undefined) return 'no-claim';
    const claim = this.options.claims.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`);
    if (claim === undefined) {
      this.logger.info({ claim: `${ref.namespace ?? ''}/${ref.name ?? ''}` }, 'PVC no longer exists');
      return 'claim-gone';
    }
    if (!stillBound(pv, claim)) {
      this.logger.info(
        { claim: claim.metadata?.name, pv: name },
        "Original bond between PVC and PV was severed. The original objects don't reference each other",
      );
      return 'claim-changed';
    }
    return this.deleteClaim(name, nodeNames, signal);
  }

  /**
   * kprov: the checks once more against the API server, as late as can be, then the delete with the claim's UID and
   * resourceVersion as preconditions: a node created again, a PV bound anew or a claim changed since the caches saw
   * them stops the delete (a changed claim fails the precondition and is looked at again). Upstream deletes on the
   * caches' word, with the UID precondition only.
   */
  private async deleteClaim(name: string, nodeNames: string[], signal: AbortSignal): Promise<CleanupOutcome> {
    let pv: V1PersistentVolume;
    try {
      pv = await this.core.readPersistentVolume({ name }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return 'volume-gone';
      throw err;
    }
    const ref = pv.spec?.claimRef;
    if (ref === undefined) return 'no-claim';
    if (await anyNodeExistsNow(this.core, nodeNames, signal)) return 'node-exists';
    const namespace = ref.namespace ?? '';
    const claimName = ref.name ?? '';
    let claim: V1PersistentVolumeClaim;
    try {
      claim = await this.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return 'claim-gone';
      throw err;
    }
    if (claim.metadata?.deletionTimestamp !== undefined) return 'claim-gone';
    if (!stillBound(pv, claim)) return 'claim-changed';
    try {
      await this.core.deleteNamespacedPersistentVolumeClaim(
        {
          name: claimName,
          namespace,
          body: {
            preconditions: {
              ...(claim.metadata?.uid === undefined ? {} : { uid: claim.metadata.uid }),
              ...(claim.metadata?.resourceVersion === undefined
                ? {}
                : { resourceVersion: claim.metadata.resourceVersion }),
            },
          },
        },
        withSignal(signal),
      );
    } catch (err) {
      if (isNotFound(err)) {
        this.logger.info({ claim: `${namespace}/${claimName}` }, 'PVC no longer exists');
        return 'claim-gone';
      }
      if (signal.aborted) throw err;
      if (apiStatus(err)?.code === 409) {
        this.logger.info({ claim: `${namespace}/${claimName}` }, 'PVC changed since it was looked at; looking again');
        throw err;
      }
      this.metrics.claimDeleteFailed.inc({});
      this.logger.error({ claim: `${namespace}/${claimName}`, err: describeError(err) }, 'Failed to delete PVC');
      throw err;
    }
    this.metrics.claimDelete.inc({});
    this.logger.info(
      { claim: `${namespace}/${claimName}`, pv: name, nodes: nodeNames },
      'Deleted PVC that pointed to non-existent Nodes',
    );
    return 'claim-deleted';
  }
}
