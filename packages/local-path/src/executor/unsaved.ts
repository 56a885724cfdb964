/**
 * The volumes an executor set up whose PV is not saved yet. The controller saves the PV after `provision` returned
 * (retrying for about a minute); until then what the setup left as a record (the setup helper pod, node mode's
 * pending record) must stay, and the orphan reconcilers leave the volume alone. A save that never comes is given up
 * after {@link UNSAVED_GRACE_MS} on the executor's clock (the controller then tore the volume down), so that a
 * reconciler may act again.
 *
 * @module
 */
import type { Clock } from '@kprov/provisioner-lib';

/** How long a volume set up by this process may wait for its PV to be saved (the controller retries a save ~1 min). */
export const UNSAVED_GRACE_MS = 10 * 60_000;

/** Volumes waiting for their PV to be saved, each with what its executor keeps for it (`T`), by PV name. */
export class UnsavedVolumes<T> {
  private readonly entries = new Map<string, { value: T; since: number }>();

  constructor(private readonly clock: Clock) {}

  /** The volume was set up; `value` is what its save needs (the pod to delete, the record to drop). */
  add(pvName: string, value: T): void {
    this.entries.set(pvName, { value, since: this.clock.now() });
  }

  /** The PV was saved: what was kept for it, now forgotten; `undefined` when the volume was not waiting. */
  take(pvName: string): T | undefined {
    const entry = this.entries.get(pvName);
    this.entries.delete(pvName);
    return entry?.value;
  }

  /** Whether the volume waits for its PV to be saved, for at most {@link UNSAVED_GRACE_MS}. */
  waiting(pvName: string): boolean {
    const entry = this.entries.get(pvName);
    if (entry === undefined) return false;
    if (this.clock.now() - entry.since < UNSAVED_GRACE_MS) return true;
    this.entries.delete(pvName);
    return false;
  }
}
