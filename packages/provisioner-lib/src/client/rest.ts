import type { ConfigurationOptions, KubeConfig, RequestContext } from '@kubernetes/client-node';
// client-node's modules that import nothing heavy, by path: its entry point loads every generated API and model.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { RequiredError } from '@kubernetes/client-node/dist/gen/apis/baseapi.js';
import type { Agent as HttpAgent } from 'node:http';
import type { Readable } from 'node:stream';
import { clearTimeout, setTimeout } from 'node:timers';
import type { Dispatcher } from 'undici';
import { DEFAULT_USER_AGENT, type AgentClientOptions } from './agent.js';
import { throttleRequest, type RateLimitOverride } from './rate-limit/client-rate-limit.js';
import { inFlightRequests } from './rate-limit/in-flight.js';
import { ListItemSplitter, type ListItemOptions } from './list-items.js';
import type { RequestPriority } from './rate-limit/token-bucket.js';
import {
  abortReason,
  afterClose,
  bodyText,
  httpModule,
  inactivityError,
  sharedTransport,
  transportOver,
  type Transport,
  type TransportResponse,
} from './transport.js';

/** Query parameters; `undefined` values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** One request of a {@link RestClient}. */
export interface RestRequest {
  /** The HTTP method. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the cluster's server URL, e.g. `/api/v1/persistentvolumes`; escape names with `encodeURIComponent`. */
  path: string;
  /** Query parameters, e.g. `{ labelSelector: 'a=b', limit: 500 }`. Default none. */
  query?: Query;
  /** Sent as JSON (`JSON.stringify`: `Date`s as ISO strings, `undefined` fields left out). Default none. */
  body?: unknown;
  /** Content type of the body, e.g. `application/merge-patch+json` for a PATCH. Default `application/json`. */
  contentType?: string;
  /** Aborts the request; it then rejects with the signal's reason. Default none. */
  signal?: AbortSignal;
  /** How the request waits for a client-side rate limit token. Default `normal`. */
  priority?: RequestPriority;
  /**
   * client-node's per-call options, for calls with the signatures of its generated clients (`withSignal(signal)`,
   * `setHeaderOptions('Content-Type', PatchStrategy.MergePatch)`): see {@link RestClient.json}. Default none.
   */
  options?: ConfigurationOptions | undefined;
}

/** Options of a {@link RestClient}. */
export interface RestClientOptions extends Omit<AgentClientOptions, 'agent'> {
  /**
   * The connection pool: an undici dispatcher, or a Node.js `http.Agent` or `https.Agent` (with the TLS settings of
   * the cluster). Default: the keep-alive pool the library's clients of the KubeConfig share for its current context
   * (Node.js's own, with the kubeconfig's TLS; an undici `ProxyAgent` for a cluster with a `proxy-url`).
   */
  agent?: Dispatcher | HttpAgent;
  /**
   * How long a watch may go without a byte before it ends with a `TimeoutError`, in ms; 0 for no limit. client-node's
   * `Watch` has 30 s. Without a limit, as client-go's watches, a watch ends when the server ends it (at its
   * `timeoutSeconds`), when the connection fails, or when TCP keep-alive finds the server gone (probes after 30 s
   * without traffic): a quiet watch is not torn down and started again every 30 s.
   * @defaultValue 0 (no limit)
   */
  watchInactivityMs?: number;
  /**
   * How long a request other than a watch may go without a byte from the server (waiting for its answer, or between
   * parts of its body) before it fails with a `TimeoutError`, in ms; 0 for no limit. A server that accepts a request
   * and never answers would otherwise hold a list, a create or a delete (and what waits on it) for ever.
   * @defaultValue 300000 (300 s, as undici's header and body timeouts)
   */
  requestInactivityMs?: number;
  /**
   * Whether the requests count among the KubeConfig's requests in flight, which the library's Event writes
   * (`priority: 'low'`) wait for (up to a second) before they are sent. `false` for a client whose requests Events
   * should not wait for, such as the Lease's.
   * @defaultValue true
   */
  countInFlight?: boolean;
}

/**
 * The patch types whose body is JSON, which a {@link RestClient} sends: client-node's `PatchStrategy` but server-side
 * apply. The first is what client-node's generated clients send for a patch without a Content-Type option.
 */
export const JSON_PATCH_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

