import type { KubeConfig } from '@kubernetes/client-node';
import { realClock, type Clock } from '../../clock/clock.js';
import { throttleMessage, type ThrottleHook } from './throttle-message.js';
import { TokenBucketRateLimiter, type RequestPriority, type RequestRateLimiter } from './token-bucket.js';

/** client-go's `rest.DefaultQPS`: used when {@link ClientRateLimitOptions.qps} is 0 or not given. */
export const DEFAULT_CLIENT_QPS = 5;

/** client-go's `rest.DefaultBurst`: used when {@link ClientRateLimitOptions.burst} is 0 or not given. */
export const DEFAULT_CLIENT_BURST = 10;

/** Options of {@link setClientRateLimit}, read as client-go reads `rest.Config.QPS` and `Burst`. */
export interface ClientRateLimitOptions {
  /**
   * Requests per second once the burst is spent. 0 means {@link DEFAULT_CLIENT_QPS}; a negative value means no
   * client-side limit. Default {@link DEFAULT_CLIENT_QPS} (5).
   */
  qps?: number;
  /** Requests that may go at once; an integer. 0 means {@link DEFAULT_CLIENT_BURST}. Default {@link DEFAULT_CLIENT_BURST} (10). */
  burst?: number;
  /** Time source of the token bucket and of the waits reported to `onThrottled`. Default {@link realClock}. */
  clock?: Clock;
  /** Called after each request that had to wait for a token (see `logThrottledRequests`). Default none. */
  onThrottled?: ThrottleHook;
}

interface Registration {
  readonly limiter: TokenBucketRateLimiter;
  readonly clock: Clock;
  readonly onThrottled: ThrottleHook | undefined;
}

const registry = new WeakMap<KubeConfig, Registration>();

/** `value` when it is a number, else `fallback`; 0 also gives `fallback` (client-go's rule for QPS and Burst). */
function orDefault(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined || value === 0) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new RangeError(`setClientRateLimit ${name} must be a number, got ${String(value)}`);
  }
  return value;
}

/**
 * Sets the client-side rate limit of everything made from `kc` by `makeApiClient` and `watchWithAgent` (and so of a `ProvisionController`, its informers and its event writes): one token
 * bucket for all of them, as client-go shares one per clientset. Every request, and every watch connection (once,
 * not per event), waits for a token before it is sent. Clients look the limit up per request, so those made
 * before this call follow it too.
 *
 * Nothing is limited until this is called: unlike client-go, whose `rest.Config` defaults to 5 QPS and burst 10,
 * the library applies no limit by default. `null`, or a negative `qps`, removes the limit.
 *
 * Leader election keeps its own budget: `makeLeaseClient` gives the lease client a separate bucket with the same
 * `qps` and `burst`, as the CSI sidecars give it a separate clientset.
 *
 * @param options - see {@link ClientRateLimitOptions}; `null` for no limit.
 * @returns the new limiter, or undefined when there is no limit.
 * @throws RangeError when `qps` or `burst` is not a number, or `burst` is not a positive integer.
 */
export function setClientRateLimit(
  kc: KubeConfig,
  options: ClientRateLimitOptions | null,
): RequestRateLimiter | undefined {
  const qps = options === null ? -1 : orDefault('qps', options.qps, DEFAULT_CLIENT_QPS);
  if (options === null || qps < 0) {
    registry.delete(kc);
    return undefined;
  }
  const burst = orDefault('burst', options.burst, DEFAULT_CLIENT_BURST);
  if (!Number.isInteger(burst) || burst < 1) {
    throw new RangeError(
      `setClientRateLimit burst must be a positive integer (or 0 for the default ${DEFAULT_CLIENT_BURST}), got ${burst}`,
    );
  }
  if (!Number.isFinite(qps))
    throw new RangeError(`setClientRateLimit qps must be finite, got ${qps}; use a negative qps for no limit`);
  const clock = options.clock ?? realClock;
  const limiter = new TokenBucketRateLimiter({ qps, burst, clock });
  registry.set(kc, { limiter, clock, onThrottled: options.onThrottled });
  return limiter;
}

/** The limiter {@link setClientRateLimit} registered for `kc`, or undefined (no limit, the default). */
export function clientRateLimiter(kc: KubeConfig): RequestRateLimiter | undefined {
  return registry.get(kc)?.limiter;
}

/**
 * A new bucket with the same `qps`, `burst` and clock as the limit registered for `kc`, shared with nothing (the
 * lease client's own budget); undefined when `kc` has no limit.
 */
export function separateClientRateLimiter(kc: KubeConfig): RequestRateLimiter | undefined {
  const registered = registry.get(kc);
  if (registered === undefined) return undefined;
  const { qps, burst } = registered.limiter;
  return new TokenBucketRateLimiter({ qps, burst, clock: registered.clock });
}

/** Per-client choice of limiter, as `makeApiClient` and `watchWithAgent` take it. */
export interface RateLimitOverride {
  /** The limiter; undefined: the one registered for the KubeConfig; null: none. */
  rateLimiter?: RequestRateLimiter | null;
  /** Told about waits; undefined: the hook registered for the KubeConfig. */
  onThrottled?: ThrottleHook;
}

/**
 * Waits for a token for one request of a client made from `kc` (at `priority`, default `normal`), then reports the
 * wait to the hook. Rejects with `signal.reason` when aborted while waiting.
 */
export async function throttleRequest(
  kc: KubeConfig,
  override: RateLimitOverride,
  verb: string,
  url: string,
  signal?: AbortSignal,
  priority?: RequestPriority,
): Promise<void> {
  const registered = registry.get(kc);
  const limiter = override.rateLimiter === undefined ? registered?.limiter : override.rateLimiter;
  if (limiter === undefined || limiter === null) return;
  const waitedMs = await (priority === undefined ? limiter.accept(signal) : limiter.accept(signal, priority));
  const hook = override.onThrottled ?? registered?.onThrottled;
  if (waitedMs <= 0 || hook === undefined) return;
  try {
    hook({ waitedMs, verb, url, message: throttleMessage(waitedMs, verb, url) });
  } catch {
    // A logging hook must not fail the request.
  }
}
