import { realClock, type Clock, type TimerHandle } from '../../clock/clock.js';
import { TokenBucket } from '../../rate/bucket.js';

/**
 * How a request waits for a token. `normal` requests are served first come, first served; `low` ones (the event
 * recorder's writes) get a token only when no `normal` request waits for one, so a burst of Events never delays the
 * writes the Events are about. client-go gets the same effect from its single event-writing goroutine, which never
 * has more than one request waiting.
 */
export type RequestPriority = 'normal' | 'low';

/**
 * What a client waits on before each request: client-go's `flowcontrol.RateLimiter`, with the waiting form as a
 * promise. The work queue's `RateLimiter` (which returns a delay per item) is a different thing.
 */
export interface RequestRateLimiter {
  /** Takes a token if one is free now and nobody is waiting for one; never waits. */
  tryAccept(): boolean;
  /**
   * Waits for a token; waiters are served in the order they called. Resolves with how long the caller waited, in
   * ms on the limiter's clock (0 when a token was free). Rejects with `signal.reason` when `signal` aborts first;
   * an aborted waiter takes no token. A limiter that knows priorities serves `low` waiters only when no `normal`
   * one waits; one that does not may ignore `priority`.
   */
  accept(signal?: AbortSignal, priority?: RequestPriority): Promise<number>;
  /** Tokens added per second. */
  readonly qps: number;
}

/** Options of {@link TokenBucketRateLimiter}. */
export interface TokenBucketOptions {
  /** Tokens added per second; a finite number > 0 (fractions allowed: 0.5 is one request every 2 s). Required. */
  qps: number;
  /** Bucket size: the requests that may go at once from a full bucket; an integer >= 1. Required. */
  burst: number;
  /** Time source. Default {@link realClock}. */
  clock?: Clock;
}

interface Waiter {
  readonly since: number;
  readonly queue: Waiter[];
  readonly resolve: (waitedMs: number) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * client-go's `NewTokenBucketRateLimiter(qps, burst)`: a `golang.org/x/time/rate` bucket that starts full with
 * `burst` tokens and refills at `qps` tokens per second, where every request waits for a token. Waiters are served
 * first come, first served; {@link TokenBucketRateLimiter.tryAccept} fails while anyone waits, as a Go reservation
 * queue would. `low` priority waiters (see {@link RequestPriority}) come after every `normal` one, and a `low`
 * request takes even a free token only when nobody waits.
 *
 * Hand-written rather than taken from npm: the maintained token buckets there (`limiter`, `p-throttle`,
 * `bottleneck`) either read the system time (no injectable clock for tests), cannot cancel a waiter through an
 * `AbortSignal` without losing its token, or are schedulers with far more than a bucket.
 */
export class TokenBucketRateLimiter implements RequestRateLimiter {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private readonly bucket: TokenBucket;
  /** `normal` waiters, then `low` ones: each first come, first served. */
  private readonly waiters: Waiter[] = [];
  private readonly lowWaiters: Waiter[] = [];
  /** The timer for the head waiter (boxed: a `TimerHandle` may be any value). */
  private timer: { handle: TimerHandle } | undefined;

  /**
   * @param options - see {@link TokenBucketOptions}.
   * @throws RangeError naming `qps` or `burst` when it is out of range.
   */
  constructor(options: TokenBucketOptions) {
    const { qps, burst } = options;
    if (typeof qps !== 'number' || !Number.isFinite(qps) || qps <= 0) {
      throw new RangeError(
        `TokenBucketRateLimiter qps must be a finite number > 0, got ${String(qps)}; for no limit, use no limiter`,
      );
    }
    if (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 1) {
      throw new RangeError(`TokenBucketRateLimiter burst must be an integer >= 1, got ${String(burst)}`);
    }
    this.qps = qps;
    this.burst = burst;
    this.clock = options.clock ?? realClock;
    this.bucket = new TokenBucket(qps, burst, this.clock.now());
  }

  /** Callers waiting for a token. */
  get waiting(): number {
    return this.waiters.length + this.lowWaiters.length;
  }

  tryAccept(): boolean {
    if (this.waiters.length > 0 || this.lowWaiters.length > 0) return false;
    return this.bucket.tryTake(this.clock.now());
  }

  accept(signal?: AbortSignal, priority: RequestPriority = 'normal'): Promise<number> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    if (this.tryAccept()) return Promise.resolve(0);
    return new Promise<number>((resolve, reject) => {
      const queue = priority === 'low' ? this.lowWaiters : this.waiters;
      const waiter: Waiter = {
        since: this.clock.now(),
        queue,
        resolve,
        signal,
        onAbort: () => {
          const wasHead = this.head() === waiter;
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          if (wasHead) this.schedule();
          reject(signal?.reason as Error);
        },
      };
      const wasEmpty = this.head() === undefined;
      queue.push(waiter);
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      if (wasEmpty) this.schedule();
    });
  }

  /** The waiter served next. */
  private head(): Waiter | undefined {
    return this.waiters[0] ?? this.lowWaiters[0];
  }

  /** (Re)arms the one timer: when the head waiter's token will exist. */
  private schedule(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer.handle);
    this.timer = undefined;
    if (this.head() === undefined) return;
    const delayMs = this.bucket.delayUntilToken(this.clock.now());
    this.timer = {
      handle: this.clock.setTimeout(() => {
        this.timer = undefined;
        this.grant();
      }, delayMs),
    };
  }

  /** Hands out the tokens that exist now, oldest waiter first, then waits for the next. */
  private grant(): void {
    for (;;) {
      const waiter = this.head();
      if (waiter === undefined || !this.bucket.tryTake(this.clock.now())) break;
      waiter.queue.shift();
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.clock.now() - waiter.since);
    }
    this.schedule();
  }
}
