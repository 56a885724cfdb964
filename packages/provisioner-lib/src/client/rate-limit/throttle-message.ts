/** A request that waited for a token of its client's rate limiter. */
export interface ThrottledRequest {
  /** How long it waited, in ms on the limiter's clock. */
  waitedMs: number;
  /** HTTP method, e.g. `GET`. */
  verb: string;
  /** Full request URL. */
  url: string;
  /** client-go's log line for it: `Waited for 1.5s due to client-side throttling, not priority and fairness, request: GET:https://...`. */
  message: string;
}

/** Called after a request waited (> 0 ms) for a token; must not throw (errors are ignored). */
export type ThrottleHook = (request: ThrottledRequest) => void;

/** client-go's `longThrottleLatency`: waits longer than this (50 ms) are logged at V(3). */
export const LONG_THROTTLE_LATENCY_MS = 50;

/** client-go's `extraLongThrottleLatency`: waits longer than this (1 s) are logged at default verbosity. */
export const EXTRA_LONG_THROTTLE_LATENCY_MS = 1000;

/** `n` with at most `digits` decimals and no trailing zeros. */
function decimals(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}

/** A duration in ms as Go's `time.Duration.String()` prints it: `1.5s`, `250ms`, `1m30s`, `2h0m0.5s`. */
export function goDuration(ms: number): string {
  const ns = Math.round(ms * 1e6);
  if (ns === 0) return '0s';
  if (ns < 0) return `-${goDuration(-ms)}`;
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${decimals(ns / 1e3, 3)}µs`;
  if (ns < 1e9) return `${decimals(ns / 1e6, 6)}ms`;
  const hours = Math.floor(ns / 3.6e12);
  const minutes = Math.floor((ns % 3.6e12) / 6e10);
  const seconds = decimals((ns % 6e10) / 1e9, 9) || '0';
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** client-go's throttling log line (rest `Request.tryThrottleWithInfo`). */
export function throttleMessage(waitedMs: number, verb: string, url: string): string {
  return `Waited for ${goDuration(waitedMs)} due to client-side throttling, not priority and fairness, request: ${verb}:${url}`;
}
