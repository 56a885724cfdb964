/**
 * @packageDocumentation
 * Helpers for testing code built on the library: a fake clock for the time-based parts. For an API server to
 * test against, use `@kprov/testkit`.
 */
export { FakeClock, type FakeClockOptions } from './clock/fake-clock.js';
