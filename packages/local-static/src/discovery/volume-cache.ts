/**
 * The PVs of this node's provisioner (upstream's volume cache and populator): those of the PV informer whose
 * `provisioned-by` names it, plus those this process created that the informer has not shown yet; and the UIDs of those
 * it deleted that the informer still shows.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { Store } from '@kprov/provisioner-lib';
import { HOSTNAME_LABEL, PROVISIONED_BY_ANNOTATION } from './volume.js';

/** Who this node's provisioner is, asked at each use (the config may change `useNodeNameOnly`). */
export interface VolumeOwner {
  /** This node's name. */
  nodeName: string;
  /** The name its PVs carry in `pv.kubernetes.io/provisioned-by`. */
  provisionerName(): string;
  /** Whether `useNodeNameOnly` is on. */
  useNodeNameOnly(): boolean;
}

/** This node's PVs, from the PV informer's store and what this process did that the informer may not show yet. */
export class VolumeCache {
  /** PVs created by this process that the informer may not have yet. */
  private readonly created = new Map<string, V1PersistentVolume>();
  /** UIDs of PVs this process deleted that the informer may still have (the deleter skips them; discovery still sees them). */
  private readonly deleted = new Set<string>();

  constructor(
    private readonly store: Store<V1PersistentVolume>,
    private readonly owner: VolumeOwner,
  ) {}

  /** Whether this node's provisioner created `pv` (upstream's populator filter). */
  isOurs(pv: V1PersistentVolume): boolean {
    const by = pv.metadata?.annotations?.[PROVISIONED_BY_ANNOTATION];
    if (by === undefined) return false;
    const name = this.owner.provisionerName();
    if (by === name) return true;
    // useNodeNameOnly reads PVs named with the UID, when they carry this node's hostname label.
    return (
      this.owner.useNodeNameOnly() &&
      pv.metadata?.labels?.[HOSTNAME_LABEL] === this.owner.nodeName &&
      by.startsWith(`${name}-`)
    );
  }

  /** The PVs of this node: the informer's, plus those just created. */
  list(): V1PersistentVolume[] {
    const list = this.store.list().filter((pv) => this.isOurs(pv));
    const names = new Set(list.map((pv) => pv.metadata?.name));
    for (const [name, pv] of this.created) if (!names.has(name)) list.push(pv);
    return list;
  }

  /** Notes `pv`, just created by this process. */
  addCreated(pv: V1PersistentVolume): void {
    this.created.set(pv.metadata?.name ?? '', pv);
  }

  /** Notes `pv`, just deleted by this process. */
  markDeleted(pv: V1PersistentVolume): void {
    this.deleted.add(pv.metadata?.uid ?? '');
    this.created.delete(pv.metadata?.name ?? '');
  }

  /** Whether this process deleted the PV of `uid` (the informer may still show it). */
  isDeleted(uid: string): boolean {
    return this.deleted.has(uid);
  }

  /** Forgets what the informer has caught up with; returns the UIDs of every PV it has (this node's or not). */
  prune(): Set<string | undefined> {
    for (const name of this.created.keys()) if (this.store.get(name) !== undefined) this.created.delete(name);
    const uids = new Set(this.store.list().map((pv) => pv.metadata?.uid));
    for (const uid of this.deleted) if (!uids.has(uid)) this.deleted.delete(uid);
    return uids;
  }
}
