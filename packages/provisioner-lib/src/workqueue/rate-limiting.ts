import type { QueueOptions } from './queue.js';
import { DelayingQueue } from './delaying.js';
import type { RateLimiter } from './rate-limiters.js';
import { defaultControllerRateLimiter } from './rate-limiters.js';

/** Options for {@link RateLimitingQueue} and {@link newRateLimitingQueue}. */
export interface RateLimitingQueueOptions<T> extends QueueOptions {
  /**
   * Decides the delay of {@link RateLimitingQueue.addRateLimited}.
   * @defaultValue `defaultControllerRateLimiter(clock)` (exponential 5 ms → 1000 s, bucket 10 qps / burst 100)
   */
  rateLimiter?: RateLimiter<T>;
}

/**
 * A {@link DelayingQueue} whose re-adds are paced by a {@link RateLimiter} (client-go's `RateLimitingInterface`,
 * `rate_limiting_queue.go`).
 *
 * The usual worker loop: `get` → process → on success `forget(item)`, on failure `addRateLimited(item)` →
 * always `done(item)` in `finally`. Without `forget`, the limiter keeps counting the item's failures forever.
 */
export class RateLimitingQueue<T> extends DelayingQueue<T> {
  private readonly rateLimiter: RateLimiter<T>;

  /** @param options - see {@link RateLimitingQueueOptions}. */
  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  /**
   * Adds `item` once the rate limiter allows: `addAfter(item, rateLimiter.when(item))`. The limiter is consulted
   * (and records a failure) even when the queue is shutting down, as in client-go.
   */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /**
   * Makes the rate limiter stop tracking `item` (success, or giving up). It only clears the limiter's history;
   * the worker still owes {@link RateLimitingQueue.done}.
   */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times `item` has been rate-limited since it was last forgotten (the limiter's count). */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}

/**
 * Creates a {@link RateLimitingQueue}.
 * @param options - see {@link RateLimitingQueueOptions}; every field is optional.
 */
export function newRateLimitingQueue<T>(options: RateLimitingQueueOptions<T> = {}): RateLimitingQueue<T> {
  return new RateLimitingQueue<T>(options);
}
