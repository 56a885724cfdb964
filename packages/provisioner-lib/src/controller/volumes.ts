import type { V1PersistentVolume } from '@kubernetes/client-node';
import { ANN_MIGRATED_TO, ANN_PROVISIONED_BY, FINALIZER_PV } from './annotations.js';
import type { Provisioner } from './provisioner.js';

/**
 * Whether a PV is ours: by `pv.kubernetes.io/provisioned-by` (or `migrated-to`) naming a known provisioner; for
 * PVs without it, a CSI PV whose driver is a known name (statically provisioned CSI volumes count), else
 * `migrated-to`.
 */
export function isProvisionerForVolume(knownNames: ReadonlySet<string>, pv: V1PersistentVolume): boolean {
  const ann = pv.metadata?.annotations ?? {};
  const migrated = ann[ANN_MIGRATED_TO];
  const provisionedBy = ann[ANN_PROVISIONED_BY];
  if (provisionedBy !== undefined)
    return knownNames.has(provisionedBy) || (migrated !== undefined && knownNames.has(migrated));
  const driver = pv.spec?.csi?.driver;
  if (driver !== undefined) return knownNames.has(driver);
  return migrated !== undefined && knownNames.has(migrated);
}

/** Returns a new list without our finalizer (undefined when empty) and whether anything was removed. */
export function removeFinalizer(
  finalizers: readonly string[] | undefined,
  finalizer = FINALIZER_PV,
): [string[] | undefined, boolean] {
  const list = finalizers ?? [];
  const kept = list.filter((f) => f !== finalizer);
  const modified = kept.length !== list.length;
  return [kept.length === 0 ? undefined : kept, modified];
}

/** Returns a list with our finalizer appended when missing, and whether it was added. */
export function addFinalizer(finalizers: readonly string[] | undefined, finalizer = FINALIZER_PV): [string[], boolean] {
  const list = [...(finalizers ?? [])];
  if (list.includes(finalizer)) return [list, false];
  list.push(finalizer);
  return [list, true];
}

/** The finalizer list the PV should have, and whether it differs from what it has. */
export function desiredFinalizers(
  addFinalizerOption: boolean,
  pv: V1PersistentVolume,
): [string[] | undefined, boolean] {
  const policy = pv.spec?.persistentVolumeReclaimPolicy;
  const current = pv.metadata?.finalizers;
  if (!addFinalizerOption || policy === 'Retain' || policy === 'Recycle') return removeFinalizer(current);
  if (policy === 'Delete' && pv.metadata?.deletionTimestamp === undefined && pv.status?.phase === 'Bound') {
    return addFinalizer(current);
  }
  return [current === undefined ? undefined : [...current], false];
}

/** Whether a volume should be deleted, in the Go library's order. */
export async function shouldDelete(
  provisioner: Provisioner,
  addFinalizerOption: boolean,
  pv: V1PersistentVolume,
  signal: AbortSignal,
): Promise<boolean> {
  if (provisioner.shouldDelete !== undefined && !(await provisioner.shouldDelete(pv, signal))) return false;
  const deleting = pv.metadata?.deletionTimestamp !== undefined && pv.metadata.deletionTimestamp !== null;
  if (addFinalizerOption) {
    if (!(pv.metadata?.finalizers ?? []).includes(FINALIZER_PV) && deleting) return false;
  } else if (deleting) return false;
  if (pv.status?.phase !== 'Released') return false;
  if (pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return false;
  return true;
}
