import type { KubeConfig } from '@kubernetes/client-node';
import { realClock, type Clock, type TimerHandle } from '../../clock/clock.js';
import type { RequestPriority } from './token-bucket.js';

/**
 * How long a `low` request (an Event write) waits for the `normal` requests in flight (PV writes) before it goes
 * anyway, in ms: 1 s. A burst of provisions that ends within it has its Events written after its PVs.
 */
export const LOW_PRIORITY_HOLD_MS = 1000;

/** Options of {@link InFlightRequests}. */
export interface InFlightRequestsOptions {
  /**
   * How long a `low` request waits while `normal` requests are in flight before it may start, one at a time.
   * @defaultValue {@link LOW_PRIORITY_HOLD_MS}
   */
  holdMs?: number;
  /** @defaultValue {@link realClock} */
  clock?: Clock;
}

/** A `low` request waiting to start. */
interface Waiter {
  /** When its hold is over, on the clock: when it first asked to start, plus the hold. */
  readonly due: number;
  readonly wake: () => void;
}

/**
 * The requests of one KubeConfig in flight, by priority. A `low` request (an Event write) starts at once while no
 * `normal` request is in flight. While some are (the workers are writing PVs), it waits: for them to be through, or
 * for {@link InFlightRequestsOptions.holdMs} to pass, and then it goes one at a time, as client-go's single
 * event-writing goroutine sends Events. So the server spends a burst's time on the writes the Events are about,
 * the Events of a short burst follow its PVs, and under steady load they trail by at most the hold; once the PV
 * writes are through, the Events that wait go at the recorder's full concurrency.
 *
 * The client-side rate limit (the token bucket) orders requests that wait for a token; this orders the ones that
 * would not wait at all, which is every request when there is no client-side limit (the library's default).
 */
export class InFlightRequests {
  private readonly holdMs: number;
  private readonly clock: Clock;
  private normal = 0;
  private low = 0;
  /** `low` requests waiting to start, oldest first. */
  private readonly waiting: Waiter[] = [];
  /** Wakes the oldest waiter when its hold is over. */
  private timer: TimerHandle = undefined;

  /** @param options - see {@link InFlightRequestsOptions}. */
  constructor(options: InFlightRequestsOptions = {}) {
    this.holdMs = options.holdMs ?? LOW_PRIORITY_HOLD_MS;
    this.clock = options.clock ?? realClock;
  }

  /** Requests in flight now, by priority. */
  get inFlight(): { normal: number; low: number } {
    return { normal: this.normal, low: this.low };
  }

  /**
   * Waits until a request of `priority` may start and counts it in flight; resolves with the function that counts
   * it out (call it once the response is read or the request failed). `normal` requests never wait. Rejects with
   * `signal.reason` when `signal` aborts while a `low` request waits; it is then not counted.
   */
  async start(priority: RequestPriority = 'normal', signal?: AbortSignal): Promise<() => void> {
    if (priority === 'normal') {
      this.normal += 1;
      return this.once(() => {
        this.normal -= 1;
        if (this.normal === 0) this.wakeAll();
      });
    }
    const due = this.clock.now() + this.holdMs;
    while (!this.mayStartLow(due)) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          const i = this.waiting.indexOf(waiter);
          if (i !== -1) this.waiting.splice(i, 1);
          reject(signal?.reason as Error);
        };
        const waiter: Waiter = {
          due,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.enqueue(waiter);
        this.arm();
      });
    }
    this.low += 1;
    return this.once(() => {
      this.low -= 1;
      if (this.normal === 0) this.wakeAll();
      else this.wakeOldestIfDue();
    });
  }

  private mayStartLow(due: number): boolean {
    return this.normal === 0 || (this.low === 0 && this.clock.now() >= due);
  }

  /** Queues `waiter` in the order the requests first asked (a woken one that may not start yet keeps its place). */
  private enqueue(waiter: Waiter): void {
    let i = this.waiting.length;
    while (i > 0 && (this.waiting[i - 1]?.due ?? 0) > waiter.due) i--;
    this.waiting.splice(i, 0, waiter);
  }

  /** While `normal` requests are in flight and no `low` one is, wakes the oldest waiter once its hold is over. */
  private arm(): void {
    const oldest = this.waiting[0];
    if (this.timer !== undefined || oldest === undefined || this.normal === 0 || this.low > 0) return;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.wakeOldestIfDue();
      },
      Math.max(0, oldest.due - this.clock.now()),
    );
  }

  private wakeOldestIfDue(): void {
    const oldest = this.waiting[0];
    if (oldest === undefined || this.low > 0) return;
    if (this.mayStartLow(oldest.due)) {
      this.waiting.shift();
      oldest.wake();
    } else this.arm();
  }

  /** Lets every waiting `low` request check again (each one that may start does; the rest wait on). */
  private wakeAll(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.waiting.splice(0)) waiter.wake();
  }

  private once(fn: () => void): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      fn();
    };
  }
}

const perConfig = new WeakMap<KubeConfig, InFlightRequests>();

/** The {@link InFlightRequests} of `kc`: one per KubeConfig, shared by every lean client made from it. */
export function inFlightRequests(kc: KubeConfig): InFlightRequests {
  let requests = perConfig.get(kc);
  if (requests === undefined) {
    requests = new InFlightRequests();
    perConfig.set(kc, requests);
  }
  return requests;
}
