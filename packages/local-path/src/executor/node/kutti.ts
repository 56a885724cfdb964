/**
 * What node mode takes of kuttiproject/provisioner-localvolume (v0.2.2), so that it runs in kutti's place: its
 * provisioner name, the annotations it writes on each PV (`kuttiproject.org/provisionedBy`,
 * `kuttiproject.org/provisionedOn`), so that its PVs are deleted by the provisioner of the node that holds them, and
 * its volume type, `local`. Its volumes are `<root path>/<PV name>` directories.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { ANNOTATION_DEFAULT_VOLUME_TYPE, ANNOTATION_VOLUME_TYPE, type VolumeType } from '../../volume/parameters.js';

/** kutti's provisioner name (StorageClass `provisioner`, PV `pv.kubernetes.io/provisioned-by`). */
export const KUTTI_PROVISIONER_NAME = 'kuttiproject/provisioner-localvolume';
/** PV annotation kutti writes: its provisioner name. */
export const KUTTI_PROVISIONED_BY_ANNOTATION = 'kuttiproject.org/provisionedBy';
/** PV annotation kutti writes: the node the directory was made on. */
export const KUTTI_PROVISIONED_ON_ANNOTATION = 'kuttiproject.org/provisionedOn';

/** The node a PV made by kutti was made on (its annotations, as kutti checks them); `undefined` for any other PV. */
export function kuttiNodeOf(volume: V1PersistentVolume): string | undefined {
  const annotations = volume.metadata?.annotations ?? {};
  if (annotations[KUTTI_PROVISIONED_BY_ANNOTATION] !== KUTTI_PROVISIONER_NAME) return undefined;
  const node = annotations[KUTTI_PROVISIONED_ON_ANNOTATION] ?? '';
  return node === '' ? undefined : node;
}

/**
 * The volume type of a kutti volume: kutti makes `local` PVs and its StorageClasses carry no annotation, so `local`
 * unless the claim's `volumeType` or the class's `defaultVolumeType` annotation chose one (`resolved`, their choice).
 */
export function kuttiVolumeType(
  resolved: VolumeType,
  claimAnnotations: Readonly<Record<string, string>> | undefined,
  classAnnotations: Readonly<Record<string, string>> | undefined,
): VolumeType {
  const chosen =
    claimAnnotations?.[ANNOTATION_VOLUME_TYPE] !== undefined ||
    classAnnotations?.[ANNOTATION_DEFAULT_VOLUME_TYPE] !== undefined;
  return chosen ? resolved : 'local';
}
