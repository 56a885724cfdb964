import type { Clock } from '../clock/clock.js';
import { realClock } from '../clock/clock.js';
import { TokenBucket } from '../rate/bucket.js';

/**
 * Decides how long an item waits before it is re-added (client-go's `RateLimiter`, `default_rate_limiters.go`).
 * Limiters are plain objects without timers; the delaying queue owns the only timer.
 */
export interface RateLimiter<T> {
  /** How many milliseconds `item` should wait now. Counts as one more failure of `item` where relevant. */
  when(item: T): number;
  /** Stops tracking `item` (after success, or when giving up on it). */
  forget(item: T): void;
  /** How many failures of `item` are tracked. */
  numRequeues(item: T): number;
}

/**
 * Per-item exponential backoff: the n-th `when` for an item (counting from 0 since the last `forget`) returns
 * `baseMs · 2^n`, capped at `maxMs`. Giving up after too many failures is left to the caller
 * ({@link ItemExponentialFailureRateLimiter.numRequeues}).
 */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  /**
   * @param baseMs - delay after the first failure, in ms.
   * @param maxMs - upper bound of any delay, in ms.
   */
  constructor(baseMs: number, maxMs: number) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  /** Returns `baseMs · 2^failures` (at most `maxMs`) and counts one more failure. */
  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    if (this.baseMs <= 0) return 0;
    // 2 ** exp becomes Infinity past 1023 instead of overflowing; either way the cap applies.
    const backoff = this.baseMs * 2 ** exp;
    return backoff > this.maxMs ? this.maxMs : backoff;
  }

  /** Number of `when` calls for `item` since it was last forgotten. */
  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }

  /** Resets the failure count of `item`. */
  forget(item: T): void {
    this.failures.delete(item);
  }
}

/**
 * A token bucket shared by all items, like `golang.org/x/time/rate.Limiter`: it starts full with `burst` tokens
 * and refills at `qps` tokens per second. Each `when` reserves one token and returns how long to wait until that
 * token exists (0 while tokens are left). It only shapes the overall retry rate: `numRequeues` is always 0 and
 * `forget` does nothing.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private readonly clock: Clock;
  /** Undefined for an infinite `qps`, which never delays. */
  private readonly bucket: TokenBucket | undefined;

  /**
   * @param qps - refill rate in tokens per second; `Infinity` never delays.
   * @param burst - bucket size, the number of immediate reservations from a full bucket.
   * @param clock - time source. Defaults to the real clock.
   * @throws RangeError unless `qps > 0` and (for a finite `qps`) `burst >= 1`. Go's limiter accepts such values
   *   and then delays forever.
   */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!(qps > 0)) throw new RangeError(`BucketRateLimiter qps must be > 0 (got ${qps})`);
    if (qps !== Infinity && !(burst >= 1)) throw new RangeError(`BucketRateLimiter burst must be >= 1 (got ${burst})`);
    this.clock = clock;
    this.bucket = qps === Infinity ? undefined : new TokenBucket(qps, burst, clock.now());
  }

  /** Reserves one token; returns the ms until it is available. */
  when(_item: T): number {
    return this.bucket?.reserve(this.clock.now()) ?? 0;
  }

  /** Always 0: the bucket does not track items. */
  numRequeues(_item: T): number {
    return 0;
  }

  /** Does nothing: the bucket does not track items. */
  forget(_item: T): void {
    // Nothing to forget.
  }
}

/**
 * Per-item: `fastMs` for the first `maxFastAttempts` failures of an item, `slowMs` after that.
 */
export class ItemFastSlowRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  private readonly fastMs: number;
  private readonly slowMs: number;
  private readonly maxFastAttempts: number;

  /**
   * @param fastMs - delay for the first `maxFastAttempts` failures, in ms.
   * @param slowMs - delay for later failures, in ms.
   * @param maxFastAttempts - how many failures get the fast delay.
   */
  constructor(fastMs: number, slowMs: number, maxFastAttempts: number) {
    this.fastMs = fastMs;
    this.slowMs = slowMs;
    this.maxFastAttempts = maxFastAttempts;
  }

  /** Counts one more failure and returns the fast or the slow delay. */
  when(item: T): number {
    const failures = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, failures);
    return failures <= this.maxFastAttempts ? this.fastMs : this.slowMs;
  }

  /** Number of `when` calls for `item` since it was last forgotten. */
  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }

  /** Resets the failure count of `item`. */
  forget(item: T): void {
    this.failures.delete(item);
  }
}

/**
 * Combines limiters by taking the worst case. `when` calls every child, so a token bucket child spends a token on
 * every call even when another child's delay is longer; the bucket's burst can therefore look exceeded, because
 * some items were separately delayed longer. This is client-go's behaviour, kept for parity.
 */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: readonly RateLimiter<T>[];

  /** @param limiters - the children, all consulted on every call. */
  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  /** The largest delay returned by the children (0 without children). */
  when(item: T): number {
    let max = 0;
    for (const limiter of this.limiters) {
      const delay = limiter.when(item);
      if (delay > max) max = delay;
    }
    return max;
  }

  /** The largest failure count among the children. */
  numRequeues(item: T): number {
    let max = 0;
    for (const limiter of this.limiters) {
      const n = limiter.numRequeues(item);
      if (n > max) max = n;
    }
    return max;
  }

  /** Forwards to every child. */
  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }
}

