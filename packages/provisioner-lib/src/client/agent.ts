import {
  bufferFromFileOrString,
  createConfiguration,
  IsomorphicFetchHttpLibrary,
  Observable,
  ServerConfiguration,
  Watch,
  type ApiConstructor,
  type ApiType,
  type Cluster,
  type ConfigurationOptions,
  type HttpLibrary,
  type KubeConfig,
  type Middleware,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type User,
} from '@kubernetes/client-node';
import type { AgentOptions } from 'node:https';
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import { throttleRequest, type RateLimitOverride } from './rate-limit/client-rate-limit.js';
import type { ThrottleHook } from './rate-limit/throttle-message.js';
import type { RequestRateLimiter } from './rate-limit/token-bucket.js';

/**
 * How long an idle keep-alive connection is kept, in ms: 30 s. kube-apiserver closes idle connections after 90 s,
 * so this stays well inside that; the server's own `Keep-Alive: timeout=` hint lowers it when shorter.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 30_000;

/** TCP keep-alive probe delay, in ms: 30 s, as client-node and client-go use (shorter than common LB idle timeouts). */
export const TCP_KEEP_ALIVE_INITIAL_DELAY_MS = 30_000;

/** The User-Agent of clients made by {@link makeApiClient} unless one is given. */
export const DEFAULT_USER_AGENT = 'kprov-provisioner-lib (kubernetes-client-javascript)';

const cache = new WeakMap<KubeConfig, Map<string, Dispatcher | null>>();

/**
 * The TLS material of the current cluster and user, read as client-node's (private) `applyHTTPSOptions` reads it:
 * `skipTLSVerify` → `rejectUnauthorized: false`, `tlsServerName` → `servername`, CA from `caFile`/`caData`,
 * client certificate and key from `certFile`/`certData` and `keyFile`/`keyData`.
 */
function tlsAgentOptions(cluster: Cluster | null, user: User | null): AgentOptions {
  const options: AgentOptions = {};
  if (user === null) return options; // client-node applies no TLS options without a user either
  if (cluster?.skipTLSVerify === true) options.rejectUnauthorized = false;
  if (cluster?.tlsServerName !== undefined && cluster.tlsServerName !== '') options.servername = cluster.tlsServerName;
  const ca = cluster === null ? null : bufferFromFileOrString(cluster.caFile, cluster.caData);
  if (ca !== null) options.ca = ca;
  const cert = bufferFromFileOrString(user.certFile, user.certData);
  if (cert !== null) options.cert = cert;
  const key = bufferFromFileOrString(user.keyFile, user.keyData);
  if (key !== null) options.key = key;
  return options;
}

/**
 * Builds a new keep-alive dispatcher for the current context of `kc`, shared with nothing (the shared one is
 * {@link sharedAgent}), or `null` for a SOCKS proxy (left to client-node).
 */
export function buildDispatcher(kc: KubeConfig): Dispatcher | null {
  const cluster = kc.getCurrentCluster();
  // createDispatcherOptions is client-node's own option mapping (and its "HTTP needs skipTLSVerify" check).
  const opts = kc.createDispatcherOptions(cluster, tlsAgentOptions(cluster, kc.getCurrentUser()));
  const pool = { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS };
  const tcp = { keepAlive: true, keepAliveInitialDelay: TCP_KEEP_ALIVE_INITIAL_DELAY_MS };
  switch (opts.type) {
    case 'none':
      return new Agent({ ...pool, connect: tcp });
    case 'agent':
      return new Agent({ ...pool, connect: { ...opts.connect, ...tcp } });
    case 'proxy':
      return new ProxyAgent({ ...pool, uri: opts.uri, requestTls: opts.requestTls, connect: opts.connect });
    case 'socks':
      return null;
  }
}

function contextKey(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  return JSON.stringify([
    kc.getCurrentContext(),
    cluster?.name ?? '',
    cluster?.server ?? '',
    kc.getCurrentUser()?.name ?? '',
  ]);
}

function cachedDispatcher(kc: KubeConfig): Dispatcher | null {
  let perContext = cache.get(kc);
  if (perContext === undefined) {
    perContext = new Map();
    cache.set(kc, perContext);
  }
  const key = contextKey(kc);
  let dispatcher = perContext.get(key);
  if (dispatcher === undefined) {
    dispatcher = buildDispatcher(kc);
    perContext.set(key, dispatcher);
  }
  return dispatcher;
}

/**
 * The keep-alive undici dispatcher shared by everything made from `kc` for its current context: one per KubeConfig
 * (and context), cached in a WeakMap, so requests reuse TCP/TLS connections instead of client-node 2.0.1's fresh
 * `Agent` (and connection) per request.
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
  const dispatcher = cachedDispatcher(kc);
  if (dispatcher === null) throw new Error('sharedAgent: SOCKS proxies are not supported; use client-node directly');
  return dispatcher;
}

/** Options of {@link makeApiClient} and {@link watchWithAgent}. */
export interface AgentClientOptions {
  /** The dispatcher for every request. Default {@link sharedAgent}(kc) (none for SOCKS proxies: client-node's own). */
  agent?: Dispatcher;
  /** User-Agent header. Default {@link DEFAULT_USER_AGENT}. Only {@link makeApiClient} sets it. */
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
  const fetchLibrary = new IsomorphicFetchHttpLibrary();
  return {
    send: (ctx) =>
      new Observable(
        throttleRequest(kc, override, ctx.getHttpMethod().toString(), ctx.getUrl(), ctx.getSignal()).then(() =>
          fetchLibrary.send(ctx).toPromise(),
        ),
      ),
  };
}

function dispatcherFor(kc: KubeConfig, options: AgentClientOptions): Dispatcher | undefined {
  return options.agent ?? cachedDispatcher(kc) ?? undefined;
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
 * it is sent, waits for a token of the client-side rate limiter if there is one (see `setClientRateLimit`).
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
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('makeApiClient: the KubeConfig has no current cluster');
  const agent = dispatcherFor(kc, options);
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
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
  const agent = dispatcherFor(kc, options);
  const override = rateLimitOverride(options);
  const view = Object.create(kc) as KubeConfig;
  view.applySecurityAuthentication = async (ctx: RequestContext): Promise<void> => {
    await throttleRequest(kc, override, ctx.getHttpMethod().toString(), ctx.getUrl());
    await kc.applySecurityAuthentication(ctx);
    if (agent !== undefined) ctx.setDispatcher(agent);
  };
  return new Watch(view);
}
