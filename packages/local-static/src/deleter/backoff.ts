/**
 * Per-volume backoff of failed cleanups: a volume whose cleanup failed is not tried again before its delay has passed.
 * The first delay is the discovery period, each failure in a row doubles it, up to a cap (client-go's
 * `ItemExponentialFailureRateLimiter`, as its controllers' work queues retry an item); a success, or the PV gone (a PV
 * published again has another UID), starts the volume over.
 *
 * @module
 */
import { ItemExponentialFailureRateLimiter, type Clock } from '@kprov/provisioner-lib';

/** Longest wait between two cleanup attempts of one volume: 5 minutes. */
export const DEFAULT_CLEANUP_BACKOFF_MAX_MS = 5 * 60_000;

/** When each volume, by PV UID, may be tried again. */
export class CleanupBackoff {
  private readonly limiter: ItemExponentialFailureRateLimiter<string>;
  private readonly notBefore = new Map<string, number>();

  /**
   * @param clock - time source of the delays.
   * @param baseMs - delay after a volume's first failure (the discovery period).
   * @param maxMs - cap of the delay. Default {@link DEFAULT_CLEANUP_BACKOFF_MAX_MS}.
   */
  constructor(
    private readonly clock: Clock,
    baseMs: number,
    maxMs = DEFAULT_CLEANUP_BACKOFF_MAX_MS,
  ) {
    this.limiter = new ItemExponentialFailureRateLimiter<string>(baseMs, Math.max(baseMs, maxMs));
  }

  /** Counts one more failure of volume `uid` in a row; returns how long it now waits, in ms. */
  failed(uid: string): number {
    const delay = this.limiter.when(uid);
    this.notBefore.set(uid, this.clock.now() + delay);
    return delay;
  }

  /** Failures of volume `uid` in a row. */
  failures(uid: string): number {
    return this.limiter.numRequeues(uid);
  }

  /** How long volume `uid` still waits, in ms; 0 when it may be tried now. */
  remaining(uid: string): number {
    const at = this.notBefore.get(uid);
    return at === undefined ? 0 : Math.max(0, at - this.clock.now());
  }

  /** Starts volume `uid` over (its cleanup succeeded). */
  reset(uid: string): void {
    this.limiter.forget(uid);
    this.notBefore.delete(uid);
  }

  /** Starts over every volume whose UID is not in `live` (its PV is gone). */
  retain(live: ReadonlySet<string | undefined>): void {
    for (const uid of [...this.notBefore.keys()]) if (!live.has(uid)) this.reset(uid);
  }
}