/** Caps the delays of another limiter at `maxMs`. */
export class WithMaxWaitRateLimiter<T> implements RateLimiter<T> {
  private readonly limiter: RateLimiter<T>;
  private readonly maxMs: number;

  /**
   * @param limiter - the limiter whose delays are capped.
   * @param maxMs - the longest delay returned, in ms.
   */
  constructor(limiter: RateLimiter<T>, maxMs: number) {
    this.limiter = limiter;
    this.maxMs = maxMs;
  }

  /** The wrapped limiter's delay, at most `maxMs`. */
  when(item: T): number {
    const delay = this.limiter.when(item);
    return delay > this.maxMs ? this.maxMs : delay;
  }

  /** Forwards to the wrapped limiter. */
  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  /** Forwards to the wrapped limiter. */
  forget(item: T): void {
    this.limiter.forget(item);
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: the worse of per-item exponential backoff 5 ms → 1000 s and an
 * overall token bucket of 10 qps with burst 100.
 * @param clock - time source of the bucket. Defaults to the real clock.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(10, 100, clock),
  );
}

/** client-go's `DefaultItemBasedRateLimiter`: per-item exponential backoff 1 ms → 1000 s, no bucket. */
export function defaultItemBasedRateLimiter<T>(): RateLimiter<T> {
  return new ItemExponentialFailureRateLimiter<T>(1, 1_000_000);
}

/**
 * The limiter sig-storage-lib-external-provisioner builds for its claim and volume queues: the worse of per-item
 * exponential backoff 15 s → 1000 s (delays 15, 30, 60, …, 960, 1000, 1000 … s) and a token bucket of 10 qps with
 * burst 100. With `exponentialBackOffOnError` false the per-item part is a constant 15 s (15 s → 15 s), so
 * failures are still counted by {@link RateLimiter.numRequeues}.
 * @param exponentialBackOffOnError - the controller's `ExponentialBackOffOnError` option (true in Go).
 * @param clock - time source of the bucket. Defaults to the real clock.
 */
export function provisionerRateLimiter<T>(
  exponentialBackOffOnError: boolean,
  clock: Clock = realClock,
): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(15_000, exponentialBackOffOnError ? 1_000_000 : 15_000),
    new BucketRateLimiter<T>(10, 100, clock),
  );
}

/** Options of {@link backoffRateLimiter}. Times in ms. */
export interface BackoffRateLimiterOptions {
  /** Delay after an item's first failure. Default 15 000 (the Go library's). */
  baseMs?: number;
  /** Longest delay of one item. Default 1 000 000 (1000 s, the Go library's). */
  maxMs?: number;
  /**
   * Retries per second over all items: a token bucket every item shares (and, as the controller gives one limiter
   * to both queues, claims and volumes share). Default 10; 0 for no overall limit.
   */
  qps?: number;
  /** Burst of that bucket: retries that start at once from a full bucket. Default 100. */
  burst?: number;
  /** Time source of the bucket. Default the real clock. */
  clock?: Clock;
}

/**
 * A per-item back-off limiter, for the controller's `rateLimiter` (or `createProvisionedPVLimiter`): an item's n-th
 * failure in a row waits `baseMs · 2^(n-1)`, at most `maxMs`, and across all items no more than `qps` retries per
 * second start (burst `burst`): the worse of {@link ItemExponentialFailureRateLimiter} and
 * {@link BucketRateLimiter}, as {@link MaxOfRateLimiter} combines them. A success (`forget`) starts an item over.
 *
 * Without options it is the controller's default limiter (`provisionerRateLimiter(true)`: 15 s doubling to 1000 s,
 * 10 per second, burst 100).
 *
 * @example
 * ```ts
 * // Retry a failing claim or volume after 1 s, 2 s, 4 s, … at most 5 min, never more than 10 retries per second.
 * new ProvisionController({ kubeConfig, provisionerName, provisioner, rateLimiter: backoffRateLimiter({ baseMs: 1_000, maxMs: 300_000 }) });
 * ```
 * @throws RangeError when `baseMs` is negative, `maxMs` is below `baseMs`, `qps` is negative, or `burst` is below 1
 *   while `qps` is set.
 */
export function backoffRateLimiter<T = string>(options: BackoffRateLimiterOptions = {}): RateLimiter<T> {
  const { baseMs = 15_000, maxMs = 1_000_000, qps = 10, burst = 100, clock = realClock } = options;
  if (!(baseMs >= 0)) throw new RangeError(`backoffRateLimiter baseMs must be >= 0 (got ${baseMs})`);
  if (!(maxMs >= baseMs)) throw new RangeError(`backoffRateLimiter maxMs must be >= baseMs ${baseMs} (got ${maxMs})`);
  if (!(qps >= 0)) throw new RangeError(`backoffRateLimiter qps must be >= 0 (got ${qps})`);
  const perItem = new ItemExponentialFailureRateLimiter<T>(baseMs, maxMs);
  if (qps === 0) return perItem;
  if (!(burst >= 1)) throw new RangeError(`backoffRateLimiter burst must be >= 1 (got ${burst})`);
  return new MaxOfRateLimiter<T>(perItem, new BucketRateLimiter<T>(qps, burst, clock));
}
