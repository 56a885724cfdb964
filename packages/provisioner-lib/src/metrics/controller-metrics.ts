import type { MetricsSink } from './sink.js';
import { DEFAULT_BUCKETS } from './sink.js';

/** The Go library's default subsystem: metric names start with `controller_`. */
export const CONTROLLER_SUBSYSTEM = 'controller';

/** Labels of the provision metrics. */
export interface ProvisionLabels {
  /** `claim.spec.storageClassName`, or `""` when unset (the beta annotation is not consulted). */
  class: string;
  /** `claim.spec.dataSource.kind`, or `""` when the claim has no data source. */
  source: string;
}

/** Labels of the delete metrics. */
export interface DeleteLabels {
  /** `pv.spec.storageClassName`, or `""`. */
  class: string;
}

/** The provisioning and deletion metrics the controller updates (sig-storage-lib `controller/metrics`). */
export interface ControllerMetrics {
  /** A claim was provisioned and its PV saved `seconds` after the operation started. */
  provisionSucceeded(labels: ProvisionLabels, seconds: number): void;
  /** A provisioning attempt failed (including the Go library's "stop" outcomes). */
  provisionFailed(labels: ProvisionLabels): void;
  /** A volume was deleted `seconds` after the operation started. */
  deleteSucceeded(labels: DeleteLabels, seconds: number): void;
  /** A delete attempt failed. */
  deleteFailed(labels: DeleteLabels): void;
}

/** Prometheus' `BuildFQName` without a namespace: `<subsystem>_<name>`, or `<name>` when the subsystem is empty. */
function fullName(subsystem: string, name: string): string {
  return subsystem === '' ? name : `${subsystem}_${name}`;
}

/**
 * Declares the six metrics of the Go library's `metrics.New(subsystem)` on `sink`, with the same names, help
 * texts (typos included, so dashboards keep working), labels and buckets, and returns the update methods.
 *
 * With the default subsystem the names are `controller_persistentvolumeclaim_provision_total`,
 * `…_provision_failed_total`, `…_provision_duration_seconds`, `controller_persistentvolume_delete_total`,
 * `…_delete_failed_total` and `…_delete_duration_seconds`.
 *
 * @param sink - where the instruments come from, for example `prometheusSink(registry)`.
 * @param subsystem - name prefix; default `controller`. An empty string gives the bare names.
 */
export function createControllerMetrics(
  sink: MetricsSink,
  subsystem: string = CONTROLLER_SUBSYSTEM,
): ControllerMetrics {
  const provisionLabels = ['class', 'source'] as const;
  const deleteLabels = ['class'] as const;
  const provisionTotal = sink.counter({
    name: fullName(subsystem, 'persistentvolumeclaim_provision_total'),
    help: 'Total number of persistent volumes provisioned succesfully. Broken down by storage class name and source of the claim.',
    labelNames: provisionLabels,
  });
  const provisionFailedTotal = sink.counter({
    name: fullName(subsystem, 'persistentvolumeclaim_provision_failed_total'),
    help: 'Total number of persistent volume provision failed attempts. Broken down by storage class name and source of the claim.',
    labelNames: provisionLabels,
  });
  const provisionDuration = sink.histogram({
    name: fullName(subsystem, 'persistentvolumeclaim_provision_duration_seconds'),
    help: 'Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.',
    labelNames: provisionLabels,
    buckets: DEFAULT_BUCKETS,
  });
  const deleteTotal = sink.counter({
    name: fullName(subsystem, 'persistentvolume_delete_total'),
    help: 'Total number of persistent volumes deleted succesfully. Broken down by storage class name.',
    labelNames: deleteLabels,
  });
  const deleteFailedTotal = sink.counter({
    name: fullName(subsystem, 'persistentvolume_delete_failed_total'),
    help: 'Total number of persistent volume delete failed attempts. Broken down by storage class name.',
    labelNames: deleteLabels,
  });
  const deleteDuration = sink.histogram({
    name: fullName(subsystem, 'persistentvolume_delete_duration_seconds'),
    help: 'Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.',
    labelNames: deleteLabels,
    buckets: DEFAULT_BUCKETS,
  });

  const provision = (l: ProvisionLabels) => ({ class: l.class, source: l.source });
  const del = (l: DeleteLabels) => ({ class: l.class });
  return {
    provisionSucceeded(labels, seconds) {
      provisionDuration.observe(provision(labels), seconds);
      provisionTotal.inc(provision(labels));
    },
    provisionFailed(labels) {
      provisionFailedTotal.inc(provision(labels));
    },
    deleteSucceeded(labels, seconds) {
      deleteDuration.observe(del(labels), seconds);
      deleteTotal.inc(del(labels));
    },
    deleteFailed(labels) {
      deleteFailedTotal.inc(del(labels));
    },
  };
}
