import type { CoordinationV1Api, KubeConfig, V1Lease } from '@kubernetes/client-node';
import type { Agent as HttpAgent } from 'node:http';
import type { Dispatcher } from 'undici';
import { modelDecoder } from '../client/models.js';
import { separateClientRateLimiter } from '../client/rate-limit/client-rate-limit.js';
import type { RequestRateLimiter } from '../client/rate-limit/token-bucket.js';
import { checkRequired, RestClient, writeQuery } from '../client/rest.js';
import { newTransport, transportOver } from '../client/transport.js';

/** The User-Agent of the lease client, so its requests stand apart in audit logs. */
export const LEASE_CLIENT_USER_AGENT = 'kprov-provisioner-lib/leader-election (kubernetes-client-javascript)';

/** Options of {@link makeLeaseClient}. */
export interface LeaseClientOptions {
  /**
   * The connection pool of the lease requests: an undici dispatcher, or a Node.js `http`/`https` agent. Default: a new
   * keep-alive connection pool that nothing else uses (Node.js's `http.Agent`, closed by {@link LeaseClient.close}).
   * Pass one only if it is dedicated to leader election too.
   */
  agent?: Dispatcher | HttpAgent;
  /**
   * Client-side rate limiter for lease requests. Default: when `setClientRateLimit` registered a limit for the
   * KubeConfig, a new token bucket with the same QPS and burst that nothing else uses (the lease traffic's own
   * budget, as the CSI sidecars' separate leader election clientset); otherwise none. `null`: none.
   */
  rateLimiter?: RequestRateLimiter | null;
}

/**
 * The calls of client-node's `CoordinationV1Api` a `LeaseLock` makes: read, create and replace a Lease. A
 * `CoordinationV1Api` (from `makeApiClient`) is one.
 */
export type LeaseApi = Pick<
  CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

/** A coordination.k8s.io/v1 client with its own connection pool and its own rate limit budget. */
export interface LeaseClient {
  /** The API client to give to a `LeaseLock`: the Lease calls it makes, with `CoordinationV1Api`'s signatures. */
  readonly api: LeaseApi;
  /** The connection pool every request of `api` goes through: the dispatcher given, or its own `http.Agent`. */
  readonly agent: Dispatcher | HttpAgent;
  /** Closes the agent if this function created it (a passed-in agent is left to its owner). */
  close(): Promise<void>;
}

type Call<K extends keyof LeaseApi> = Parameters<LeaseApi[K]>[0];

const decodeLease = modelDecoder<V1Lease>('V1Lease');

const leasesPath = (namespace: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;

/**
 * {@link LeaseApi} through `rest`: client-node's requests (method, path, query parameters, JSON body, the abort
 * signal of per-call options such as `withSignal(signal)`) and results (a Lease in client-node's model shape, with
 * `acquireTime` and `renewTime` the strings received, as client-node gives them; errors as its `ApiException`).
 */
function leaseApi(rest: RestClient): LeaseApi {
  return {
    readNamespacedLease: async (param: Call<'readNamespacedLease'>, options) => {
      checkRequired(['CoordinationV1Api', 'readNamespacedLease'], param, ['name', 'namespace']);
      return decodeLease(
        await rest.json({
          method: 'GET',
          path: `${leasesPath(param.namespace)}/${encodeURIComponent(param.name)}`,
          query: { pretty: param.pretty },
          options,
        }),
      );
    },
    createNamespacedLease: async (param: Call<'createNamespacedLease'>, options) => {
      checkRequired(['CoordinationV1Api', 'createNamespacedLease'], param, ['namespace', 'body']);
      return decodeLease(
        await rest.json({
          method: 'POST',
          path: leasesPath(param.namespace),
          query: writeQuery(param),
          body: param.body,
          options,
        }),
      );
    },
    replaceNamespacedLease: async (param: Call<'replaceNamespacedLease'>, options) => {
      checkRequired(['CoordinationV1Api', 'replaceNamespacedLease'], param, ['name', 'namespace', 'body']);
      return decodeLease(
        await rest.json({
          method: 'PUT',
          path: `${leasesPath(param.namespace)}/${encodeURIComponent(param.name)}`,
          query: writeQuery(param),
          body: param.body,
          options,
        }),
      );
    },
  };
}

/**
 * The client leader election should use: the Lease calls with their own connection pool and their own client-side
 * rate limit budget, so a busy or throttled main client never holds up lease renewals (csi-lib-utils builds a
 * separate clientset for the same reason). Authentication is `kc`'s, applied per request as usual.
 *
 * The calls have client-node's `CoordinationV1Api` signatures and results and are sent by the library's lean JSON
 * client (`RestClient`), not by a generated `CoordinationV1Api`: a bundled binary then carries none of client-node's
 * generated API classes (see `makeProvisionControllerClient`). Its requests are not counted among the requests of
 * `kc` in flight, which the controller's Event writes wait for.
 *
 * @param kc - the KubeConfig; its current context picks server, TLS and credentials.
 * @param options - `agent`: default a new dedicated connection pool; `rateLimiter`: default a
 *   separate bucket like the limit registered for `kc` (read now), or none.
 * @throws Error when `kc` has no current cluster, for a SOCKS proxy, and for plain HTTP without `skipTLSVerify`.
 */
export function makeLeaseClient(kc: KubeConfig, options: LeaseClientOptions = {}): LeaseClient {
  if (kc.getCurrentCluster() === null) throw new Error('makeLeaseClient: the KubeConfig has no current cluster');
  const transport = options.agent === undefined ? newTransport(kc) : transportOver(options.agent);
  const rateLimiter = options.rateLimiter === undefined ? (separateClientRateLimiter(kc) ?? null) : options.rateLimiter;
  const rest = new RestClient(kc, {
    agent: transport.agent,
    userAgent: LEASE_CLIENT_USER_AGENT,
    rateLimiter,
    countInFlight: false,
  });
  return {
    api: leaseApi(rest),
    agent: transport.agent,
    // Its own pool is closed; a caller's pool (an undici dispatcher or a Node.js agent) is the caller's to close.
    close: options.agent === undefined ? () => transport.close() : () => Promise.resolve(),
  };
}
