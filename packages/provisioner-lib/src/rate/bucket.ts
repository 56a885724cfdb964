/**
 * The arithmetic of a token bucket, as `golang.org/x/time/rate.Limiter` does it: the bucket starts full with `burst`
 * tokens and refills continuously at `qps` tokens per second, never above `burst`. Pure: it has no timers and reads
 * no clock; every call says what time it is (ms on the caller's clock). The client's request limiter, the work
 * queue's bucket limiter and the event correlator's spam filter each drive one with their injected clock.
 */

/** Tolerance on the token count, so float rounding of `elapsed × qps` never leaves a due token a hair short. */
const EPSILON = 1e-6;

export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * @param qps - tokens added per second; finite and > 0 (callers check their own ranges).
   * @param burst - bucket size; the bucket starts full.
   * @param now - the time the bucket is created, in ms.
   */
  constructor(
    readonly qps: number,
    readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /** The tokens at `now`: at most `burst`, below 0 while reservations are in debt. Changes nothing. */
  tokensAt(now: number): number {
    if (now <= this.last) return this.tokens;
    // Only as much time as it takes to fill the bucket counts (x/time/rate's guard against overflow).
    const elapsed = Math.min(now - this.last, this.durationFromTokens(this.burst - this.tokens));
    return Math.min(this.tokens + (elapsed * this.qps) / 1000, this.burst);
  }

  /** Milliseconds it takes to accumulate `tokens`, truncated to whole nanoseconds like Go's `time.Duration`. */
  durationFromTokens(tokens: number): number {
    return Math.trunc((1e9 * tokens) / this.qps) / 1e6;
  }

  /**
   * x/time/rate's `Reserve`: takes one token at `now`, going into debt when there is none, and returns how long
   * from `now` until that token exists (0 when there was one).
   */
  reserve(now: number): number {
    this.advance(now);
    this.tokens -= 1;
    return this.tokens < 0 ? this.durationFromTokens(-this.tokens) : 0;
  }

  /** x/time/rate's `Allow`: takes one token if there is one at `now`; otherwise takes nothing and returns false. */
  tryTake(now: number): boolean {
    this.advance(now);
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long from `now` until there is a token to take (0 when there is one). Changes nothing. */
  delayUntilToken(now: number): number {
    const missing = 1 - this.tokensAt(now);
    return missing <= EPSILON ? 0 : this.durationFromTokens(missing);
  }

  private advance(now: number): void {
    this.tokens = this.tokensAt(now);
    this.last = Math.max(this.last, now);
  }
}
