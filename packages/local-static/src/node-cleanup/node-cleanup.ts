/**
 * The node-cleanup controller as upstream's `cmd/node-cleanup` puts it together: PV, PVC and Node informers, the
 * {@link CleanupController} and the {@link StaleVolumeDeleter}, and the Event recorder.
 *
 * @module
 */
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import {
  EventRecorder,
  informerFor,
  noopMetrics,
  realClock,
  silentLogger,
  type Clock,
  type Informer,
  type Logger,
  type MetricsSink,
} from '@kprov/provisioner-lib';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { CleanupController, DEFAULT_PVC_DELETION_DELAY_MS, type CleanupOutcome } from './controller.js';
import { DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS, StaleVolumeDeleter } from './deleter.js';
import { createNodeCleanupMetrics } from './metrics.js';
import { nodeInformer } from './node-informer.js';

/** Source component of the controller's Events, as upstream's. */
export const NODE_CLEANUP_COMPONENT = 'cleanup-controller';
/** `--resync` default: 10 min. */
export const DEFAULT_RESYNC_MS = 600_000;
/** `--worker-threads` default: 10. */
export const DEFAULT_NODE_CLEANUP_WORKERS = 10;

/** The longest delay a Node.js timer takes (about 24.8 days). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Options of {@link NodeCleanup}; each default is upstream's flag default. */
export interface NodeCleanupOptions {
  /** How to reach the API server. */
  kubeConfig: KubeConfig;
  /** `--storageclass-names`: the StorageClasses whose local PVs (and their claims) may be cleaned up. None: nothing is. */
  storageClassNames: readonly string[];
  /** `--pvc-deletion-delay`, in ms. Default 60 s. */
  pvcDeletionDelayMs?: number;
  /** `--stale-pv-discovery-interval`, in ms. Default 10 s. */
  staleVolumeDiscoveryIntervalMs?: number;
  /** `--resync`, in ms: how often PVs of deleted nodes are looked for besides on Node deletions; 0: never. Default 10 min. */
  resyncMs?: number;
  /** `--worker-threads`. Default 10. */
  workers?: number;
  /** Where the four metrics, the work queue's and the Event recorder's go. Default discarded. */
  metrics?: MetricsSink;
  /** Time source of everything timed. Default the real clock. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
  /** Called after the worker is done with a PV, with how it left it. Default none. */
  onSynced?: (pvName: string, outcome: CleanupOutcome) => void;
}

/** The controller and the deleter over shared caches; {@link run} runs them. */
export class NodeCleanup {
  /** The PV cache. */
  readonly volumes: Informer<V1PersistentVolume>;
  /** The PVC cache. */
  readonly claims: Informer<V1PersistentVolumeClaim>;
  /** The Node cache (names and labels only). */
  readonly nodes: Informer<V1Node>;
  /** The stale PV deleter. */
  readonly deleter: StaleVolumeDeleter;
  private readonly recorder: EventRecorder;
  /** The claim controller. */
  readonly controller: CleanupController;
  private synced = false;

  constructor(private readonly options: NodeCleanupOptions) {
    const clock = options.clock ?? realClock;
    const logger = options.logger ?? silentLogger;
    const sink = options.metrics ?? noopMetrics;
    const metrics = createNodeCleanupMetrics(sink);
    const timing = { clock, logger, stripManagedFields: true };
    this.volumes = informerFor(options.kubeConfig, 'PersistentVolume', timing);
    this.claims = informerFor(options.kubeConfig, 'PersistentVolumeClaim', timing);
    this.nodes = nodeInformer(options.kubeConfig, { clock, logger });
    this.recorder = new EventRecorder({
      kubeConfig: options.kubeConfig,
      source: { component: NODE_CLEANUP_COMPONENT },
      logger,
      metrics: sink,
      clock,
    });
    this.controller = new CleanupController({
      kubeConfig: options.kubeConfig,
      volumes: this.volumes.store,
      claims: this.claims.store,
      nodes: this.nodes,
      storageClassNames: options.storageClassNames,
      recorder: this.recorder,
      pvcDeletionDelayMs: options.pvcDeletionDelayMs ?? DEFAULT_PVC_DELETION_DELAY_MS,
      resyncMs: options.resyncMs ?? DEFAULT_RESYNC_MS,
      metrics,
      queueMetrics: sink,
      clock,
      logger,
      ...(options.onSynced === undefined ? {} : { onSynced: options.onSynced }),
    });
    this.deleter = new StaleVolumeDeleter({
      kubeConfig: options.kubeConfig,
      volumes: this.volumes.store,
      nodes: this.nodes.store,
      storageClassNames: options.storageClassNames,
      metrics,
      clock,
      logger,
    });
  }

  /** Whether the three caches have synced (the controller and the deleter run from then on). */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Starts the informers; once all three have synced (kprov: upstream starts the deleter before, when a PV cache
   * filled ahead of the Node cache makes every node look deleted), runs the controller and the deleter until
   * `signal` aborts, then waits for them, the informers and the queued Events, and resolves. `onStarted` is called
   * once they run.
   */
  async run(signal: AbortSignal, onStarted?: () => void): Promise<void> {
    // Every timer of the library is unref'd, and nothing else may hold the process open (no metrics server, the API
    // server unreachable): this ref'd timer keeps it alive until the run ends (it measures no time, runs no code).
    const hold = setInterval(() => undefined, MAX_TIMER_DELAY_MS);
    // Aborted when the run ends whatever the reason, so that the informers stop with it.
    const end = new AbortController();
    const stop = AbortSignal.any([signal, end.signal]);
    const informers = [this.volumes.run(stop), this.claims.run(stop), this.nodes.run(stop)];
    try {
      await Promise.all([this.volumes.waitForSync(stop), this.claims.waitForSync(stop), this.nodes.waitForSync(stop)]);
      this.synced = true;
      const running = [
        this.controller.run(stop, this.options.workers ?? DEFAULT_NODE_CLEANUP_WORKERS),
        this.deleter.run(stop, this.options.staleVolumeDiscoveryIntervalMs ?? DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS),
      ];
      onStarted?.();
      await Promise.all(running);
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      end.abort();
      await Promise.all(informers);
      this.recorder.shutDown();
      await this.recorder.flush();
      clearInterval(hold);
    }
  }
}
