/** Annotation keys, finalizer and other names the Go library uses, verbatim. */

/** PV: the provisioner that created it (the StorageClass's `provisioner`). */
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** PV/PVC: set by Kubernetes when a volume was migrated to a CSI driver. */
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
/** PVC: which provisioner must provision it (GA key, read first). */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
/** PVC: which provisioner must provision it (beta key, read second). */
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** PVC: the node the scheduler picked (WaitForFirstConsumer). Removed on Reschedule. */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** PVC: the alpha selected-node key, read for `selectedNodeName` only. */
export const ANN_ALPHA_SELECTED_NODE = 'volume.alpha.kubernetes.io/selected-node';
/** PVC/PV: the beta class annotation; on a PVC it takes precedence over `spec.storageClassName`. */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** PV finalizer managed when `addFinalizer` is on. */
export const FINALIZER_PV = 'external-provisioner.volume.kubernetes.io/finalizer';
