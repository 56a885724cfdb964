/**
 * What is allocated where: the PVs this provisioner made, by node, with their directory and size, plus the
 * reservations of volumes being provisioned. The PVs come from the API (a PV informer feeds {@link Ledger.put} and
 * {@link Ledger.remove}), so a restarted provisioner rebuilds the same totals; only reservations live in memory,
 * and only while their volume is being made.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { ANN_PROVISIONED_BY } from '@kprov/provisioner-lib';
import { quantityToBytes } from '../config/index.js';
import { SELECTED_NODE_ANNOTATION } from '../volume/annotations.js';

/** One volume's share of a node's disk. */
export interface Allocation {
  /** The node holding the volume. */
  readonly node: string;
  /** The volume directory on the node. */
  readonly path: string;
  /** The volume's size (`spec.capacity.storage`, or the reserved request). */
  readonly bytes: bigint;
}

/** The total allocated below a base path of a node. */
export interface Allocated {
  /** The sum of the sizes. */
  readonly bytes: bigint;
  /** Volumes counted (PVs and reservations). */
  readonly volumes: number;
}

/**
 * Where a PV made by `provisionerName` lies and how big it is: the node of its
 * `local.path.provisioner/selected-node` annotation, its `hostPath`/`local` path, its `spec.capacity.storage`.
 * `undefined` for another provisioner's PV, a shared-file-system PV (no node) or one without a path.
 */
export function allocationOf(volume: V1PersistentVolume, provisionerName: string): Allocation | undefined {
  const annotations = volume.metadata?.annotations ?? {};
  if (annotations[ANN_PROVISIONED_BY] !== provisionerName) return undefined;
  const node = annotations[SELECTED_NODE_ANNOTATION] ?? '';
  const path = volume.spec?.hostPath?.path ?? volume.spec?.local?.path;
  if (node === '' || path === undefined) return undefined;
  let bytes = 0n;
  try {
    bytes = quantityToBytes(volume.spec?.capacity?.storage);
  } catch {
    // A PV with an unreadable size still holds its directory: it counts for nothing rather than breaking the sum.
  }
  return { node, path, bytes };
}

/** Whether `path` lies strictly below `base`. */
export function isBelow(path: string, base: string): boolean {
  return path.startsWith(base.endsWith('/') ? base : `${base}/`);
}

/** PVs and reservations by volume name; totals by node and base path. */
export class Ledger {
  private readonly volumes = new Map<string, Allocation>();
  private readonly reservations = new Map<string, Allocation>();

  /** Records (or updates) a PV's allocation; a reservation of the same volume is then no longer needed. */
  put(name: string, allocation: Allocation): void {
    this.volumes.set(name, allocation);
    this.reservations.delete(name);
  }

  /** Forgets a PV (deleted). */
  remove(name: string): void {
    this.volumes.delete(name);
  }

  /** Reserves space for a volume being made; it counts until {@link release}d or its PV is {@link put}. */
  reserve(name: string, allocation: Allocation): void {
    this.reservations.set(name, allocation);
  }

  /** Drops a reservation (the volume failed, or was given up); nothing when there is none. */
  release(name: string): void {
    this.reservations.delete(name);
  }

  /** A PV's (else a reservation's) allocation. */
  get(name: string): Allocation | undefined {
    return this.volumes.get(name) ?? this.reservations.get(name);
  }

  /** The bytes and volumes allocated below `base` on `node`, reservations included. */
  allocated(node: string, base: string): Allocated {
    let bytes = 0n;
    let volumes = 0;
    const count = (name: string, a: Allocation, fromReservation: boolean): void => {
      if (fromReservation && this.volumes.has(name)) return;
      if (a.node !== node || !isBelow(a.path, base)) return;
      bytes += a.bytes;
      volumes++;
    };
    for (const [name, a] of this.volumes) count(name, a, false);
    for (const [name, a] of this.reservations) count(name, a, true);
    return { bytes, volumes };
  }

  /** Every allocation (PVs, then reservations without a PV yet), for reports. */
  entries(): [string, Allocation][] {
    return [...this.volumes, ...[...this.reservations].filter(([name]) => !this.volumes.has(name))];
  }
}
