/**
 * Which nodes a local PV is pinned to, read from its node affinity: upstream's `GetLocalPersistentVolumeNodeNames`,
 * and the stricter reading the node-cleanup controller acts on.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { HOSTNAME_LABEL } from '../discovery/volume.js';

/** The node names of one selector term: the intersection of its `kubernetes.io/hostname In` values; undefined when it has none. */
function termNodeNames(
  expressions: readonly { key: string; operator: string; values?: string[] }[] | undefined,
): Set<string> | undefined {
  let names: Set<string> | undefined;
  for (const e of expressions ?? []) {
    if (e.key !== HOSTNAME_LABEL || e.operator !== 'In') continue;
    const values = new Set(e.values ?? []);
    names = names === undefined ? values : new Set([...names].filter((n) => values.has(n)));
  }
  return names;
}

/**
 * Upstream's `GetLocalPersistentVolumeNodeNames`: the union over the PV's required node selector terms of the
 * intersection of the values of every `kubernetes.io/hostname In` expression of the term; other keys and operators
 * are ignored. Sorted. `undefined` for a PV without `spec.nodeAffinity.required`; an empty list when no term names a
 * node (no terms, no hostname expression, empty values, or an empty intersection).
 */
export function localVolumeNodeNames(pv: V1PersistentVolume | undefined): string[] | undefined {
  const required = pv?.spec?.nodeAffinity?.required;
  if (required === undefined) return undefined;
  const result = new Set<string>();
  for (const term of required.nodeSelectorTerms ?? [])
    for (const name of termNodeNames(term.matchExpressions) ?? []) result.add(name);
  return [...result].sort();
}

/**
 * The nodes the PV is reachable from only, or `undefined` when it cannot be told that it is pinned to named nodes:
 * no required node affinity, no node named at all, or a term without a `kubernetes.io/hostname In` expression (such
 * a term admits nodes by other labels, a zone say, as the `selector` of a class does for shared disks, so the PV
 * outlives any one node). Upstream acts on {@link localVolumeNodeNames} alone, and takes a PV that names no node
 * for one whose nodes are all gone.
 */
export function pinnedNodeNames(pv: V1PersistentVolume): string[] | undefined {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (terms === undefined || terms.length === 0) return undefined;
  if (terms.some((t) => termNodeNames(t.matchExpressions) === undefined)) return undefined;
  const names = localVolumeNodeNames(pv);
  return names === undefined || names.length === 0 ? undefined : names;
}

/** Upstream's `IsLocalPVWithStorageClass`: a `local` PV whose class is one of `classNames`. */
export function isLocalVolumeOfClass(pv: V1PersistentVolume, classNames: ReadonlySet<string>): boolean {
  return pv.spec?.local !== undefined && classNames.has(pv.spec.storageClassName ?? '');
}
