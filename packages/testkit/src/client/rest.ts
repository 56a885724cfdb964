/**
 * Raw JSON requests to an API server with client-node's own transport and credentials (`KubeConfig`,
 * `RequestContext`, `IsomorphicFetchHttpLibrary`), for the kubelet and the tiers' housekeeping: objects go out and
 * come back exactly as the server sends them (no typed models, whose serializer turns times into `Date`s and drops
 * fields it does not know), any resource by path. Failures are client-node's {@link ApiException}, with the server's
 * `Status` as the body when there is one.
 */
import {
  ApiException,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  type HttpMethod,
  type KubeConfig,
} from '@kubernetes/client-node';

/** A JSON object as the server sends it. */
export type JsonObject = Record<string, unknown>;

/** Query parameters; `undefined` values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** What a {@link RestClient.request} sends besides method and path. */
export interface RequestOptions {
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** Default `application/json`; e.g. `application/merge-patch+json` for a PATCH. */
  contentType?: string;
  /** Default `application/json`; e.g. `application/json;as=Table;v=v1;g=meta.k8s.io` for kubectl's tables. */
  accept?: string;
  signal?: AbortSignal;
}

/** The status code of a failed {@link RestClient.request}, `undefined` for a failure that is not an HTTP answer. */
export function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** Raw JSON requests to one API server; see the module comment. */
export class RestClient {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly server: string;
  /** The first request's connection pool, reused so that requests share connections (client-node makes one per call). */
  private dispatcher: ReturnType<RequestContext['getDispatcher']>;

  constructor(private readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
  }

  /**
   * Sends one request and returns the parsed JSON answer.
   *
   * @throws ApiException for any status other than 2xx (body: the `Status`, or the text when it is not JSON).
   */
  async request(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<JsonObject> {
    const ctx = new RequestContext(`${this.server}${path}`, method);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) ctx.setQueryParam(k, String(v));
    ctx.setHeaderParam('Accept', options.accept ?? 'application/json');
    if (options.body !== undefined) {
      ctx.setHeaderParam('Content-Type', options.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(options.body));
    }
    if (options.signal !== undefined) ctx.setSignal(options.signal);
    // Credentials are applied per request (a token may be refreshed); the connection pool is kept.
    await this.kubeConfig.applySecurityAuthentication(ctx);
    if (this.dispatcher === undefined) this.dispatcher = ctx.getDispatcher();
    else ctx.setDispatcher(this.dispatcher);
    const res = await this.http.send(ctx).toPromise();
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      // Not JSON: kept as text.
    }
    if (res.httpStatusCode < 200 || res.httpStatusCode > 299) {
      const message =
        typeof parsed === 'object' && parsed !== null && typeof (parsed as { message?: unknown }).message === 'string'
          ? (parsed as { message: string }).message
          : text;
      throw new ApiException(res.httpStatusCode, `${method} ${path}: ${message}`, parsed, res.headers);
    }
    return typeof parsed === 'object' && parsed !== null ? (parsed as JsonObject) : {};
  }

  /** Closes the kept connection pool. */
  async close(): Promise<void> {
    const d = this.dispatcher;
    this.dispatcher = undefined;
    await d?.close().catch(() => undefined);
  }
}