/** {@link RestClientOptions.requestInactivityMs}'s default: 300 s. */
const DEFAULT_REQUEST_INACTIVITY_MS = 300_000;

/** What {@link RestClient} sends as `Accept`. */
const ACCEPT = 'application/json';

/** The per-user part of client-node's `applySecurityAuthentication`: headers only, no dispatcher. */
interface AuthHeaderSource {
  applyAuthorizationHeader?: (opts: { headers?: Record<string, string> }) => Promise<void>;
  custom_authenticators?: readonly unknown[];
}

/** Static headers per KubeConfig and context, for users whose credentials cannot change (no plugin, no file). */
const staticHeaders = new WeakMap<KubeConfig, { key: string; headers: Readonly<Record<string, string>> }>();

function contextKey(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  return `${kc.getCurrentContext()}\u0000${cluster?.server ?? ''}\u0000${user?.name ?? ''}\u0000${user?.token ?? ''}`;
}

/**
 * The authentication headers client-node would send for the current user. Users with a token, basic auth or a
 * client certificate only (the certificate is the dispatcher's) get headers computed once; users with an auth
 * provider or exec plugin (including in-cluster token files) go through client-node's authenticators per request,
 * as client-node does, so refreshed credentials are picked up.
 */
async function authHeaders(kc: KubeConfig): Promise<Record<string, string>> {
  const key = contextKey(kc);
  const cached = staticHeaders.get(kc);
  if (cached?.key === key) return { ...cached.headers };
  const user = kc.getCurrentUser();
  const headers: Record<string, string> = {};
  if (user === null) return headers;
  if (user.username !== undefined && user.username !== '') {
    headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
  }
  if (user.impersonateUser !== undefined && user.impersonateUser !== null)
    headers['Impersonate-User'] = user.impersonateUser;
  const source = kc as unknown as AuthHeaderSource;
  const dynamic =
    user.exec !== undefined || user.authProvider !== undefined || (source.custom_authenticators?.length ?? 0) > 0;
  if (!dynamic) {
    if (user.token !== undefined && user.token !== '') headers.Authorization = `Bearer ${user.token}`;
    staticHeaders.set(kc, { key, headers: { ...headers } });
    return headers;
  }
  if (typeof source.applyAuthorizationHeader === 'function') {
    const opts: { headers?: Record<string, string> } = { headers: {} };
    await source.applyAuthorizationHeader.call(kc, opts);
    return { ...headers, ...opts.headers };
  }
  // A client-node without that method: its full authentication, keeping only the headers.
  const collected: Record<string, string> = { ...headers };
  const context = {
    setHeaderParam: (name: string, value: string) => {
      collected[name] = value;
    },
    setDispatcher: () => undefined,
  };
  await kc.applySecurityAuthentication(context as unknown as RequestContext);
  return collected;
}

function headerValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * The request side of client-node's `RequestContext` (its `http/http.js`), on which per-call options' middleware
 * runs. Written here because that module also exports client-node's fetch library, which loads undici: about
 * 25 MiB of RSS for a `withSignal` on a Lease renewal. It keeps what the class keeps, the same way.
 */
class CallContext {
  private url: URL;
  private readonly headers: Record<string, string> = {};
  private body: unknown = undefined;
  private signal: AbortSignal | undefined = undefined;
  private dispatcher: unknown = undefined;
  constructor(
    url: string,
    private readonly httpMethod: string,
  ) {
    this.url = new URL(url);
  }
  getUrl(): string {
    const url = this.url.toString();
    return url.endsWith('/') ? url.slice(0, -1) : url;
  }
  setUrl(url: string): void {
    this.url = new URL(url);
  }
  setBody(body: unknown): void {
    this.body = body;
  }
  getHttpMethod(): string {
    return this.httpMethod;
  }
  getHeaders(): Record<string, string> {
    return this.headers;
  }
  getBody(): unknown {
    return this.body;
  }
  setQueryParam(name: string, value: string): void {
    this.url.searchParams.set(name, value);
  }
  appendQueryParam(name: string, value: string): void {
    this.url.searchParams.append(name, value);
  }
  addCookie(name: string, value: string): void {
    this.headers.Cookie = `${this.headers.Cookie ?? ''}${name}=${value}; `;
  }
  setHeaderParam(key: string, value: string): void {
    const lower = key.toLowerCase();
    for (const existing of Object.keys(this.headers))
      if (existing.toLowerCase() === lower) delete this.headers[existing];
    this.headers[key] = value;
  }
  setSignal(signal: AbortSignal): void {
    this.signal = signal;
  }
  getSignal(): AbortSignal | undefined {
    return this.signal;
  }
  setDispatcher(dispatcher: unknown): void {
    this.dispatcher = dispatcher;
  }
  getDispatcher(): unknown {
    return this.dispatcher;
  }
}

