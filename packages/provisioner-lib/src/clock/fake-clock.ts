import type { Clock, TimerHandle } from './clock.js';

/** Options for {@link FakeClock}. */
export interface FakeClockOptions {
  /**
   * The value `now()` starts at, in milliseconds.
   * @defaultValue `0`
   */
  start?: number;
}

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  /** Creation order: timers due at the same instant fire in the order they were scheduled. */
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * Firings at one instant (without time moving) after which {@link FakeClock.advance} assumes a callback keeps
 * rescheduling itself with no delay and throws instead of spinning forever.
 */
const MAX_FIRINGS_WITHOUT_PROGRESS = 10_000;

// Taken once at load, so a test that later swaps the global timers (vi.useFakeTimers) does not stall advanceAsync.
const realSetImmediate = globalThis.setImmediate;

/** Resolves after every microtask queued so far, and every microtask those queue, has run. */
function flushMicrotasks(): Promise<void> {
  return new Promise<void>((resolve) => {
    realSetImmediate(resolve);
  });
}

/**
 * A {@link Clock} that only moves when told to, for tests. Time starts at `start` (0 by default) and changes only
 * through {@link FakeClock.advance} or {@link FakeClock.advanceAsync}, which fire the timers that fall due, in
 * time order, each with `now()` equal to its due time.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * const queue = newRateLimitingQueue<string>({ clock });
 * queue.addAfter('a', 1000);
 * clock.advance(1000); // 'a' is now queued
 * ```
 */
export class FakeClock implements Clock {
  private nowMs: number;
  private readonly timers = new Map<number, FakeTimer>();
  private nextId = 1;

  /** @param options - see {@link FakeClockOptions}. */
  constructor(options: FakeClockOptions = {}) {
    this.nowMs = options.start ?? 0;
  }

  /** The current fake time in milliseconds. */
  now(): number {
    return this.nowMs;
  }

  /**
   * Schedules `fn` to run `ms` milliseconds from now (a negative or non-number delay counts as 0). It runs only
   * when the clock is advanced to or past that time, never synchronously.
   * @returns a handle for {@link FakeClock.clearTimeout}.
   */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const delay = ms > 0 ? ms : 0;
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.nowMs + delay, seq: id, fn });
    return id;
  }

  /** Cancels a pending timer. Unknown or already fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === 'number') this.timers.delete(handle);
  }

  /** How many timers are scheduled and have neither fired nor been cleared. */
  pending(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing synchronously every timer that falls due on the way, in due-time order
   * (ties in scheduling order), including timers that fired callbacks schedule inside the window. While a callback
   * runs, `now()` is its due time; afterwards `now()` is the old time plus `ms`.
   *
   * Promise continuations started by a callback do not run until the caller yields; use
   * {@link FakeClock.advanceAsync} when the code under test awaits between timers.
   *
   * If a callback throws, the error propagates and the clock stays at that callback's due time.
   * @throws RangeError when `ms` is negative or not finite; Error when callbacks keep scheduling zero-delay
   *   timers at one instant (an endless loop).
   */
  advance(ms: number): void {
    const target = this.target(ms);
    let stalled = 0;
    for (let timer = this.next(target); timer !== undefined; timer = this.next(target)) {
      stalled = this.fire(timer, stalled);
    }
    this.nowMs = target;
  }

  /**
   * Like {@link FakeClock.advance}, but lets pending microtasks (promise chains) run before the first timer,
   * after each fired timer and at the end, so code that awaits between timers makes progress as it would with
   * real time. Only microtasks are flushed; the flush yields to the event loop through the real `setImmediate`.
   * @throws see {@link FakeClock.advance}; errors are delivered as a rejection.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.target(ms);
    await flushMicrotasks();
    let stalled = 0;
    for (let timer = this.next(target); timer !== undefined; timer = this.next(target)) {
      stalled = this.fire(timer, stalled);
      await flushMicrotasks();
    }
    this.nowMs = target;
    await flushMicrotasks();
  }

  private target(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`FakeClock can only advance by a finite, non-negative number of ms (got ${ms})`);
    }
    return this.nowMs + ms;
  }

  /** The earliest timer due at or before `target`, if any. */
  private next(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.due > target) continue;
      if (best === undefined || timer.due < best.due || (timer.due === best.due && timer.seq < best.seq)) {
        best = timer;
      }
    }
    return best;
  }

  /** Fires `timer`; returns the updated count of consecutive firings without time moving. */
  private fire(timer: FakeTimer, stalled: number): number {
    const count = timer.due === this.nowMs ? stalled + 1 : 0;
    if (count > MAX_FIRINGS_WITHOUT_PROGRESS) {
      throw new Error(
        `FakeClock fired ${MAX_FIRINGS_WITHOUT_PROGRESS} timers at ${this.nowMs} ms without time moving; ` +
          'a callback probably reschedules itself with no delay',
      );
    }
    this.timers.delete(timer.id);
    this.nowMs = timer.due;
    timer.fn();
    return count;
  }
}
