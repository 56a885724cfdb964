import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { buildDispatcher, makeApiClient } from '../client/agent.js';
import { separateClientRateLimiter } from '../client/rate-limit/client-rate-limit.js';
import type { RequestRateLimiter } from '../client/rate-limit/token-bucket.js';

/** The User-Agent of the lease client, so its requests stand apart in audit logs. */
export const LEASE_CLIENT_USER_AGENT = 'kprov-provisioner-lib/leader-election (kubernetes-client-javascript)';

/** Options of {@link makeLeaseClient}. */
export interface LeaseClientOptions {
  /**
   * Dispatcher for lease requests. Default: a new undici agent that nothing else uses (closed by
   * {@link LeaseClient.close}). Pass one only if it is dedicated to leader election too.
   */
  agent?: Dispatcher;
  /**
   * Client-side rate limiter for lease requests. Default: when `setClientRateLimit` registered a limit for the
   * KubeConfig, a new token bucket with the same QPS and burst that nothing else uses (the lease traffic's own
   * budget, as the CSI sidecars' separate leader election clientset); otherwise none. `null`: none.
   */
  rateLimiter?: RequestRateLimiter | null;
}

/** A coordination.k8s.io/v1 client with its own connection pool and its own rate limit budget. */
export interface LeaseClient {
  /** The API client to give to a `LeaseLock`. */
  readonly api: CoordinationV1Api;
  /** The dispatcher every request of `api` goes through. */
  readonly agent: Dispatcher;
  /** Closes the agent if this function created it (a passed-in agent is left to its owner). */
  close(): Promise<void>;
}

/**
 * A new undici dispatcher for the current context of `kc`, shared with nothing: same TLS and proxy mapping as the
 * shared agent of `../client/agent.js` (client-node's `createDispatcherOptions`), keep-alive on.
 *
 * @throws Error for SOCKS proxies, and for plain HTTP without `skipTLSVerify` (as client-node).
 */
export function newLeaseAgent(kc: KubeConfig): Dispatcher {
  const dispatcher = buildDispatcher(kc);
  if (dispatcher === null) throw new Error('newLeaseAgent: SOCKS proxies are not supported');
  return dispatcher;
}

/**
 * The client leader election should use: a `CoordinationV1Api` with its own connection pool and its own client-side
 * rate limit budget, so a busy or throttled main client never holds up lease renewals (csi-lib-utils builds a
 * separate clientset for the same reason). Authentication is `kc`'s, applied per request as usual.
 *
 * @param kc - the KubeConfig; its current context picks server, TLS and credentials.
 * @param options - `agent`: default a new dedicated agent ({@link newLeaseAgent}); `rateLimiter`: default a
 *   separate bucket like the limit registered for `kc` (read now), or none.
 * @throws Error when `kc` has no current cluster, or see {@link newLeaseAgent}.
 */
export function makeLeaseClient(kc: KubeConfig, options: LeaseClientOptions = {}): LeaseClient {
  const owned = options.agent === undefined;
  const agent = options.agent ?? newLeaseAgent(kc);
  const rateLimiter = options.rateLimiter === undefined ? (separateClientRateLimiter(kc) ?? null) : options.rateLimiter;
  const api = makeApiClient(kc, CoordinationV1Api, { agent, userAgent: LEASE_CLIENT_USER_AGENT, rateLimiter });
  return {
    api,
    agent,
    close: async () => {
      if (owned) await agent.close();
    },
  };
}
