import type {
  ApiConstructor,
  ApiType,
  ConfigurationOptions,
  HttpLibrary,
  KubeConfig,
  Middleware,
  ObservableMiddleware,
  RequestContext,
  ResponseContext,
  Watch,
} from '@kubernetes/client-node';
// client-node's promise wrapper alone: its module imports nothing (see clientNode() below for the rest).
import { Observable } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { connectionOptions } from './connection.js';
import { asKubeConfig } from './kubeconfig.js';
import { throttleRequest, type RateLimitOverride } from './rate-limit/client-rate-limit.js';
import type { ThrottleHook } from './rate-limit/throttle-message.js';
import type { RequestRateLimiter } from './rate-limit/token-bucket.js';
import { PerContext } from './per-context.js';
import { closeSharedTransports, KEEP_ALIVE_TIMEOUT_MS, TCP_KEEP_ALIVE_INITIAL_DELAY_MS, undici } from './transport.js';

export { KEEP_ALIVE_TIMEOUT_MS, TCP_KEEP_ALIVE_INITIAL_DELAY_MS } from './transport.js';

/** The User-Agent of the clients {@link makeApiClient} makes and of a {@link RestClient}, unless one is given. */
export const DEFAULT_USER_AGENT = 'kprov-provisioner-lib (kubernetes-client-javascript)';

