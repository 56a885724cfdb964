/**
 * The node-cleanup controller's four metrics, upstream's names, types, labels and help (`pkg/metrics/node-cleanup`).
 *
 * @module
 */
import { noopMetrics, type Counter, type MetricsSink } from '@kprov/provisioner-lib';

/** Prefix of every metric name (upstream's subsystem). */
export const NODE_CLEANUP_METRICS_SUBSYSTEM = 'local_volume_node_cleanup';

/** The metric names. */
export const NODE_CLEANUP_METRIC_NAMES = {
  volumeDelete: `${NODE_CLEANUP_METRICS_SUBSYSTEM}_persistentvolume_delete_total`,
  volumeDeleteFailed: `${NODE_CLEANUP_METRICS_SUBSYSTEM}_persistentvolume_delete_failed_total`,
  claimDelete: `${NODE_CLEANUP_METRICS_SUBSYSTEM}_persistentvolumeclaim_delete_total`,
  claimDeleteFailed: `${NODE_CLEANUP_METRICS_SUBSYSTEM}_persistentvolumeclaim_delete_failed_total`,
} as const;

/** The instruments of the controller and the stale PV deleter. */
export interface NodeCleanupMetrics {
  /** `phase`: PVs of deleted nodes deleted. */
  volumeDelete: Counter;
  /** `phase`: their deletes that failed. */
  volumeDeleteFailed: Counter;
  /** PVCs of PVs of deleted nodes deleted. */
  claimDelete: Counter;
  /** Their deletes that failed. */
  claimDeleteFailed: Counter;
}

/** Declares the four metrics in `sink` (default: discarded). */
export function createNodeCleanupMetrics(sink: MetricsSink = noopMetrics): NodeCleanupMetrics {
  return {
    volumeDelete: sink.counter({
      name: NODE_CLEANUP_METRIC_NAMES.volumeDelete,
      help: 'Total number of successful persistent volume delete *attempts*. Broken down by persistent volume phase.',
      labelNames: ['phase'],
    }),
    volumeDeleteFailed: sink.counter({
      name: NODE_CLEANUP_METRIC_NAMES.volumeDeleteFailed,
      help: 'Total number of persistent volume delete failed attempts. Broken down by persistent volume phase.',
      labelNames: ['phase'],
    }),
    claimDelete: sink.counter({
      name: NODE_CLEANUP_METRIC_NAMES.claimDelete,
      help: 'Total number of persistent volume claims deleted.',
      labelNames: [],
    }),
    claimDeleteFailed: sink.counter({
      name: NODE_CLEANUP_METRIC_NAMES.claimDeleteFailed,
      help: 'Total number of persistent volume claim delete failed attempts.',
      labelNames: [],
    }),
  };
}
