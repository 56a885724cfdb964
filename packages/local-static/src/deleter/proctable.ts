/**
 * Upstream's ProcTable: the state of the in-process cleanup of each volume, kept across config changes, with
 * cumulative counts for the metrics.
 *
 * @module
 */
import type { Gauge } from '@kprov/provisioner-lib';

/** The state of one cleanup. */
export type CleanupState = 'Running' | 'Succeeded' | 'Failed';

/** One cleanup: when it started (monotonic ms of the provisioner's clock), its state, and why it failed. */
export interface CleanupEntry {
  startMs: number;
  state: CleanupState;
  /** Why it failed (a timeout says so). */
  error?: string;
}

/** The gauges the table keeps current. */
export interface ProcTableGauges {
  procRunning: Gauge;
  procSucceeded: Gauge;
  procFailed: Gauge;
}

/** Cleanups by PV name. */
export class ProcTable {
  private readonly entries = new Map<string, CleanupEntry>();
  private succeeded = 0;
  private failed = 0;

  constructor(private readonly gauges?: ProcTableGauges) {
    this.report();
  }

  /** Whether a cleanup of `pvName` is running. */
  isRunning(pvName: string): boolean {
    return this.entries.get(pvName)?.state === 'Running';
  }

  /** The entry of `pvName`, if any. */
  get(pvName: string): CleanupEntry | undefined {
    return this.entries.get(pvName);
  }

  /** Marks a new cleanup of `pvName` as running. @throws Error when there is an entry for it already. */
  markRunning(pvName: string, startMs: number): void {
    if (this.entries.has(pvName)) throw new Error(`cleanup of ${pvName} is already tracked`);
    this.entries.set(pvName, { startMs, state: 'Running' });
    this.report();
  }

  /** Marks the running cleanup of `pvName` as done. */
  markDone(pvName: string, ok: boolean, error?: string): void {
    const entry = this.entries.get(pvName);
    if (entry === undefined) return;
    entry.state = ok ? 'Succeeded' : 'Failed';
    if (error !== undefined) entry.error = error;
    if (ok) this.succeeded++;
    else this.failed++;
    this.report();
  }

  /**
   * Removes the finished entry of `pvName` and returns it; `undefined` when there is none.
   *
   * @throws Error when the cleanup is still running.
   */
  remove(pvName: string): CleanupEntry | undefined {
    const entry = this.entries.get(pvName);
    if (entry?.state === 'Running') throw new Error(`cleanup of ${pvName} is still running`);
    this.entries.delete(pvName);
    return entry;
  }

  /** Running cleanups now, and succeeded and failed ones since the start. */
  stats(): { running: number; succeeded: number; failed: number } {
    let running = 0;
    for (const e of this.entries.values()) if (e.state === 'Running') running++;
    return { running, succeeded: this.succeeded, failed: this.failed };
  }

  private report(): void {
    if (this.gauges === undefined) return;
    const s = this.stats();
    this.gauges.procRunning.set({}, s.running);
    this.gauges.procSucceeded.set({}, s.succeeded);
    this.gauges.procFailed.set({}, s.failed);
  }
}
