/**
 * The labels and annotations that record on each helper pod what it does, so that an operation a crash
 * interrupted can be finished: which operation, for which claim and volume, where, and for which provisioner (two
 * provisioners, e.g. one per disk, may share a namespace: each finishes only its own operations).
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
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
/**
 * Annotation: the `--provisioner-name` of the provisioner that made the pod. An annotation, as names such as
 * `rancher.io/local-path` are not valid label values.
 */
export const ANNOTATION_PROVISIONER = 'local.path.provisioner/provisioner';

/**
 * The labels and annotations of the helper pod of `action` on a volume, from which an interrupted operation can be
 * finished; {@link ANNOTATION_PROVISIONER} is `provisionerName` when given.
 */
export function labelsOf(
  action: VolumeAction,
  record: VolumeRecord,
  provisionerName?: string,
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
      ...provisionerAnnotation(provisionerName),
    },
  };
}

/** {@link ANNOTATION_PROVISIONER} of `provisionerName`; none when it is not given. */
export function provisionerAnnotation(provisionerName: string | undefined): Record<string, string> {
  return provisionerName === undefined ? {} : { [ANNOTATION_PROVISIONER]: provisionerName };
}

/**
 * Whether the helper pod records another provisioner than `provisionerName` ({@link ANNOTATION_PROVISIONER}): such a
 * pod is that provisioner's to finish or delete, never ours. A pod without the annotation, made by a version that did
 * not record it, is not: it is handled as before, as this provisioner's.
 */
export function madeByAnotherProvisioner(pod: V1Pod, provisionerName: string | undefined): boolean {
  const recorded = pod.metadata?.annotations?.[ANNOTATION_PROVISIONER];
  return recorded !== undefined && recorded !== provisionerName;
}