// client-node's entry point, loaded when a function here first needs it (`require` of an ES module: synchronous, as
// these functions are). Its entry point loads every generated API and model, about 80 MiB of RSS: a program that
// calls these functions has loaded it already for its own API classes, and one that does not never pays for it.
const require = createRequire(import.meta.url);
function clientNode(): typeof import('@kubernetes/client-node') {
  return require('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
}

const dispatchers = new PerContext<Dispatcher | null, KubeConfig>(buildDispatcher);

/**
 * Builds a new keep-alive undici dispatcher for the current context of `kc`, shared with nothing (the shared one is
 * {@link sharedAgent}), or `null` for a SOCKS proxy (left to client-node).
 */
export function buildDispatcher(kc: KubeConfig): Dispatcher | null {
  const opts = connectionOptions(kc);
  const pool = { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS };
  const tcp = { keepAlive: true, keepAliveInitialDelay: TCP_KEEP_ALIVE_INITIAL_DELAY_MS };
  const { Agent, ProxyAgent } = undici();
  switch (opts.type) {
    case 'direct':
      return new Agent({ ...pool, connect: { ...opts.tls, ...tcp } });
    case 'proxy':
      return new ProxyAgent({ ...pool, uri: opts.uri, requestTls: opts.tls, connect: tcp });
    case 'socks':
      return null;
  }
}

/**
 * The keep-alive undici dispatcher shared by the client-node clients made from `kc` for its current context
 * ({@link makeApiClient}, {@link watchWithAgent}): one per KubeConfig (and context), cached in a WeakMap, so requests
 * reuse TCP/TLS connections instead of client-node 2.0.1's fresh `Agent` (and connection) per request. Made (and
 * undici loaded) on first use. The library's own clients (the controller's informers, PV and Event writes, the
 * Lease) do not use it: they send through Node.js's own `http`/`https` keep-alive agent, one per KubeConfig and
 * context too, unless they are given a dispatcher.
 *
 * TLS options come from the current cluster and user exactly as client-node maps them (CA, client certificate and
 * key, `skipTLSVerify`, `tlsServerName`; `proxy-url` gives an undici `ProxyAgent`). Files are read once, when the
 * dispatcher is built. Defaults: idle connections kept 30 s (kube-apiserver closes them after 90 s; a shorter
 * `Keep-Alive: timeout=` hint of the server wins), TCP keep-alive probes after 30 s (as client-node and client-go), undici's unlimited connections per origin and HTTP/2 when the server
 * offers it over TLS.
 *
 * Not covered: client certificates that an exec or auth-provider plugin returns at request time (client-node merges
 * those per request; tokens from plugins are fine, they are headers), and SOCKS proxies (throws).
 *
 * @throws Error when the cluster uses a SOCKS proxy, or is plain HTTP without `skipTLSVerify` (as client-node).
 */
export function sharedAgent(kc: KubeConfig): Dispatcher {
  const dispatcher = dispatchers.get(kc);
  if (dispatcher === null) throw new Error('sharedAgent: SOCKS proxies are not supported; use client-node directly');
  return dispatcher;
}

/**
 * Closes the connections of the pools the library's clients share for `kc`, every context's: the Node.js agent of
 * its own clients (the controller's, `RestClient`'s) and, when one was made, {@link sharedAgent}'s dispatcher. Clients
 * of `kc` open new connections for their next requests. For a program that ends one run of its controller and goes
 * on, or stops a server it talks to; a process that exits needs nothing of it.
 */
export async function closeSharedConnections(kc: KubeConfig): Promise<void> {
  await Promise.all([closeSharedTransports(kc), ...dispatchers.take(kc).map((d) => d?.close())]);
}

/** Options of {@link makeApiClient} and {@link watchWithAgent}. */
export interface AgentClientOptions {
  /** The dispatcher for every request. Default {@link sharedAgent}(kc) (none for SOCKS proxies: client-node's own). */
  agent?: Dispatcher;
  /**
   * User-Agent header. Default {@link DEFAULT_USER_AGENT}. Sent by the clients {@link makeApiClient} makes and by a
   * {@link RestClient} (its watches included); {@link watchWithAgent} does not set it.
   */
  userAgent?: string;
  /**
   * The client-side rate limiter every request (and every watch connection) waits on. Default: the limiter
   * `setClientRateLimit` registered for `kc`, looked up per request (none unless one was registered). `null`: no
   * limit for this client, whatever is registered.
   */
  rateLimiter?: RequestRateLimiter | null;
  /** Told about each request that waited for a token. Default: the `onThrottled` registered with `setClientRateLimit`. */
  onThrottled?: ThrottleHook;
}

function rateLimitOverride(options: AgentClientOptions): RateLimitOverride {
  return {
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    ...(options.onThrottled === undefined ? {} : { onThrottled: options.onThrottled }),
  };
}

/**
 * client-node's fetch library behind a wait for a rate limiter token. The wait sits here, not in a middleware,
 * because `send` runs after every middleware (also per-call ones such as {@link withSignal}, so the wait honours the
 * request's abort signal) and because per-call options cannot replace it the way they replace middleware.
 */
function throttledHttpApi(kc: KubeConfig, override: RateLimitOverride): HttpLibrary {
  const { IsomorphicFetchHttpLibrary } = clientNode();
  const fetchLibrary = new IsomorphicFetchHttpLibrary();
  return {
    send: (ctx) => {
      const method = ctx.getHttpMethod().toString();
      const url = ctx.getUrl();
      return new Observable(
        throttleRequest(kc, override, method, url, ctx.getSignal())
          .then(() => fetchLibrary.send(ctx).toPromise())
          .catch((err: unknown) => {
            throw requestFailed(method, url, err);
          }),
      );
    },
  };
}

/**
 * `err` with the request and the reason in its message when it is fetch's network failure (`TypeError: fetch
 * failed`, the reason only in its `cause`): `GET https://…/api/v1/nodes/a: connect ECONNREFUSED 127.0.0.1:6443`, as
 * client-go names a failed request, so that the logs and Events that print an error's message say what went wrong.
 * Still a `TypeError` with the same `cause` (its `code` included); anything else (an abort, an API error) unchanged.
 */
function requestFailed(method: string, url: string, err: unknown): unknown {
  if (!(err instanceof TypeError && err.message === 'fetch failed' && err.cause instanceof Error)) return err;
  return new TypeError(`${method} ${url}: ${err.cause.message}`, { cause: err.cause });
}

function dispatcherFor(kc: KubeConfig, options: AgentClientOptions): Dispatcher | undefined {
  return options.agent ?? dispatchers.get(kc) ?? undefined;
}

/**
 * A promise middleware that sends the request through `agent`. Generated API clients apply authentication (which
 * sets client-node's per-request dispatcher) before middleware runs, so this replaces that dispatcher.
 */
export function dispatcherMiddleware(agent: Dispatcher): Middleware {
  return {
    pre: (ctx: RequestContext) => {
      ctx.setDispatcher(agent);
      return Promise.resolve(ctx);
    },
    post: (rsp: ResponseContext) => Promise.resolve(rsp),
  };
}

/**
 * Like `kc.makeApiClient(ApiClass)` (same base URL and authentication: `kc` is the auth method, so tokens,
 * exec plugins and basic auth work as usual), but every request goes through the shared keep-alive agent, installed
 * as a promise middleware that calls `ctx.setDispatcher(agent)` after authentication was applied, and, just before
 * it is sent, waits for a token of the client-side rate limiter if there is one (see `setClientRateLimit`). A request
 * that reaches no server rejects with a `TypeError` that names it and the reason (`GET https://…: connect
 * ECONNREFUSED …`, the network error as its `cause`) where fetch says only `fetch failed`.
 *
 * @param kc - the KubeConfig; its current context at call time picks the server.
 * @param apiClientType - a generated API class, e.g. `CoreV1Api`.
 * @param options - `agent` (default {@link sharedAgent}(kc)), `userAgent` (default {@link DEFAULT_USER_AGENT}),
 *   `rateLimiter` (default the one registered for `kc`, if any), `onThrottled` (default the registered hook).
 * @throws Error when the KubeConfig has no current cluster.
 */
export function makeApiClient<T extends ApiType>(
  kc: KubeConfig,
  apiClientType: ApiConstructor<T>,
  options: AgentClientOptions = {},
): T {
  kc = asKubeConfig(kc);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('makeApiClient: the KubeConfig has no current cluster');
  const agent = dispatcherFor(kc, options);
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const { createConfiguration, ServerConfiguration } = clientNode();
  const setUserAgent: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setHeaderParam('User-Agent', userAgent);
      return new Observable(Promise.resolve(ctx));
    },
    post: (rsp) => new Observable(Promise.resolve(rsp)),
  };
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    httpApi: throttledHttpApi(kc, rateLimitOverride(options)),
    authMethods: { default: kc },
    middleware: [setUserAgent],
    ...(agent === undefined ? {} : { promiseMiddleware: [dispatcherMiddleware(agent)] }),
  });
  return new apiClientType(config);
}

