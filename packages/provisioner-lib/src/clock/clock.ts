/** Opaque timer handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = unknown;

/**
 * Time source for everything time-based in the library (queues, rate limiters, backoff, leader election), so
 * tests can drive it with fake timers. `now()` is monotonic milliseconds: only differences are meaningful.
 */
export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `performance.now()` and Node timers (unref'd, so they never keep a process alive alone). */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when aborted first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal that aborts after a time on a {@link Clock}, and the means to cancel that timer. */
export interface ClockTimeout {
  /** Aborts `ms` after {@link timeoutSignal} was called, with a `TimeoutError` as `AbortSignal.timeout` does. */
  readonly signal: AbortSignal;
  /** Cancels the timer (once the operation it bounds has ended); the signal then never aborts. */
  clear(): void;
}

/**
 * `AbortSignal.timeout(ms)` on `clock`: the signal aborts with `reason` (default a `DOMException` named
 * `TimeoutError`, as `AbortSignal.timeout`'s) when `ms` have passed on the clock. Call `clear` when the bounded
 * operation ends, so the timer does not outlive it.
 */
export function timeoutSignal(
  clock: Clock,
  ms: number,
  reason: () => unknown = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
): ClockTimeout {
  const controller = new AbortController();
  const handle = clock.setTimeout(() => controller.abort(reason()), ms);
  return { signal: controller.signal, clear: () => clock.clearTimeout(handle) };
}
