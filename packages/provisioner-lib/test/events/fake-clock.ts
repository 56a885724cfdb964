import type { Clock, TimerHandle } from '../../src/clock/clock.js';

interface Timer {
  at: number;
  fn: () => void;
}

/** A manual clock for tests: time moves only with `advance`, which fires the timers that fall due. */
export class FakeClock implements Clock {
  private time = 0;
  private readonly timers = new Set<Timer>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.time + ms, fn };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as Timer);
  }

  advance(ms: number): void {
    this.time += ms;
    for (const timer of [...this.timers].sort((a, b) => a.at - b.at)) {
      if (timer.at <= this.time) {
        this.timers.delete(timer);
        timer.fn();
      }
    }
  }
}