/**
 * Per-call options for a generated API method that make the request abortable: `client.listX(params,
 * withSignal(signal))`. The middleware is appended, so the client's own middleware (agent, User-Agent) still runs.
 */
export function withSignal(signal: AbortSignal): ConfigurationOptions {
  const setSignal: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (rsp) => new Observable(Promise.resolve(rsp)),
  };
  return { middleware: [setSignal], middlewareMergeStrategy: 'append' };
}

/**
 * A client-node `Watch` whose connections go through the shared agent and the client-side rate limiter: it is given
 * a view of `kc` whose `applySecurityAuthentication` first waits for a rate limiter token (once per watch
 * connection, not per event; none without a limiter), then authenticates as usual, then replaces the dispatcher.
 * Everything else (cluster, user, headers) is `kc`'s own, looked up live.
 *
 * client-node's `watch()` takes no abort signal, so a watch waiting for a token cannot be cancelled: the caller's
 * stop takes effect once it got its token (the `Watcher` then aborts the connection at once).
 *
 * @param options - `agent`: default {@link sharedAgent}(kc) (for SOCKS proxies, client-node's own dispatcher);
 *   `rateLimiter`: default the one registered for `kc`, if any; `onThrottled`: default the registered hook.
 */
export function watchWithAgent(kc: KubeConfig, options: AgentClientOptions = {}): Watch {
  kc = asKubeConfig(kc);
  const agent = dispatcherFor(kc, options);
  const override = rateLimitOverride(options);
  const view = Object.create(kc) as KubeConfig;
  view.applySecurityAuthentication = async (ctx: RequestContext): Promise<void> => {
    await throttleRequest(kc, override, ctx.getHttpMethod().toString(), ctx.getUrl());
    await kc.applySecurityAuthentication(ctx);
    if (agent !== undefined) ctx.setDispatcher(agent);
  };
  return new (clientNode().Watch)(view);
}
