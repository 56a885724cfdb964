/**
 * Runs a {@link FakeClock} on its own, faster than real time, for tests whose controller talks to a real (in-process)
 * API server: every real millisecond or so, the clock moves on by `stepMs`. The steps are timers of the same event
 * loop as the requests, so a busy loop slows the fake clock down too: a request takes as many fake steps as it takes
 * event-loop turns, never a fake eternity.
 */
import type { FakeClock } from '../../src/clock/fake-clock.js';

/** Options of {@link driveClock}. */
export interface ClockDriverOptions {
  /** Fake milliseconds per step. Default 10. */
  stepMs?: number;
  /** Real milliseconds between steps. Default 1. */
  everyMs?: number;
}

/** Starts moving `clock` forward; the returned function stops it. */
export function driveClock(clock: FakeClock, options: ClockDriverOptions = {}): () => void {
  const stepMs = options.stepMs ?? 10;
  const timer = setInterval(() => clock.advance(stepMs), options.everyMs ?? 1);
  return () => clearInterval(timer);
}
