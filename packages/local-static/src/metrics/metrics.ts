/**
 * Upstream's twelve metrics, same names, types, labels and help, and kprov's count of cleanup attempts, reported to a
 * {@link MetricsSink} (the binary gives a prom-client one).
 *
 * @module
 */
import {
  DEFAULT_BUCKETS,
  noopMetrics,
  type Counter,
  type Gauge,
  type Histogram,
  type MetricsSink,
} from '@kprov/provisioner-lib';

/** Prefix of every metric name (upstream's subsystem). */
export const METRICS_SUBSYSTEM = 'local_volume_provisioner';

/** The metric names. */
export const METRIC_NAMES = {
  capacity: `${METRICS_SUBSYSTEM}_persistentvolume_capacity_bytes`,
  discovery: `${METRICS_SUBSYSTEM}_persistentvolume_discovery_total`,
  discoveryDuration: `${METRICS_SUBSYSTEM}_persistentvolume_discovery_duration_seconds`,
  delete: `${METRICS_SUBSYSTEM}_persistentvolume_delete_total`,
  deleteFailed: `${METRICS_SUBSYSTEM}_persistentvolume_delete_failed_total`,
  deleteDuration: `${METRICS_SUBSYSTEM}_persistentvolume_delete_duration_seconds`,
  apiRequests: `${METRICS_SUBSYSTEM}_apiserver_requests_total`,
  apiRequestsFailed: `${METRICS_SUBSYSTEM}_apiserver_requests_failed_total`,
  apiRequestsDuration: `${METRICS_SUBSYSTEM}_apiserver_requests_duration_seconds`,
  procRunning: `${METRICS_SUBSYSTEM}_proctable_running`,
  procSucceeded: `${METRICS_SUBSYSTEM}_proctable_succeeded`,
  procFailed: `${METRICS_SUBSYSTEM}_proctable_failed`,
  cleanup: `${METRICS_SUBSYSTEM}_persistentvolume_cleanup_total`,
} as const;

/** The instruments the provisioner reports to. */
export interface LocalStaticMetrics {
  /** `mode`: capacity of the volumes discovered in the last pass. */
  capacity: Gauge;
  /** `mode`: PVs created. */
  discovery: Counter;
  /** `mode`: seconds from looking at an entry to its PV created. */
  discoveryDuration: Histogram;
  /** `mode`, `type`: PVs deleted after a successful cleanup. */
  delete: Counter;
  /** `mode`, `type`: failures of the delete state machine. */
  deleteFailed: Counter;
  /** `mode`, `type`, `capacity`, `cleanup_command`: seconds from cleanup start to PV deleted. */
  deleteDuration: Histogram;
  /** `method`: PV create and delete requests. */
  apiRequests: Counter;
  /** `method`: those that failed. */
  apiRequestsFailed: Counter;
  /** `method`: their latency in seconds. */
  apiRequestsDuration: Histogram;
  /** Cleanups running now. */
  procRunning: Gauge;
  /** Cleanups that succeeded since the start. */
  procSucceeded: Gauge;
  /** Cleanups that failed since the start. */
  procFailed: Gauge;
  /**
   * `mode`, `type`, `outcome` (kprov): cleanup attempts of released volumes, counted when each ends: `succeeded` (the
   * volume was emptied: the cleaner exited 0, the Job succeeded), `failed` (the cleaner failed, or the volume could not
   * or would not be cleaned), `timeout` (stopped at `cleanupTimeout`). A failure waits out the volume's backoff before
   * the next attempt.
   */
  cleanup: Counter;
}

/** Declares the metrics in `sink` (default: discarded). */
export function createLocalStaticMetrics(sink: MetricsSink = noopMetrics): LocalStaticMetrics {
  const buckets = DEFAULT_BUCKETS;
  return {
    capacity: sink.gauge({
      name: METRIC_NAMES.capacity,
      help: 'Capacity of discovered persistent volumes in bytes. Broken down by persistent volume mode.',
      labelNames: ['mode'],
    }),
    discovery: sink.counter({
      name: METRIC_NAMES.discovery,
      help: 'Total number of persistent volumes created by discovery. Broken down by persistent volume mode.',
      labelNames: ['mode'],
    }),
    discoveryDuration: sink.histogram({
      name: METRIC_NAMES.discoveryDuration,
      help: 'Latency in seconds of persistent volume discovery. Broken down by persistent volume mode.',
      labelNames: ['mode'],
      buckets,
    }),
    delete: sink.counter({
      name: METRIC_NAMES.delete,
      help: 'Total number of persistent volumes deleted. Broken down by persistent volume mode, delete type (process or job).',
      labelNames: ['mode', 'type'],
    }),
    deleteFailed: sink.counter({
      name: METRIC_NAMES.deleteFailed,
      help: 'Total number of persistent volumes deletion failed. Broken down by persistent volume mode, delete type (process or job).',
      labelNames: ['mode', 'type'],
    }),
    deleteDuration: sink.histogram({
      name: METRIC_NAMES.deleteDuration,
      help: 'Latency in seconds of persistent volume deletion. Broken down by persistent volume mode, delete type (process or job), capacity and cleanup_command.',
      labelNames: ['mode', 'type', 'capacity', 'cleanup_command'],
      buckets,
    }),
    apiRequests: sink.counter({
      name: METRIC_NAMES.apiRequests,
      help: 'Total number of apiserver requests. Broken down by method.',
      labelNames: ['method'],
    }),
    apiRequestsFailed: sink.counter({
      name: METRIC_NAMES.apiRequestsFailed,
      help: 'Total number of apiserver requests failed. Broken down by method.',
      labelNames: ['method'],
    }),
    apiRequestsDuration: sink.histogram({
      name: METRIC_NAMES.apiRequestsDuration,
      help: 'Latency in seconds of apiserver requests. Broken down by method.',
      labelNames: ['method'],
      buckets,
    }),
    procRunning: sink.gauge({
      name: METRIC_NAMES.procRunning,
      help: 'Number of running operations in proctable.',
      labelNames: [],
    }),
    procSucceeded: sink.gauge({
      name: METRIC_NAMES.procSucceeded,
      help: 'Number of succeeded operations in proctable.',
      labelNames: [],
    }),
    procFailed: sink.gauge({
      name: METRIC_NAMES.procFailed,
      help: 'Number of failed operations in proctable.',
      labelNames: [],
    }),
    cleanup: sink.counter({
      name: METRIC_NAMES.cleanup,
      help: 'Total number of cleanup attempts of released persistent volumes. Broken down by persistent volume mode, cleanup type (process or job) and outcome (succeeded, failed or timeout).',
      labelNames: ['mode', 'type', 'outcome'],
    }),
  };
}
