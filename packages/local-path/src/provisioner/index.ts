/**
 * The local-path provisioner: {@link LocalPathProvisioner} (provision and delete through helper pods), the helper
 * pod runner and the PV it returns.
 *
 * @module
 */
export {
  DEFAULT_CONFIGMAP_NAME,
  LocalPathProvisioner,
  NODE_MODE_NEEDS_SELECTED_NODE,
  VOLUME_CLEANUP_SKIPPED,
  VOLUME_DELETION_REFUSED,
  VOLUME_NODE_MISMATCH,
  type HelperPodRecord,
  type LocalPathProvisionerOptions,
  type NodeModeOptions,
} from './provisioner.js';
export {
  DEFAULT_RECONCILE_INTERVAL_MS,
  HelperPodReconciler,
  type HelperPodReconcilerOptions,
  type ReconcileReport,
} from '../executor/helper-pod/reconciler.js';
export {
  checkTeardownTarget,
  TeardownRefusedError,
  type ClaimIdentity,
  type TeardownTarget,
} from '../volume/teardown-guard.js';
export * from '../executor/helper-pod/labels.js';
export {
  DEFAULT_POLL_INTERVAL_MS,
  FAILED_LOG_LINES,
  HelperPodFailedError,
  HelperPodRunner,
  HelperPodTimeoutError,
  type HelperPodRun,
  type HelperPodRunnerOptions,
} from '../executor/helper-pod/runner.js';
export {
  PROVISIONED_ON_ANNOTATION,
  SELECTED_NODE_ANNOTATION,
  affinityTermOf,
  buildPersistentVolume,
  volumePathOf,
  type AffinityTerm,
  type PersistentVolumeInputs,
} from './persistent-volume.js';
export { quantityToBytes } from './quantity.js';
