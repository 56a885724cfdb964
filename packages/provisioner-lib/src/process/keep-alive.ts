/**
 * Holding the process open while a long-running call of the library is pending.
 *
 * Every timer of the library is unref'd (see `realClock`), and so are idle keep-alive connections, so that a stopped
 * controller never keeps a process alive. The other side of that: a program whose only work is
 * `await controller.run(signal)` has nothing keeping its event loop alive whenever no request is in flight, e.g. a
 * standby between two attempts to acquire the Lease, or any run while the API server is unreachable and only
 * back-off timers are pending. Node then exits with code 13 ("Detected unsettled top-level await"). The calls that
 * run until their signal aborts (`ProvisionController.run`, `LeaderElector.run`) hold the process open from their
 * start until they settle, and release it then, so nothing outlives them.
 */

import { sharedInterval } from './shared-interval.js';

/** The longest delay a Node timer takes (about 24.8 days); the timer's callback does nothing. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

const hold = sharedInterval(() => undefined, MAX_TIMER_DELAY_MS, { ref: true });

/**
 * Keeps the process alive until the returned function is called (calling it again does nothing). All holders share
 * one ref'd timer, cleared when the last one releases it.
 *
 * This is not a clock timer on purpose: it measures no time and runs no code, and it must hold the process with any
 * injected clock.
 */
export function holdProcessOpen(): () => void {
  return hold();
}
