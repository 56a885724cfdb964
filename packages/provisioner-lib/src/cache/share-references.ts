import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Store } from './store.js';

/*
 * A bound volume and its claim repeat each other's values: the volume's claimRef has the claim's uid and name, the
 * claim's volumeName is the volume's name. These are unique to the pair, so no table can share them, but the cache
 * entry of the other object can: whichever of the two is cached second takes the strings of the first. Only
 * strings that are equal are exchanged, so nothing visible changes.
 */

/** Points a volume's `spec.claimRef.uid` and `.name` at the strings of its claim in `claims` (indexed by `uid`). */
export function shareWithClaim(
  volume: V1PersistentVolume,
  claims: Store<V1PersistentVolumeClaim> | undefined,
): V1PersistentVolume {
  const ref = volume.spec?.claimRef;
  if (claims === undefined || ref?.uid === undefined) return volume;
  const meta = claims.byIndex('uid', ref.uid)[0]?.metadata;
  if (meta?.uid === undefined || meta.uid !== ref.uid) return volume;
  ref.uid = meta.uid;
  if (meta.name !== undefined && meta.name === ref.name) ref.name = meta.name;
  return volume;
}

/**
 * Points a claim's `spec.volumeName` at the name of that volume in `volumes`, and the claim's uid and name at the
 * volume's claimRef, when it names this claim.
 */
export function shareWithVolume(
  claim: V1PersistentVolumeClaim,
  volumes: Store<V1PersistentVolume> | undefined,
): V1PersistentVolumeClaim {
  const spec = claim.spec;
  const name = spec?.volumeName;
  if (volumes === undefined || spec === undefined || name === undefined || name === '') return claim;
  const volume = volumes.get(name);
  const own = volume?.metadata?.name;
  if (own === undefined || own !== name) return claim;
  spec.volumeName = own;
  const ref = volume?.spec?.claimRef;
  const meta = claim.metadata;
  if (meta?.uid === undefined || ref?.uid === undefined || ref.uid !== meta.uid) return claim;
  meta.uid = ref.uid;
  if (ref.name !== undefined && ref.name === meta.name) meta.name = ref.name;
  return claim;
}
