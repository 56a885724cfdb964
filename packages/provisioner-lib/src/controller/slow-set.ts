import type { Clock } from '../clock/clock.js';

/** Thrown (internally) while a claim waits out its slow-retry window; counts as an error for the queue, as in Go. */
export class DelayRetryError extends Error {
  override readonly name = 'DelayRetryError';
}

/**
 * Claims whose provisioning failed as infeasible, each with the window end and the UID of the class it failed
 * with (csi-lib-utils' slowset). A changed class (recreated or fixed) clears the entry.
 */
export class SlowSet {
  private readonly entries = new Map<string, { until: number; classUid: string }>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
  ) {}

  /** Adds a claim; a claim already present keeps its window. */
  add(claimUid: string, classUid: string): void {
    if (!this.has(claimUid)) this.entries.set(claimUid, { until: this.clock.now() + this.windowMs, classUid });
  }

  has(claimUid: string): boolean {
    const e = this.entries.get(claimUid);
    if (e === undefined) return false;
    if (e.until <= this.clock.now()) {
      this.entries.delete(claimUid);
      return false;
    }
    return true;
  }

  remove(claimUid: string): void {
    this.entries.delete(claimUid);
  }

  /** Milliseconds left for a claim with the given current class UID; 0 when it may be retried. */
  remaining(claimUid: string, classUid: string | undefined): number {
    if (!this.has(claimUid)) return 0;
    const e = this.entries.get(claimUid);
    if (e === undefined) return 0;
    if (classUid === undefined) return 0;
    if (e.classUid !== classUid) {
      this.entries.delete(claimUid);
      return 0;
    }
    return Math.max(0, e.until - this.clock.now());
  }
}
