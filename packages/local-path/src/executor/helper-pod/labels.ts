/**
 * The labels and annotations that record on each helper pod what it does, so that an operation a crash
 * interrupted can be finished: which operation, for which claim and volume, where.
 *
 * @module
 */
import type { VolumeRecord } from '../executor.js';
import type { VolumeAction } from '../script.js';

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

/** The labels and annotations of the helper pod of `action` on a volume, from which an interrupted operation can be finished. */
export function labelsOf(
  action: VolumeAction,
  record: VolumeRecord,
): { labels: Record<string, string>; annotations: Record<string, string> } {
  const uid = record.claim?.uid ?? '';
  return {
    labels: { [LABEL_OPERATION]: action, ...(uid === '' ? {} : { [LABEL_CLAIM_UID]: uid }) },
    annotations: {
      [ANNOTATION_VOLUME]: record.pvName,
      [ANNOTATION_CLAIM]: record.claim === undefined ? '' : `${record.claim.namespace}/${record.claim.name}`,
      [ANNOTATION_PATH]: record.path,
      [ANNOTATION_NODE]: record.node,
      [ANNOTATION_STORAGE_CLASS]: record.storageClassName,
    },
  };
}
