/**
 * The labels and annotations that record on each helper pod what it does, so that an operation a crash
 * interrupted can be finished: which operation, for which claim and volume, where.
 *
 * @module
 */

/** Label: `create` (setup) or `delete` (teardown). Every helper pod has it. */
export const LABEL_OPERATION = 'local.path.provisioner/operation';
/** Label: the uid of the claim the volume is for. */
export const LABEL_CLAIM_UID = 'local.path.provisioner/claim-uid';
/** Annotation: the PV name. */
export const ANNOTATION_VOLUME = 'local.path.provisioner/volume';
/** Annotation: the claim, `<namespace>/<name>`. */
export const ANNOTATION_CLAIM = 'local.path.provisioner/claim';
/** Annotation: the volume directory. */
export const ANNOTATION_PATH = 'local.path.provisioner/path';
/** Annotation: the node the directory is on (`""` on a shared file system). */
export const ANNOTATION_NODE = 'local.path.provisioner/node';
/** Annotation: the StorageClass of the claim. */
export const ANNOTATION_STORAGE_CLASS = 'local.path.provisioner/storage-class';
