import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResourceType, Verb } from '../api/resources.js';
import { internalError, methodNotAllowed, StatusError, unknownPath, type Status } from '../api/status.js';
import type { ObjectStore } from '../store/store.js';
import { readBody, type RequestBody } from './body.js';
import { discover } from './discovery.js';
import { FaultInjector } from './faults.js';
import {
  handleBinding,
  handleCreate,
  handleDelete,
  handleDeleteCollection,
  handlePatch,
  handleUpdate,
  type Reply,
} from './handlers.js';
import { listObjects, validateListOptions, type ListOptionsQuery } from './list.js';
import { parseRoute, type Route } from './route.js';
import { parseSelectors } from './selection.js';
import { toTable } from './table.js';
import { WatchConnection } from './watch.js';
import { resourceExpired } from '../api/status.js';

/** Where pod logs come from (the kubelet simulation). */
export interface PodLogSource {
  readLog(
    namespace: string,
    pod: string,
    container?: string,
    options?: { tailLines?: number; previous?: boolean },
  ): string | undefined;
}

/** Options of {@link ApiServer}. */
export interface ApiServerOptions {
  /** Port to bind on 127.0.0.1; 0 picks a free one. Default 0. */
  port?: number;
  /** Address to bind. Default `127.0.0.1`. */
  host?: string;
  /** How often watches that asked for bookmarks get one, in ms. Default 1000 (the real server: about a minute). */
  bookmarkIntervalMs?: number;
  /** Watch length when the client gives no `timeoutSeconds`, in seconds. Default 1800, as `--min-request-timeout`. */
  defaultWatchTimeoutSeconds?: number;
  /** Source of pod logs. Default none: logs are empty. */
  logs?: PodLogSource;
}

type RequestVerb = Verb | 'log' | 'binding';

function requestVerb(
  method: string,
  route: Extract<Route, { type: 'resource' }>,
  watch: boolean,
): RequestVerb | undefined {
  if (route.subresource === 'log') return method === 'GET' ? 'log' : undefined;
  if (route.subresource === 'binding')
    return method === 'POST' && route.resource.plural === 'pods' ? 'binding' : undefined;
  if (route.name === undefined) {
    if (method === 'GET') return watch ? 'watch' : 'list';
    if (method === 'POST') return 'create';
    if (method === 'DELETE') return 'deletecollection';
    return undefined;
  }
  if (method === 'GET') return watch ? 'watch' : 'get';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  if (method === 'DELETE' && route.subresource === undefined) return 'delete';
  return undefined;
}

function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new StatusError(400, 'BadRequest', `invalid value for ${name}: ${v}`);
  return n;
}

/**
 * The HTTP front of the testkit: routes requests to the store with kube-apiserver's semantics, streams watches,
 * serves discovery, and applies injected faults. Restartable on the same port with its data kept.
 */
export class ApiServer {
  readonly faults = new FaultInjector();
  private server: Server | undefined;
  private port: number;
  private readonly host: string;
  private readonly watches = new Set<WatchConnection>();
  private readonly counts = new Map<string, number>();

