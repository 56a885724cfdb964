/**
 * The local-path provisioner: {@link LocalPathProvisioner} (provision and delete through helper pods), the helper
 * pod runner and the PV it returns.
 *
 * @module
 */
export {
  DEFAULT_CONFIGMAP_NAME,
  LocalPathProvisioner,
  VOLUME_CLEANUP_SKIPPED,
  VOLUME_DELETION_REFUSED,
  VOLUME_NODE_MISMATCH,
  type HelperPodRecord,
  type LocalPathProvisionerOptions,
} from './provisioner.js';
export {
  DEFAULT_RECONCILE_INTERVAL_MS,
  HelperPodReconciler,
  type HelperPodReconcilerOptions,
  type ReconcileReport,
} from './reconciler.js';
export {
  checkTeardownTarget,
  TeardownRefusedError,
  type ClaimIdentity,
  type TeardownTarget,
} from './teardown-guard.js';
export * from './helper-labels.js';
export {
  DEFAULT_POLL_INTERVAL_MS,
  FAILED_LOG_LINES,
  HelperPodFailedError,
  HelperPodRunner,
  HelperPodTimeoutError,
  type HelperPodRun,
  type HelperPodRunnerOptions,
} from './helper-runner.js';
export {
  SELECTED_NODE_ANNOTATION,
  affinityTermOf,
  buildPersistentVolume,
  volumePathOf,
  type AffinityTerm,
  type PersistentVolumeInputs,
} from './persistent-volume.js';
export { quantityToBytes } from './quantity.js';
