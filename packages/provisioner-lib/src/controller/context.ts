import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import type { Logger } from '../logging/logger.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import type { ProvisionControllerClient } from './client.js';
import type { OperationReporter } from './operation.js';
import type { ResolvedOptions } from './options.js';
import type { Provisioner } from './provisioner.js';
import type { SlowSet } from './slow-set.js';
import type { VolumeStore } from './volume-store.js';

/**
 * What a claim or volume operation reads and writes through: the controller's options, clients, caches and
 * reporter. The controller makes one when it is constructed and hands the same object to every pass (the Go
 * library's operations are methods of its controller struct), so that a pass allocates nothing to find them.
 */
export interface OperationContext {
  options: ResolvedOptions;
  provisioner: Provisioner;
  /** The provisioner name and the additional names. */
  knownNames: ReadonlySet<string>;
  client: ProvisionControllerClient;
  logger: Logger;
  metrics: ControllerMetrics;
  volumeStore: VolumeStore;
  slowSet: SlowSet;
  /**
   * UIDs of the volumes whose deletion this run finished (asset, PV object, finalizer), until the informer reports
   * them gone. The PV's own update (its deletion timestamp) is queued while it is deleted, and the cached copy the
   * next pass reads may not show our finalizer's removal yet: without this, that pass would delete it again (the
   * Go library does, and counts the PV's NotFound as a failed deletion).
   */
  deletedVolumes: Set<string>;
  /** The PV of that name as the informer has it now. */
  getVolume(name: string): V1PersistentVolume | undefined;
  /** The StorageClass of that name as the informer has it now. */
  getClass(name: string): V1StorageClass | undefined;
  /** Where Events and the controller's typed events go. */
  reporter: OperationReporter;
}