/** The request side of one client-node middleware: its `pre`, an rxjs-style `Observable` (or a promise). */
type PreHook = (ctx: RequestContext) => { toPromise(): Promise<RequestContext> } | Promise<RequestContext>;

/**
 * What client-node's per-call options make of one request, found as its generated clients find it: the `pre` hook of
 * each middleware, in order, runs on a `RequestContext` of the request (its URL, method, `Accept` and Content-Type),
 * and the abort signal and Content-Type it holds afterwards are the request's. That is what `withSignal` and
 * `setHeaderOptions` do. Anything else the options would change is refused with an Error, rather than the request
 * going out other than client-node would send it: a `baseServer`, `httpApi` or `authMethods`, a header other than
 * Content-Type, the URL, the body, the dispatcher, a Content-Type other than `application/json` for a request that
 * is not a PATCH, and a patch type whose body is not JSON (server-side apply, which the library does not send: use
 * `makeApiClient` for it).
 *
 * Not applied: the `post` hooks (the response is no `ResponseContext`; those of `withSignal` and `setHeaderOptions`
 * do nothing) and `middlewareMergeStrategy` (the client's agent, User-Agent and rate limit apply whatever it says).
 */
async function applyCallOptions(
  request: RestRequest,
  options: ConfigurationOptions,
  url: string,
): Promise<{ signal: AbortSignal | undefined; contentType: string | undefined }> {
  const what = `${request.method} ${request.path}`;
  const refuse = (why: string): Error =>
    new Error(`${what}: the library's client does not support ${why}; use makeApiClient for this call`);
  for (const key of ['baseServer', 'httpApi', 'authMethods'] as const)
    if (options[key] !== undefined) throw refuse(`the per-call option ${key}`);
  const contentType = request.body === undefined ? undefined : (request.contentType ?? 'application/json');
  let ctx = new CallContext(url, request.method) as unknown as RequestContext;
  ctx.setHeaderParam('Accept', ACCEPT);
  if (contentType !== undefined) ctx.setHeaderParam('Content-Type', contentType);
  if (request.signal !== undefined) ctx.setSignal(request.signal);
  const before = ctx.getUrl();
  for (const middleware of options.middleware ?? []) {
    const result = (middleware.pre as unknown as PreHook)(ctx);
    ctx = await ('toPromise' in result ? result.toPromise() : result);
  }
  const headers = ctx.getHeaders();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') continue;
    if (lower !== 'accept' || value !== ACCEPT) throw refuse(`the header ${name} set by per-call options`);
  }
  if (ctx.getUrl() !== before) throw refuse('a URL changed by per-call options');
  if (ctx.getBody() !== undefined) throw refuse('a body set by per-call options');
  if (ctx.getDispatcher() !== undefined) throw refuse('a dispatcher set by per-call options');
  const sent = headerValue(headers, 'content-type');
  if (sent !== contentType) {
    if (request.method === 'PATCH' && (sent === undefined || !JSON_PATCH_TYPES.includes(sent)))
      throw refuse(`the patch type ${String(sent)} (it sends ${JSON_PATCH_TYPES.join(', ')})`);
    if (request.method !== 'PATCH' && sent !== 'application/json')
      throw refuse(`the Content-Type ${String(sent)} for a ${request.method}`);
  }
  return { signal: ctx.getSignal(), contentType: sent };
}

/**
 * The check client-node's generated calls make before anything is sent: a required parameter that is null or
 * undefined rejects the call with its `RequiredError` (`Required parameter name was null or undefined when calling
 * CoreV1Api.patchPersistentVolume.`).
 *
 * @param call - the API class and method, as client-node names them, e.g. `['CoreV1Api', 'patchPersistentVolume']`.
 */
