import { realClock, type Clock } from '../../clock/clock.js';
import type { Logger } from '../../logging/logger.js';
import { EXTRA_LONG_THROTTLE_LATENCY_MS, LONG_THROTTLE_LATENCY_MS, type ThrottleHook } from './throttle-message.js';

/** Options of {@link logThrottledRequests}. */
export interface ThrottleLogOptions {
  /**
   * Least time between two info lines, in ms. Default 10 000 (client-go's interval for its default verbosity);
   * waits in between still get their debug line.
   */
  minIntervalMs?: number;
  /** Time source for `minIntervalMs`. Default {@link realClock}. */
  clock?: Clock;
}

/**
 * A hook for `setClientRateLimit`'s `onThrottled` that logs as client-go's REST client does: every wait longer than
 * 50 ms (client-go's `longThrottleLatency`) at debug, and a wait longer than 1 s (`extraLongThrottleLatency`)
 * at info, at most once per `minIntervalMs`. The message is client-go's: `Waited for <d> due to
 * client-side throttling, not priority and fairness, request: <VERB>:<URL>`.
 */
export function logThrottledRequests(logger: Logger, options: ThrottleLogOptions = {}): ThrottleHook {
  const clock = options.clock ?? realClock;
  const minIntervalMs = options.minIntervalMs ?? 10_000;
  let lastInfo: number | undefined;
  return ({ waitedMs, message }) => {
    if (waitedMs > EXTRA_LONG_THROTTLE_LATENCY_MS) {
      const now = clock.now();
      if (lastInfo === undefined || now - lastInfo >= minIntervalMs) {
        lastInfo = now;
        logger.info({}, message);
        return;
      }
    }
    if (waitedMs > LONG_THROTTLE_LATENCY_MS) logger.debug({}, message);
  };
}