  constructor(
    readonly store: ObjectStore,
    private readonly options: ApiServerOptions = {},
  ) {
    this.port = options.port ?? 0;
    this.host = options.host ?? '127.0.0.1';
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** Starts listening; resolves once the port is bound. */
  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => this.writeError(res, e));
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection, open watches included. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const w of [...this.watches]) w.drop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Stops and starts again on the same port; the store (all data) is kept, as after an apiserver restart. */
  async restart(): Promise<void> {
    await this.close();
    await this.listen();
  }

  /** Cuts open watch connections (all, or those of one resource plural) without a clean end. Returns how many. */
  dropWatches(resource?: string): number {
    let n = 0;
    for (const w of [...this.watches]) {
      if (resource === undefined || w.watched.plural === resource) {
        w.drop();
        n += 1;
      }
    }
    return n;
  }

  /**
   * Forgets the change history and ends open watches with an ERROR 410 Expired event, as when the watch cache
   * has moved past a client: clients must relist. Returns how many watches were ended.
   */
  expireWatches(resource?: string): number {
    this.store.compact();
    let n = 0;
    for (const w of [...this.watches]) {
      if (resource === undefined || w.watched.plural === resource) {
        w.fail(resourceExpired(this.store.resourceVersion - 1, this.store.history.compactedAt).status);
        n += 1;
      }
    }
    return n;
  }

  /** Number of open watch connections. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Requests served so far, keyed `verb resource` (e.g. `create persistentvolumes`). */
  requestCounts(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /** Resets {@link requestCounts}. */
  resetRequestCounts(): void {
    this.counts.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = parseRoute(url.pathname);
    const method = req.method ?? 'GET';
    if (route.type === 'discovery') {
      const found = discover(route.path, `${this.host}:${this.port}`);
      if (found === undefined) throw unknownPath();
      if (typeof found.body === 'string') this.writeText(res, found.status, found.body);
      else this.writeJson(res, found.status, found.body);
      return;
    }
    if (route.type === 'unknown') throw unknownPath();
    const q = url.searchParams;
    const watch = q.get('watch') === 'true' || q.get('watch') === '1';
    const verb = requestVerb(method, route, watch);
    const r = route.resource;
    if (verb === undefined) {
      throw methodNotAllowed();
    }
    if (verb !== 'log' && verb !== 'binding' && !r.verbs.includes(verb)) throw methodNotAllowed();
    if (
      route.subresource !== undefined &&
      !(r.subresources as readonly string[]).includes(route.subresource) &&
      verb !== 'binding'
    ) {
      throw unknownPath();
    }
    const countKey = `${verb} ${r.plural}${route.subresource === 'status' ? '/status' : ''}`;
    this.counts.set(countKey, (this.counts.get(countKey) ?? 0) + 1);
    const faultVerb: Verb = verb === 'log' ? 'get' : verb === 'binding' ? 'create' : verb;
    const fault = this.faults.decide({
      verb: faultVerb,
      resource: r,
      ...(route.subresource === undefined ? {} : { subresource: route.subresource }),
      ...(route.name === undefined ? {} : { name: route.name }),
    });
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.error !== undefined) throw fault.error;
    const body: RequestBody = method === 'GET' ? { bytes: Buffer.alloc(0), mediaType: '' } : await readBody(req);
    if (verb === 'watch') {
      this.startWatch(req, res, r, route, q);
      return;
    }
    const reply = this.dispatch(req, verb, route, q, body);
    // Go's net/http writes the text of a warning as a quoted string (escaping quotes and backslashes).
    for (const w of reply.warnings ?? []) res.appendHeader('Warning', `299 - ${JSON.stringify(w)}`);
    if (reply.contentType === 'text/plain') this.writeText(res, reply.status, String(reply.body));
    else this.writeJson(res, reply.status, reply.body);
  }

  private dispatch(
    req: IncomingMessage,
    verb: Exclude<RequestVerb, 'watch'>,
    route: Extract<Route, { type: 'resource' }>,
    q: URLSearchParams,
    body: RequestBody,
  ): Reply {
    const { resource: r, namespace, name } = route;
    const status = route.subresource === 'status' ? ('status' as const) : undefined;
    switch (verb) {
      case 'get': {
        const obj = this.store.mustGet(r, namespace, name ?? '');
        if (wantsTable(req.headers.accept)) {
          return {
            status: 200,
            body: toTable(r, [obj], {
              includeObject: includeObject(q),
              resourceVersion: obj.metadata.resourceVersion ?? '',
            }),
          };
        }
        return { status: 200, body: obj };
      }
      case 'list':
        return this.list(req, r, namespace, q);
      case 'create':
        return handleCreate(this.store, r, namespace, body, dryRunParam(q, 'CreateOptions'));
      case 'update':
        return handleUpdate(this.store, r, namespace, name ?? '', status, body, dryRunParam(q, 'UpdateOptions'));
      case 'patch':
        return handlePatch(
          this.store,
          r,
          namespace,
          name ?? '',
          status,
          body,
          q.get('fieldManager'),
          dryRunParam(q, 'PatchOptions'),
        );
      case 'delete':
        return handleDelete(this.store, r, namespace, name ?? '', body, q, dryRunParam(q, 'DeleteOptions'));
      case 'deletecollection': {
        const listed = listObjects(this.store, r, {
          ...parseSelectors(r, q.get('labelSelector'), q.get('fieldSelector')),
          ...(namespace === undefined ? {} : { namespace }),
        });
        return handleDeleteCollection(this.store, r, listed.items, body, q, dryRunParam(q, 'DeleteOptions'));
      }
      case 'binding':
        return handleBinding(this.store, namespace ?? '', name ?? '', body);
      case 'log':
        return this.podLog(namespace ?? '', name ?? '', q);
    }
  }

  private list(req: IncomingMessage, r: ResourceType, namespace: string | undefined, q: URLSearchParams): Reply {
    validateListOptions(listOptions(q), false);
    const limit = intParam(q, 'limit');
    const result = listObjects(this.store, r, {
      ...parseSelectors(r, q.get('labelSelector'), q.get('fieldSelector')),
      ...(namespace === undefined ? {} : { namespace }),
      ...(limit === undefined ? {} : { limit }),
      ...(q.get('continue') === null ? {} : { continueToken: q.get('continue') ?? '' }),
      ...(q.get('resourceVersion') === null ? {} : { resourceVersion: q.get('resourceVersion') ?? '' }),
      ...(q.get('resourceVersionMatch') === null ? {} : { resourceVersionMatch: q.get('resourceVersionMatch') ?? '' }),
    });
    const rv = String(result.resourceVersion);
    if (wantsTable(req.headers.accept)) {
      return {
        status: 200,
        body: toTable(r, result.items, {
          includeObject: includeObject(q),
          resourceVersion: rv,
          ...(result.continueToken === undefined ? {} : { continueToken: result.continueToken }),
          ...(result.remainingItemCount === undefined ? {} : { remainingItemCount: result.remainingItemCount }),
        }),
      };
    }
    const metadata: Record<string, unknown> = { resourceVersion: rv };
    if (result.continueToken !== undefined) metadata.continue = result.continueToken;
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
    // Items of a typed list carry no apiVersion/kind on the wire.
    const items = result.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    return {
      status: 200,
      body: {
        kind: `${r.kind}List`,
        apiVersion: r.group === '' ? r.version : `${r.group}/${r.version}`,
        metadata,
        items,
      },
    };
  }

  private podLog(namespace: string, name: string, q: URLSearchParams): Reply {
    const pod = this.store.mustGet('pods', namespace, name);
    const spec = (pod.spec ?? {}) as { nodeName?: string; containers?: { name: string }[] };
    const containers = (spec.containers ?? []).map((c) => c.name);
    let container = q.get('container') ?? undefined;
    if (container === undefined) {
      if (containers.length > 1) {
        throw new StatusError(
          400,
          'BadRequest',
          `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`,
        );
      }
      container = containers[0];
    }
    if (spec.nodeName === undefined || spec.nodeName === '') {
      throw new StatusError(400, 'BadRequest', `pod ${name} does not have a host assigned`);
    }
    const tailLines = intParam(q, 'tailLines');
    const text = this.options.logs?.readLog(namespace, name, container, {
      ...(tailLines === undefined ? {} : { tailLines }),
      previous: q.get('previous') === 'true',
    });
    return { status: 200, body: text ?? '', contentType: 'text/plain' };
  }

  private startWatch(
    req: IncomingMessage,
    res: ServerResponse,
    r: ResourceType,
    route: Extract<Route, { type: 'resource' }>,
    q: URLSearchParams,
  ): void {
    const fieldSelector = route.name === undefined ? q.get('fieldSelector') : `metadata.name=${route.name}`;
    const timeout = intParam(q, 'timeoutSeconds') ?? this.options.defaultWatchTimeoutSeconds ?? 1800;
    const rv = q.get('resourceVersion');
    const options = listOptions(q);
    // WatchList defaulting (on in 1.32): a watch from "" or "0" that says nothing else gets its initial events, and
    // with them the bookmark that ends them.
    if (
      options.sendInitialEvents === undefined &&
      (options.resourceVersionMatch ?? '') === '' &&
      (rv === null || rv === '' || rv === '0')
    ) {
      options.sendInitialEvents = true;
      options.resourceVersionMatch = 'NotOlderThan';
    }
    validateListOptions(options, true);
    const w = new WatchConnection(
      this.store,
      r,
      {
        ...parseSelectors(r, q.get('labelSelector'), fieldSelector),
        ...(route.namespace === undefined ? {} : { namespace: route.namespace }),
        ...(rv === null ? {} : { resourceVersion: rv }),
        allowWatchBookmarks: boolParam(q, 'allowWatchBookmarks') === true,
        ...(options.sendInitialEvents === undefined ? {} : { sendInitialEvents: options.sendInitialEvents }),
        timeoutSeconds: timeout,
      },
      res,
      { bookmarkIntervalMs: this.options.bookmarkIntervalMs ?? 1000 },
      (conn) => this.watches.delete(conn),
    );
    this.watches.add(w);
    req.socket.setTimeout(0);
    w.start();
  }

  private writeJson(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private writeText(res: ServerResponse, status: number, body: string): void {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }

  private writeError(res: ServerResponse, e: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status: Status =
      e instanceof StatusError ? e.status : internalError(e instanceof Error ? e.message : String(e)).status;
    const headers: Record<string, string> = {};
    if (status.details?.retryAfterSeconds !== undefined)
      headers['Retry-After'] = String(status.details.retryAfterSeconds);
    const text = JSON.stringify(status);
    res.writeHead(status.code, {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  }
}

/**
 * The `dryRun` parameter: only `All` is supported, as kube-apiserver validates it (422 on the verb's options kind,
 * the values shown as Go prints a `[]string`).
 */
function dryRunParam(q: URLSearchParams, optionsKind: string): boolean {
  const values = q.getAll('dryRun');
  if (values.length === 0) return false;
  if (values.every((v) => v === 'All')) return true;
  const shown = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
  const message = `Unsupported value: ${shown}: supported values: "All"`;
  throw new StatusError(422, 'Invalid', `${optionsKind}.meta.k8s.io "" is invalid: dryRun: ${message}`, {
    group: 'meta.k8s.io',
    kind: optionsKind,
    causes: [{ reason: 'FieldValueNotSupported', message, field: 'dryRun' }],
  });
}

/** A boolean query parameter as Go's `strconv.ParseBool` reads it; `undefined` when absent. */
function boolParam(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(v)) return false;
  throw new StatusError(400, 'BadRequest', `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function listOptions(q: URLSearchParams): ListOptionsQuery {
  return {
    resourceVersion: q.get('resourceVersion'),
    resourceVersionMatch: q.get('resourceVersionMatch'),
    continueToken: q.get('continue'),
    sendInitialEvents: boolParam(q, 'sendInitialEvents'),
  };
}

function includeObject(q: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}