export function checkRequired(call: readonly [string, string], param: object, names: readonly string[]): void {
  for (const name of names) {
    const value = (param as Record<string, unknown>)[name];
    if (value === null || value === undefined) throw new RequiredError(call[0], call[1], name);
  }
}

/** What client-node's generated create, replace and patch calls send as query parameters (a patch adds `force`). */
export function writeQuery(param: {
  pretty?: string | undefined;
  dryRun?: string | undefined;
  fieldManager?: string | undefined;
  fieldValidation?: string | undefined;
}): Query {
  const { pretty, dryRun, fieldManager, fieldValidation } = param;
  return { pretty, dryRun, fieldManager, fieldValidation };
}

function searchOf(query: Query | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

/** Response headers as client-node's fetch library gives them: one string per name. */
function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** How a {@link RestClient.watch} reports each event: its type (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) and object, parsed JSON. */
export type WatchCallback = (type: string, object: unknown) => void;
/** How a {@link RestClient.watch} reports its end, once: `null` when the server ended it, else the error. */
export type WatchDone = (err: unknown) => void;

/**
 * The library's JSON client: what its controller, informers, Event recorder and Lease send their requests with, for a
 * program that needs a few calls beyond them without client-node's generated API classes. One request is a header
 * object, a `JSON.stringify` and a `JSON.parse`, sent on a keep-alive connection pool: by default the one the
 * library's clients of the same KubeConfig and context share (Node.js's own `http`/`https`; an undici `ProxyAgent` for
 * a cluster with a `proxy-url`), else the undici dispatcher given as `agent`.
 *
 * Why: client-node's generated clients build a fetch `Request`, web streams, an rxjs-style middleware chain and a new
 * undici `Agent` per request, and copy every object through its `ObjectSerializer` both ways (most of the
 * controller's CPU per provision, once); and a program that uses one of them loads client-node's entry point, every
 * generated API and model, and undici (about 80 MiB of RSS from `node_modules`; bundled, about 20 MiB for
 * `CoreV1Api`). A per-node daemon that reads its Node and writes a few objects needs none of that.
 *
 * What it keeps of client-node's clients: the server URL (with any path prefix) and credentials of the KubeConfig's
 * current context (tokens, client certificates, exec and auth-provider plugins, looked up per request), the
 * User-Agent, the client-side rate limit registered for the KubeConfig (`setClientRateLimit`; with a priority),
 * abort signals, and errors as client-node's `ApiException` (code, the body text, the headers), so that `apiStatus`,
 * `isNotFound` and `isAlreadyExists` read them. What differs: responses are parsed JSON, not client-node's models
 * (timestamps stay strings where client-node would give `Date`s; a list's continue token is `metadata.continue`, not
 * `_continue`), and bodies are sent as `JSON.stringify` writes them (what client-node's `ObjectSerializer` sends for
 * the kinds the library writes, except that fields its models do not know are sent rather than dropped, so that a
 * replace keeps what a newer server added to an object).
 *
 * @example
 * ```ts
 * const rest = new RestClient(kubeConfig);
 * const node = await rest.json<V1Node>({ method: 'GET', path: `/api/v1/nodes/${encodeURIComponent(name)}`, signal });
 * ```
 */
export class RestClient {
  private readonly kc: KubeConfig;
  private readonly transport: Transport;
  private readonly userAgent: string;
  private readonly override: RateLimitOverride;
  private readonly countInFlight: boolean;
  /** The current cluster's server URL, parsed once (until the KubeConfig's current cluster changes). */
  private server: { url: string; origin: string; base: string } | undefined;

  private readonly watchInactivityMs: number;
  private readonly requestInactivityMs: number;

  /**
   * @param kc - the KubeConfig; its current context at call time picks the server and credentials.
   * @param options - `agent` (default the shared pool of `kc`), `userAgent`, `rateLimiter` and `onThrottled` as for
   *   `makeApiClient`, `watchInactivityMs`, `requestInactivityMs` and `countInFlight`: see {@link RestClientOptions}.
   */
  constructor(kc: KubeConfig, options: RestClientOptions = {}) {
    this.kc = kc;
    this.watchInactivityMs = options.watchInactivityMs ?? 0;
    this.requestInactivityMs = options.requestInactivityMs ?? DEFAULT_REQUEST_INACTIVITY_MS;
    this.countInFlight = options.countInFlight ?? true;
    // The strategy, once: the caller's undici dispatcher, else the KubeConfig's shared transport (Node.js's HTTP).
    this.transport = options.agent === undefined ? sharedTransport(kc) : transportOver(options.agent);
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.override = {
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.onThrottled === undefined ? {} : { onThrottled: options.onThrottled }),
    };
  }

  private target(path: string, query: Query | undefined): { origin: string; path: string; url: string } {
    const cluster = this.kc.getCurrentCluster();
    if (cluster === null) throw new Error('RestClient: the KubeConfig has no current cluster');
    if (this.server?.url !== cluster.server) {
      const parsed = new URL(cluster.server);
      this.server = { url: cluster.server, origin: parsed.origin, base: parsed.pathname.replace(/\/+$/, '') };
    }
    const { origin, base } = this.server;
    const full = `${base}${path}${searchOf(query)}`;
    return { origin, path: full, url: `${origin}${full}` };
  }

  private async headers(contentType: string | undefined): Promise<Record<string, string>> {
    const headers = await authHeaders(this.kc);
    headers['user-agent'] = this.userAgent;
    headers.accept = ACCEPT;
    if (contentType !== undefined) headers['content-type'] = contentType;
    return headers;
  }

  /**
   * Sends one request and resolves with the parsed JSON of a 2xx answer. Rejects with an `ApiException` for any
   * other status (401: message `Unauthorized` and no body, as client-node; otherwise the body text), and with the
   * network error or `signal.reason` otherwise.
   *
   * `request.options`, client-node's per-call options, are applied as its generated clients apply them: the request
   * side of their middleware runs on a client-node `RequestContext` of the request, and the abort signal and
   * Content-Type it sets are used (a PATCH may get any of {@link JSON_PATCH_TYPES}). The call rejects with an Error,
   * sending nothing, when the options would change anything else.
   */
  async json<T>(request: RestRequest): Promise<T> {
    const text = await this.exchange(request, bodyText);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /**
   * Sends one request and resolves with the text of a 2xx answer as it came (a pod's log, for one). Errors and
   * `request.options` as {@link RestClient.json}'s.
   */
  async text(request: RestRequest): Promise<string> {
    return await this.exchange(request, bodyText);
  }

  /**
   * Lists, as {@link RestClient.json} would with a GET of `request`, but hands each of the list's `items` to `each`
   * as soon as it has arrived, parsed, and resolves with the rest of the list (`kind`, `apiVersion`, `metadata`;
   * `items` empty). The answer's text and its whole parsed tree are never held: listing 10,000 objects this way
   * holds one chunk and one item at a time beside what `each` keeps. Errors as {@link RestClient.json}'s; an
   * exception thrown by `each` ends the request and is rethrown.
   *
   * @param options - how the items are split and parsed; see {@link ListItemOptions}. Default none.
   */
  async list<L extends { metadata?: unknown } = { metadata?: Record<string, unknown> }>(
    request: Omit<RestRequest, 'method' | 'body' | 'contentType'>,
    each: (item: unknown) => void,
    options: ListItemOptions = {},
  ): Promise<L> {
    return await this.exchange({ ...request, method: 'GET' }, async (body) => {
      const splitter = new ListItemSplitter(each, options);
      try {
        for await (const chunk of body) splitter.write(chunk as Buffer);
      } catch (err) {
        body.destroy();
        throw err;
      }
      return splitter.end().list as L;
    });
  }

  /**
   * Sends `request`; for a 2xx answer resolves with what `read` makes of its body, else rejects as
   * {@link RestClient.json} describes (the body read as text for the error).
   */
  private async exchange<R>(request: RestRequest, read: (body: Readable) => Promise<R>): Promise<R> {
    const { origin, path, url } = this.target(request.path, request.query);
    let signal = request.signal;
    let contentType = request.body === undefined ? undefined : (request.contentType ?? 'application/json');
    if (request.options !== undefined)
      ({ signal, contentType } = await applyCallOptions(request, request.options, url));
    const done = this.countInFlight ? await inFlightRequests(this.kc).start(request.priority, signal) : undefined;
    let text: string;
    let response: TransportResponse;
    try {
      await throttleRequest(this.kc, this.override, request.method, url, signal, request.priority);
      const body = request.body === undefined ? undefined : JSON.stringify(request.body);
      const headers = await this.headers(body === undefined ? undefined : contentType);
      response = await this.transport.request({
        origin,
        path,
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(signal === undefined ? {} : { signal }),
        inactivityMs: this.requestInactivityMs,
      });
      // An abort while the body arrives: its reason, as before the answer (the stream's own error is "aborted").
      const reasonOnAbort = (err: unknown): never => {
        throw signal?.aborted === true ? abortReason(signal) : err;
      };
      const status = response.statusCode;
      if (status >= 200 && status < 300) return await read(response.body).catch(reasonOnAbort);
      text = await bodyText(response.body).catch(reasonOnAbort);
    } finally {
      done?.();
    }
    const responseHeaders = flatHeaders(response.headers);
    if (response.statusCode === 401) throw new ApiException(401, 'Unauthorized', undefined, responseHeaders);
    throw new ApiException(response.statusCode, 'Unknown API Status Code!', text, responseHeaders);
  }

  /**
   * Watches `path` (`watch=true` and `query` added) with the semantics of client-node's `Watch.watch`: `callback`
   * gets each event's type and object (lines that are not JSON are skipped), `done` is called once, with `null` when
   * the server ended the stream, an error with `statusCode` for a non-200 answer, a `TimeoutError` after
   * {@link RestClientOptions.watchInactivityMs} without data (when set), or the network error. Resolves with a
   * controller that aborts the watch (then `done` is called with the abort error, unless it was called already).
   */
  async watch(path: string, query: Query, callback: WatchCallback, done: WatchDone): Promise<AbortController> {
    const { origin, path: fullPath, url } = this.target(path, { ...query, watch: true });
    await throttleRequest(this.kc, this.override, 'GET', url);
    const headers = await this.headers(undefined);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let finished = false;
    const clearTimer = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      clearTimer();
      // Aborted (by the caller, or by the inactivity limit): the abort's reason, not the error the connection's end
      // raised (Node.js's "aborted").
      const error = controller.signal.aborted ? abortReason(controller.signal) : err;
      controller.abort();
      done(error);
    };
    const resetTimer = (): void => {
      if (finished || this.watchInactivityMs <= 0) return;
      // One timer per watch, re-armed on every chunk (refresh() rather than a new timer per watch event).
      if (timer !== undefined) {
        timer.refresh();
        return;
      }
      timer = setTimeout(() => {
        controller.abort(inactivityError(this.watchInactivityMs));
      }, this.watchInactivityMs);
      timer.unref();
    };
    resetTimer();
    const started = this.transport.request({
      origin,
      path: fullPath,
      method: 'GET',
      headers,
      signal: controller.signal,
    });
    started.then(
      (response) => {
        const body = response.body;
        if (response.statusCode !== 200) {
          body.resume();
          const error = new Error(
            httpModule().STATUS_CODES[response.statusCode] ?? 'Internal Server Error',
          ) as Error & {
            statusCode: number;
          };
          error.statusCode = response.statusCode;
          finish(error);
          return;
        }
        resetTimer();
        body.setEncoding('utf8');
        let partial = '';
        body.on('data', (chunk: string) => {
          resetTimer();
          let start = 0;
          for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
            const line = partial === '' ? chunk.slice(start, end) : partial + chunk.slice(start, end);
            partial = '';
            start = end + 1;
            if (line.trim() === '') continue;
            let event: { type?: unknown; object?: unknown };
            try {
              event = JSON.parse(line) as { type?: unknown; object?: unknown };
            } catch {
              continue; // as client-node: a line that is not JSON is skipped
            }
            if (finished) return;
            callback(String(event.type), event.object);
          }
          partial += chunk.slice(start);
        });
        // The watch ends with the body's 'close', which comes last (after 'end' or 'error', and once an aborted
        // request's connection is closed), so that whoever waits for `done` finds the connection gone.
        let bodyError: unknown = null;
        body.on('error', (err: unknown) => {
          bodyError ??= err;
        });
        body.on('end', () => {
          // A last line without its newline, as readline would still hand it out.
          if (partial.trim() !== '' && !finished) {
            try {
              const event = JSON.parse(partial) as { type?: unknown; object?: unknown };
              callback(String(event.type), event.object);
            } catch {
              // not JSON: skipped
            }
          }
        });
        body.on('close', () => afterClose(() => finish(bodyError)));
      },
      (err: unknown) => finish(err),
    );
    return controller;
  }
}
