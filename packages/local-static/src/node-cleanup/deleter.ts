/**
 * Upstream's node-cleanup `Deleter` (`pkg/node-cleanup/deleter`): every `--stale-pv-discovery-interval`, the local
 * PVs of opted-in classes whose nodes are all gone are deleted when nothing uses them: `Available` ones, and
 * `Released` ones with reclaim policy `Delete`. The disks went with their nodes; nothing is cleaned.
 *
 * @module
 */
import type { KubeConfig, V1Node, V1PersistentVolume } from '@kubernetes/client-node';
import {
  apiStatus,
  describeError,
  isNotFound,
  makeCoreV1Calls,
  realClock,
  silentLogger,
  sleep,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type Logger,
  type Store,
} from '@kprov/provisioner-lib';
import { createNodeCleanupMetrics, type NodeCleanupMetrics } from './metrics.js';
import { anyNodeExists, anyNodeExistsNow } from './node-exists.js';
import { isLocalVolumeOfClass, pinnedNodeNames } from './node-names.js';

/** `--stale-pv-discovery-interval` default: 10 s. */
export const DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS = 10_000;

/** Options of {@link StaleVolumeDeleter}. */
export interface StaleVolumeDeleterOptions {
  /** How to reach the API server. */
  kubeConfig: KubeConfig;
  /** The PV cache. */
  volumes: Store<V1PersistentVolume>;
  /** The Node cache, with the `hostname` index (see `nodeInformer`). */
  nodes: Store<V1Node>;
  /** `--storageclass-names`: only local PVs of these classes are looked at. None: nothing is. */
  storageClassNames: readonly string[];
  /** Where the PV counters go. Default discarded. */
  metrics?: NodeCleanupMetrics;
  /** Time source of the pause between passes. Default the real clock. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
}

/** Whether upstream deletes a PV of deleted nodes in this state: `Available`, or `Released` with policy `Delete`. */
function deletable(pv: V1PersistentVolume): boolean {
  const phase = pv.status?.phase;
  return phase === 'Available' || (phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete');
}

/** The deleter: {@link deleteVolumes} is one pass, {@link run} the loop. */
export class StaleVolumeDeleter {
  private readonly core: CoreV1Calls;
  private readonly classes: ReadonlySet<string>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: NodeCleanupMetrics;
  private passes = 0;

  constructor(private readonly options: StaleVolumeDeleterOptions) {
    this.core = makeCoreV1Calls(options.kubeConfig);
    this.classes = new Set(options.storageClassNames);
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? createNodeCleanupMetrics();
  }

  /** Passes completed since the start. */
  get completedPasses(): number {
    return this.passes;
  }

  /** Runs a pass, then pauses `intervalMs`, until `signal` aborts. Call it once the caches have synced. */
  async run(signal: AbortSignal, intervalMs: number): Promise<void> {
    while (!signal.aborted) {
      await this.deleteVolumes(signal);
      try {
        await sleep(this.clock, intervalMs, signal);
      } catch {
        // Stopped.
      }
    }
    this.logger.info({}, 'Deleter stopped');
  }

  /** One pass of upstream's `DeletePVs`. */
  async deleteVolumes(signal: AbortSignal): Promise<void> {
    for (const pv of this.options.volumes.list()) {
      if (signal.aborted) return;
      if (!isLocalVolumeOfClass(pv, this.classes)) continue;
      // Already being deleted (upstream deletes it again at every pass, and counts each).
      if (pv.metadata?.deletionTimestamp !== undefined) continue;
      const nodeNames = pinnedNodeNames(pv);
      if (nodeNames === undefined || anyNodeExists(this.options.nodes, nodeNames)) continue;
      if (!deletable(pv)) continue;
      await this.deleteVolume(pv, nodeNames, signal);
    }
    this.passes++;
  }

  /**
   * Deletes one stale PV. kprov: its nodes are looked up on the API server first (a node back again owns its PV: the
   * main provisioner cleans a released one, which a delete here would publish again uncleaned), and the delete has
   * the cached PV's UID and resourceVersion as preconditions, so a PV bound (or otherwise changed) since the cache saw
   * it is not deleted, only looked at again next pass.
   */
  private async deleteVolume(pv: V1PersistentVolume, nodeNames: string[], signal: AbortSignal): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const phase = pv.status?.phase ?? '';
    try {
      if (await anyNodeExistsNow(this.core, nodeNames, signal)) return;
    } catch (err) {
      if (!signal.aborted)
        this.logger.error({ pv: name, err: describeError(err) }, 'Could not tell whether the nodes of the PV exist');
      return;
    }
    this.logger.info(
      { pv: name, nodes: nodeNames, phase },
      'Attempting to delete PV that has NodeAffinity to deleted Node',
    );
    try {
      await this.core.deletePersistentVolume(
        {
          name,
          body: {
            preconditions: {
              ...(pv.metadata?.uid === undefined ? {} : { uid: pv.metadata.uid }),
              ...(pv.metadata?.resourceVersion === undefined ? {} : { resourceVersion: pv.metadata.resourceVersion }),
            },
          },
        },
        withSignal(signal),
      );
    } catch (err) {
      if (signal.aborted) return;
      if (isNotFound(err)) {
        this.logger.warn({ pv: name }, 'PV no longer exists');
        return;
      }
      if (apiStatus(err)?.code === 409) {
        this.logger.info({ pv: name }, 'PV changed since it was looked at; looking again next pass');
        return;
      }
      this.metrics.volumeDeleteFailed.inc({ phase });
      this.logger.error({ pv: name, err: describeError(err) }, 'Error deleting PV');
      return;
    }
    this.metrics.volumeDelete.inc({ phase });
  }
}
