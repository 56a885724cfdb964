/**
 * @packageDocumentation
 * Helpers for testing code built on the library: a fake clock for the time-based parts, and `settle` to wait until
 * a controller has nothing left to do. For an API server to test against, use `@kprov/testkit`.
 */
export { FakeClock, type FakeClockOptions } from './clock/fake-clock.js';
export { settle, type SettleOptions } from './testing/settle.js';
