/**
 * Well-known annotation, label, finalizer and taint keys the simulated control loops read and write. The values
 * are the ones Kubernetes uses (`k8s.io/component-helpers/storage/volume`, `pkg/volume/util`, `k8s.io/api/core/v1`).
 */

/** Set by the PV controller on a PVC once its binding is complete. */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** Set on a PV or PVC when the controller (not the user) made the binding. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** Set by the scheduler on a PVC of a `WaitForFirstConsumer` class: the node to provision for. */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** Set by the PV controller on a PVC: which provisioner is expected to provision it. */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
/** The deprecated beta spelling of {@link ANN_STORAGE_PROVISIONER}, still written alongside it. */
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** Set by a provisioner on the PVs it creates. */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
/** Marks the default StorageClass. */
export const ANN_DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';
/** The beta spelling of {@link ANN_DEFAULT_STORAGE_CLASS}, still honoured. */
export const ANN_BETA_DEFAULT_STORAGE_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';

/** A StorageClass provisioner name meaning "no dynamic provisioning" (local volumes). */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/** Finalizer of the PVC protection controller. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
/** Finalizer of the PV protection controller. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** Node label a kubelet sets on registration: the node's host name. */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
/** Node label a kubelet sets on registration: the operating system (`linux`). */
export const LABEL_OS = 'kubernetes.io/os';
/** Node label a kubelet sets on registration: the architecture in Go's spelling (`amd64`, `arm64`). */
export const LABEL_ARCH = 'kubernetes.io/arch';

/** Taint the node lifecycle controller keeps on a node whose Ready condition is not True. */
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
/** Taint standing for `spec.unschedulable` (cordoned node). */
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
