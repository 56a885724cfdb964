/**
 * PV/PVC helpers the PV controller and the scheduler's volume binding share, after
 * `k8s.io/component-helpers/storage/volume` (`FindMatchingVolume`, `GetBindVolumeToClaim`, `IsVolumeBoundToClaim`).
 */
import type { ObjectStore } from '../store/store.js';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_BETA_DEFAULT_STORAGE_CLASS,
  ANN_DEFAULT_STORAGE_CLASS,
} from './annotations.js';
import { hasAccessModes, matchesLabelSelector, matchesNodeSelector, storageOf } from './match.js';
import {
  view,
  viewOpt,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from './types.js';

const ANN_BETA_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** The class a claim asks for (`GetPersistentVolumeClaimClass`): `spec.storageClassName`, else the beta annotation, else `""`. */
export function claimClass(claim: PersistentVolumeClaim): string {
  const beta = claim.metadata.annotations?.[ANN_BETA_CLASS];
  if (beta !== undefined) return beta;
  return claim.spec?.storageClassName ?? '';
}

/** Whether the claim names a class at all (`storageClassName` set, even to `""`, or the beta annotation). */
export function claimHasClass(claim: PersistentVolumeClaim): boolean {
  const sc = claim.spec?.storageClassName;
  return (sc !== undefined && sc !== null) || claim.metadata.annotations?.[ANN_BETA_CLASS] !== undefined;
}

/** The class of a volume (`GetPersistentVolumeClass`). */
export function volumeClass(pv: PersistentVolume): string {
  return pv.metadata.annotations?.[ANN_BETA_CLASS] ?? pv.spec?.storageClassName ?? '';
}

/** A StorageClass by name. */
export function getClass(store: ObjectStore, name: string): StorageClass | undefined {
  return name === '' ? undefined : viewOpt<StorageClass>(store.get('storage.k8s.io/storageclasses', undefined, name));
}

/** The default StorageClass: of several, the newest (as the DefaultStorageClass admission plugin picks since 1.26). */
export function defaultClass(store: ObjectStore): StorageClass | undefined {
  const defaults = store
    .list('storage.k8s.io/storageclasses')
    .map((o) => view<StorageClass>(o))
    .filter((sc) => {
      const a = sc.metadata.annotations ?? {};
      return a[ANN_DEFAULT_STORAGE_CLASS] === 'true' || a[ANN_BETA_DEFAULT_STORAGE_CLASS] === 'true';
    });
  defaults.sort(
    (a, b) =>
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  return defaults[0];
}

/** Whether a claim's class delays binding until a pod uses it (`volumeBindingMode: WaitForFirstConsumer`). */
export function isDelayBinding(store: ObjectStore, claim: PersistentVolumeClaim): boolean {
  const sc = getClass(store, claimClass(claim));
  return sc?.volumeBindingMode === 'WaitForFirstConsumer';
}

/** Whether a PV's `claimRef` names this claim (namespace, name, and uid if the ref has one). */
export function isVolumeBoundToClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (ref === undefined || ref === null) return false;
  if (ref.name !== claim.metadata.name || (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  return ref.uid === undefined || ref.uid === '' || ref.uid === claim.metadata.uid;
}

/** Whether the claim is bound and the binding completed (`volumeName` and `bind-completed`), as the scheduler checks. */
export function isClaimFullyBound(claim: PersistentVolumeClaim): boolean {
  return (claim.spec?.volumeName ?? '') !== '' && claim.metadata.annotations?.[ANN_BIND_COMPLETED] !== undefined;
}

function volumeModeMismatch(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (pv.spec?.volumeMode ?? 'Filesystem');
}

/** Where {@link findMatchingVolume} is called from. */
export interface MatchContext {
  /** Scheduler path: the node the volume must be usable on (PV node affinity, access modes checked). */
  node?: Node;
  /** Scheduler path: volumes already picked for other claims of the same pod. */
  excluded?: ReadonlySet<string>;
  /** PV controller path: the claim's class delays binding; only volumes pre-bound to the claim match. */
  delayBinding?: boolean;
}

/**
 * The best volume for a claim (`FindMatchingVolume`): one pre-bound to the claim if big enough, else the smallest
 * Available, unclaimed volume of the claim's class, volume mode and selector with enough capacity (and, on the
 * scheduler path, node affinity matching the node and all requested access modes).
 */
export function findMatchingVolume(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  ctx: MatchContext = {},
): PersistentVolume | undefined {
  const requested = storageOf(claim.spec?.resources?.requests);
  const wantedClass = claimClass(claim);
  let best: PersistentVolume | undefined;
  let bestSize = 0;
  for (const pv of volumes) {
    const name = pv.metadata.name ?? '';
    if (ctx.excluded?.has(name) === true) continue;
    const size = storageOf(pv.spec?.capacity);
    if (volumeModeMismatch(claim, pv)) continue;
    if (pv.metadata.deletionTimestamp !== undefined) continue;
    const node = ctx.node;
    const affinityOk =
      node === undefined ||
      matchesNodeSelector(pv.spec?.nodeAffinity?.required, node.metadata.labels, node.metadata.name ?? '');
    if (isVolumeBoundToClaim(pv, claim)) {
      if (size < requested) continue;
      return affinityOk ? pv : undefined;
    }
    if (node === undefined && ctx.delayBinding === true) continue;
    if (pv.status?.phase !== 'Available') continue;
    if (pv.spec?.claimRef !== undefined && pv.spec.claimRef !== null) continue;
    if (!matchesLabelSelector(claim.spec?.selector, pv.metadata.labels)) continue;
    if (volumeClass(pv) !== wantedClass) continue;
    if (!affinityOk) continue;
    if (node !== undefined && !hasAccessModes(pv.spec?.accessModes, claim.spec?.accessModes)) continue;
    if (size >= requested && (best === undefined || size < bestSize)) {
      best = pv;
      bestSize = size;
    }
  }
  return best;
}

/**
 * The PV controller's search (`findBestMatchForClaim`): volumes are tried in groups of equal access-mode sets that
 * include every requested mode, the smallest sets first, so a RWO claim prefers a RWO-only volume to a RWO+RWX one.
 */
export function findBestMatchForClaim(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  delayBinding: boolean,
): PersistentVolume | undefined {
  const groups = new Map<string, PersistentVolume[]>();
  for (const pv of volumes) {
    if (!hasAccessModes(pv.spec?.accessModes, claim.spec?.accessModes)) continue;
    const key = [...new Set(pv.spec?.accessModes ?? [])].sort().join(',');
    const g = groups.get(key) ?? [];
    g.push(pv);
    groups.set(key, g);
  }
  const ordered = [...groups.entries()].sort(
    (a, b) => a[0].split(',').length - b[0].split(',').length || a[0].localeCompare(b[0]),
  );
  for (const [, group] of ordered) {
    const found = findMatchingVolume(claim, group, { delayBinding });
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Binds a PV to a claim in place (`GetBindVolumeToClaim`): a full `claimRef` to the claim (with its uid and
 * resourceVersion), and `bound-by-controller` unless the user had pre-bound the volume to this claim. Returns
 * whether anything changed.
 */
export function bindVolumeToClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  let dirty = false;
  const setByController = !isVolumeBoundToClaim(pv, claim);
  const spec = (pv.spec ??= {});
  const ref = spec.claimRef;
  if (
    ref === undefined ||
    ref === null ||
    ref.name !== claim.metadata.name ||
    ref.namespace !== claim.metadata.namespace ||
    ref.uid !== claim.metadata.uid
  ) {
    spec.claimRef = {
      kind: 'PersistentVolumeClaim',
      namespace: claim.metadata.namespace ?? '',
      name: claim.metadata.name ?? '',
      uid: claim.metadata.uid ?? '',
      apiVersion: 'v1',
      resourceVersion: claim.metadata.resourceVersion ?? '',
    };
    dirty = true;
  }
  const annotations = pv.metadata.annotations ?? {};
  if (setByController && annotations[ANN_BOUND_BY_CONTROLLER] === undefined) {
    pv.metadata.annotations = { ...annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' };
    dirty = true;
  }
  return dirty;
}

/** The names of the PVCs a pod's volumes reference, in volume order. */
export function podClaimNames(
  volumes: readonly { persistentVolumeClaim?: { claimName: string } }[] | undefined,
): string[] {
  return (volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim === undefined ? [] : [v.persistentVolumeClaim.claimName],
  );
}
