import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../api/objects.js';
import { resourceKey, type ResourceType } from '../api/resources.js';
import { resourceExpired, type Status } from '../api/status.js';
import type { Change } from '../store/history.js';
import type { ObjectStore } from '../store/store.js';
import { matchesSelectors, type Selectors } from './selection.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Parameters of one watch request. */
export interface WatchQuery extends Selectors {
  namespace?: string;
  resourceVersion?: string;
  allowWatchBookmarks: boolean;
  /**
   * Send the current state as ADDED events first, then (with bookmarks allowed) a BOOKMARK marking their end. The
   * server defaults it to true for a watch from resourceVersion `""` or `"0"` that does not say (the WatchList
   * defaulting of 1.32); false starts from now, or from `resourceVersion`, without them.
   */
  sendInitialEvents?: boolean;
  /** Seconds until the server ends the watch. */
  timeoutSeconds: number;
}

/** Timing of watches, from the server options. */
export interface WatchTiming {
  /** How often a watch that asked for bookmarks gets one, in ms. */
  bookmarkIntervalMs: number;
}

function apiVersionOf(r: ResourceType): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** Strips `apiVersion`/`kind`-less objects back to their wire form: watch events carry kind and apiVersion. */
function wire(r: ResourceType, o: KubeObject): KubeObject {
  return { apiVersion: apiVersionOf(r), kind: r.kind, ...o };
}

/**
 * One open watch: writes newline-delimited JSON events to the response, as kube-apiserver does for
 * `?watch=true` with `application/json`.
 */
export class WatchConnection {
  private closed = false;
  /** The newest resourceVersion this watch has told its client about: bookmarks only ever move it forward. */
  private sentRv = 0;
  private unsubscribe: (() => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly resource: ResourceType,
    private readonly query: WatchQuery,
    private readonly res: ServerResponse,
    private readonly timing: WatchTiming,
    private readonly onClose: (w: WatchConnection) => void,
  ) {}

  /** Sends the initial or replayed events and subscribes to new ones. Synchronous, so nothing falls between. */
  start(): void {
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.res.flushHeaders();
    const rv = this.query.resourceVersion;
    const fromNow = rv === undefined || rv === '' || rv === '0';
    if (this.query.sendInitialEvents ?? fromNow) {
      // The state at least as new as rv (NotOlderThan): the current one.
      for (const o of this.store.list(this.resource, this.query.namespace)) {
        if (matchesSelectors(this.resource, o, this.query)) this.send('ADDED', o);
      }
      this.sentRv = this.store.resourceVersion;
      if (this.query.sendInitialEvents === true && this.query.allowWatchBookmarks) this.initialEventsEnd();
    } else if (fromNow) {
      this.sentRv = this.store.resourceVersion;
    } else {
      const since = this.store.history.since(Number(rv));
      if (since === undefined) {
        this.fail(resourceExpired(Number(rv), this.store.history.compactedAt).status);
        return;
      }
      this.sentRv = Number(rv);
      for (const change of since) this.deliver(change);
    }
    this.unsubscribe = this.store.subscribe((c) => this.deliver(c));
    this.res.on('close', () => this.close());
    this.timers.push(setTimeout(() => this.end(), this.query.timeoutSeconds * 1000));
    if (this.query.allowWatchBookmarks) {
      this.timers.push(setInterval(() => this.bookmark(), this.timing.bookmarkIntervalMs));
    }
  }

  /** Maps a store change to this watch's view: selector transitions become ADDED or DELETED, as the real server does. */
  private deliver(c: Change): void {
    if (this.closed || c.resource !== resourceKey(this.resource)) return;
    const ns = this.query.namespace;
    if (ns !== undefined && this.resource.namespaced && c.object.metadata.namespace !== ns) return;
    const now = c.type !== 'DELETED' && matchesSelectors(this.resource, c.object, this.query);
    const before = c.previous !== undefined && matchesSelectors(this.resource, c.previous, this.query);
    if (c.type === 'ADDED') {
      if (now) this.send('ADDED', c.object);
    } else if (c.type === 'DELETED') {
      if (before || matchesSelectors(this.resource, c.object, this.query)) this.send('DELETED', c.object);
    } else if (now && before) this.send('MODIFIED', c.object);
    else if (now) this.send('ADDED', c.object);
    else if (before) this.send('DELETED', c.object);
  }

  private send(type: WatchEventType, object: unknown): void {
    if (this.closed) return;
    const body =
      type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED'
        ? wire(this.resource, object as KubeObject)
        : object;
    const rv = Number((body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);
    if (type !== 'ERROR' && Number.isInteger(rv) && rv > this.sentRv) this.sentRv = rv;
    this.res.write(`${JSON.stringify({ type, object: body })}\n`);
  }

  /** An empty object of the watched kind, as a BOOKMARK carries it: only a resourceVersion (and Go's null creationTimestamp). */
  private bookmarkObject(annotations?: Record<string, string>): object {
    return {
      kind: this.resource.kind,
      apiVersion: apiVersionOf(this.resource),
      metadata: {
        resourceVersion: String(this.store.resourceVersion),
        creationTimestamp: null,
        ...(annotations === undefined ? {} : { annotations }),
      },
    };
  }

  /**
   * A BOOKMARK with the current resourceVersion, sent only when that is newer than everything the client got so far
   * (the watch cache sends none that would not move the client forward).
   */
  bookmark(): void {
    if (this.store.resourceVersion <= this.sentRv) return;
    this.send('BOOKMARK', this.bookmarkObject());
  }

  /**
   * The BOOKMARK that ends the initial events: annotated `k8s.io/initial-events-end`, and, as kube-apiserver 1.32
   * sends it, `kubernetes.io/initial-events-list-blueprint`: the empty list the client can build its list from.
   */
  private initialEventsEnd(): void {
    const list = {
      kind: `${this.resource.kind}List`,
      apiVersion: apiVersionOf(this.resource),
      metadata: {},
      items: null,
    };
    this.send(
      'BOOKMARK',
      this.bookmarkObject({
        'k8s.io/initial-events-end': 'true',
        'kubernetes.io/initial-events-list-blueprint': Buffer.from(`${JSON.stringify(list)}\n`).toString('base64'),
      }),
    );
  }

  /** Sends an ERROR event with the Status, then ends the stream (as for 410 Expired). */
  fail(status: Status): void {
    this.send('ERROR', status);
    this.end();
  }

  /** Ends the stream cleanly. */
  end(): void {
    if (this.closed) return;
    this.res.end();
    this.close();
  }

  /** Cuts the connection without a clean end, as a network failure would. */
  drop(): void {
    if (this.closed) return;
    this.res.socket?.destroy();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    this.onClose(this);
  }

  /** The watched resource. */
  get watched(): ResourceType {
    return this.resource;
  }
}
