/**
 * A list+watch cache of one collection, after client-go's reflector: a list, then a watch from the list's
 * resourceVersion with bookmarks; a watch that ends (the server's timeout, client-node's 30 s inactivity limit) is
 * resumed from the last resourceVersion; 410 Gone relists; any other failure is retried after a growing delay
 * (200 ms doubling to 5 s), and so is a watch that ends at once without an event, so nothing loops hot. Objects are
 * kept as the server sends them, and held, not copied.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Watch } from '@kubernetes/client-node';
import type { KubeObject } from '../api/objects.js';
import type { RestClient } from './rest.js';

/** Options of {@link Reflector}. */
export interface ReflectorOptions {
  rest: RestClient;
  watch: Watch;
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string;
  /** Field selector of both the list and the watch, e.g. `spec.nodeName=node-1`. Default none. */
  fieldSelector?: string;
  /** Told about every change the server reports (not about {@link Reflector.put}). */
  onChange: (object: Readonly<KubeObject>) => void;
  /** Told about every failure before it is retried. */
  onError: (error: unknown) => void;
}

type WatchEnd =
  { reason: 'ended'; events: number; ms: number } | { reason: 'expired' } | { reason: 'error'; error: unknown };

const MIN_DELAY_MS = 200;
const MAX_DELAY_MS = 5000;

/** `namespace/name` (`/name` for cluster-scoped objects). */
export function objectKey(obj: Readonly<KubeObject>): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/**
 * Whether resourceVersion `a` is newer than `b`. resourceVersions are opaque to clients, but both kube-apiserver
 * (etcd revisions) and the testkit use increasing integers, which lets a write's answer and a later watch event
 * be ordered; anything else counts as newer.
 */
export function isNewer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a !== b;
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) > BigInt(b) : a !== b;
}

/** Keeps one collection in memory; see the module comment. */
export class Reflector {
  private readonly objects = new Map<string, KubeObject>();
  private resourceVersion: string | undefined;
  private controller: AbortController | undefined;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private isSynced = false;

  constructor(private readonly options: ReflectorOptions) {}

  /** Whether the first list has arrived. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** The held object under `namespace/name`. */
  get(namespace: string | undefined, name: string): Readonly<KubeObject> | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }

  /** The held objects. */
  values(): IterableIterator<Readonly<KubeObject>> {
    return this.objects.values();
  }

  /** Holds an object a write returned, unless what is held is as new already; the watch event that follows is then skipped. */
  put(obj: KubeObject): void {
    const key = objectKey(obj);
    const held = this.objects.get(key);
    if (held === undefined || isNewer(obj.metadata.resourceVersion, held.metadata.resourceVersion))
      this.objects.set(key, obj);
  }

  /** Starts listing and watching, in the background. */
  start(): void {
    this.running ??= this.loop();
  }

  /** Stops watching; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.controller?.abort();
    await this.running;
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        const end = await this.watchOnce();
        if (end.reason === 'error') throw end.error;
        if (end.reason === 'expired') this.resourceVersion = undefined;
        // A watch that ends at once with nothing in it is as good as a failure: retried later, not in a loop.
        failures = end.reason === 'ended' && end.events === 0 && end.ms < 1000 ? failures + 1 : 0;
      } catch (error) {
        if (this.stopped) return;
        failures += 1;
        this.options.onError(error);
      }
      if (failures > 0) await this.sleep(Math.min(MIN_DELAY_MS * 2 ** (failures - 1), MAX_DELAY_MS));
    }
  }

  private async list(): Promise<void> {
    const { rest, path, fieldSelector } = this.options;
    const list = await rest.request('GET', path, { query: { fieldSelector }, signal: this.stopping.signal });
    const items = (Array.isArray(list.items) ? list.items : []) as KubeObject[];
    const fresh = new Map(items.map((o) => [objectKey(o), o]));
    for (const [key, held] of this.objects) {
      if (fresh.has(key)) continue;
      this.objects.delete(key);
      this.options.onChange(held);
    }
    for (const [key, obj] of fresh) {
      const held = this.objects.get(key);
      if (held !== undefined && !isNewer(obj.metadata.resourceVersion, held.metadata.resourceVersion)) continue;
      this.objects.set(key, obj);
      this.options.onChange(obj);
    }
    this.resourceVersion = (list.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '';
    this.isSynced = true;
  }

  private apply(type: string, obj: KubeObject): void {
    const key = objectKey(obj);
    if (type === 'DELETED') {
      if (!this.objects.delete(key)) return;
    } else {
      const held = this.objects.get(key);
      if (held !== undefined && !isNewer(obj.metadata.resourceVersion, held.metadata.resourceVersion)) return;
      this.objects.set(key, obj);
    }
    this.options.onChange(obj);
  }

  private watchOnce(): Promise<WatchEnd> {
    const started = Date.now();
    let events = 0;
    let expired = false;
    let errorEvent: unknown;
    return new Promise<WatchEnd>((resolve) => {
      const onEvent = (type: string, obj: KubeObject & { code?: number; message?: string }): void => {
        if (type === 'ERROR') {
          if (obj.code === 410) expired = true;
          else errorEvent = new Error(`watch ${this.options.path}: ${obj.message ?? JSON.stringify(obj)}`);
          return;
        }
        const rv = obj.metadata?.resourceVersion;
        if (rv !== undefined) this.resourceVersion = rv;
        if (type === 'BOOKMARK') return;
        events += 1;
        this.apply(type, obj);
      };
      const done = (err: unknown): void => {
        this.controller = undefined;
        const status = (err as { statusCode?: number } | null)?.statusCode;
        if (expired || status === 410) resolve({ reason: 'expired' });
        else if (errorEvent !== undefined) resolve({ reason: 'error', error: errorEvent });
        // client-node's inactivity timeout, or our own abort: the watch simply ended.
        else if (err === null || err === undefined || this.stopped || (err as Error).name === 'TimeoutError')
          resolve({ reason: 'ended', events, ms: Date.now() - started });
        else resolve({ reason: 'error', error: err });
      };
      const query = {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        fieldSelector: this.options.fieldSelector,
        // As client-go: a random length in [5, 10) minutes, so that watches do not all end together.
        timeoutSeconds: 300 + Math.floor(Math.random() * 300),
      };
      this.options.watch.watch(this.options.path, query, onEvent, done).then((controller) => {
        this.controller = controller;
        if (this.stopped) controller.abort();
      }, done);
    });
  }

  /** Sleeps, or returns early on stop; the timer does not keep the process alive. */
  private async sleep(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal, ref: false }).catch(() => undefined);
  }
}
