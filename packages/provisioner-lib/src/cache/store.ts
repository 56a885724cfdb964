import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatcherEvent } from '../watch/watcher.js';

/** Computes an object's cache key. */
export type KeyFunc<T> = (object: T) => string;

/** Computes the values an object is indexed under (none, one or several). */
export type IndexFunc<T> = (object: T) => readonly string[];

/** The default key: `namespace/name`, or `name` for cluster-scoped objects (client-go's `MetaNamespaceKeyFunc`). */
export function metaNamespaceKey(object: KubernetesObject): string {
  const ns = object.metadata?.namespace;
  const name = object.metadata?.name ?? '';
  // `join` makes one flat string; `${ns}/${name}` would make a concatenation that V8 keeps as two parts (a copy of
  // `<ns>/` and a reference to the name), about 16 bytes more for every cached object.
  return ns === undefined || ns === '' ? name : [ns, name].join('/');
}

/** Indexer by `metadata.uid` (one value, or none when the object has no uid). */
export function uidIndex(object: KubernetesObject): readonly string[] {
  const uid = object.metadata?.uid;
  return uid === undefined || uid === '' ? [] : [uid];
}

/** Options of {@link createStore}. */
export interface StoreOptions<T> {
  /** Key function. Default {@link metaNamespaceKey}. */
  keyFunc?: KeyFunc<T>;
  /** Named indexers, e.g. `{ uid: uidIndex }`, queried with {@link Store.byIndex}. Default none. */
  indexers?: Readonly<Record<string, IndexFunc<T>>>;
}

/** A change the writer made to the store, for notifying handlers after it was applied. */
export type StoreChange<T> =
  { type: 'add'; object: T } | { type: 'update'; old: T; object: T } | { type: 'delete'; object: T };

/** The state shared by a {@link Store} and its {@link StoreWriter}. Internal. */
class StoreState<T> {
  items = new Map<string, T>();
  /**
   * index name → indexed value → keys: the one key itself while there is one (a `uid` index has one object per
   * value, and a Set per cached object cost about 120 bytes), a Set from the second on.
   */
  indices = new Map<string, Map<string, string | Set<string>>>();
  /** Objects of a relist in progress (between Init and InitDone). */
  buffer: Map<string, T> | undefined;
  synced = false;
  lastSyncResourceVersion: string | undefined;

  constructor(
    readonly keyFunc: KeyFunc<T>,
    readonly indexers: Readonly<Record<string, IndexFunc<T>>>,
  ) {
    for (const name of Object.keys(indexers)) this.indices.set(name, new Map());
  }

  private indexValues(name: string, object: T): readonly string[] {
    const fn = this.indexers[name];
    return fn === undefined ? [] : fn(object);
  }

  private unindex(key: string, object: T): void {
    for (const [name, index] of this.indices) {
      for (const value of this.indexValues(name, object)) {
        const keys = index.get(value);
        if (keys === key) index.delete(value);
        else if (typeof keys === 'object') {
          keys.delete(key);
          if (keys.size === 0) index.delete(value);
        }
      }
    }
  }

  private index(key: string, object: T): void {
    for (const [name, index] of this.indices) {
      for (const value of this.indexValues(name, object)) {
        const keys = index.get(value);
        if (keys === undefined) index.set(value, key);
        else if (typeof keys === 'object') keys.add(key);
        else if (keys !== key) index.set(value, new Set([keys, key]));
      }
    }
  }

  put(key: string, object: T): T | undefined {
    const old = this.items.get(key);
    if (old !== undefined) this.unindex(key, old);
    this.items.set(key, object);
    this.index(key, object);
    return old;
  }

  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  replace(items: Map<string, T>): void {
    this.items = items;
    for (const index of this.indices.values()) index.clear();
    for (const [key, object] of items) this.index(key, object);
  }
}

/**
 * The read side of a reflector cache (kube-runtime's `Store`, client-go's `Indexer`). Possibly stale: code that
 * acts on what it reads must tolerate conflicts and retry. Returned objects are the cached ones: do not mutate them.
 */
export interface Store<T> {
  /** The object under `key` (`namespace/name` or `name` with the default key function). */
  get(key: string): T | undefined;
  /** The key `object` has (or would have) in this store. */
  keyOf(object: T): string;
  /** Every cached object (a new array). */
  list(): T[];
  /** Every key (a new array). */
  keys(): string[];
  /** Number of cached objects. */
  readonly size: number;
  /**
   * The objects that `index` maps to `value`, e.g. `byIndex('uid', claimUid)`.
   * @throws Error when no indexer of that name was configured.
   */
  byIndex(index: string, value: string): T[];
  /** Whether a first full list has been applied. Stays true through later relists. */
  hasSynced(): boolean;
  /** The resourceVersion of the last applied list, if any. */
  readonly lastSyncResourceVersion: string | undefined;
}

class StoreReader<T> implements Store<T> {
  constructor(private readonly state: StoreState<T>) {}

  get(key: string): T | undefined {
    return this.state.items.get(key);
  }

  keyOf(object: T): string {
    return this.state.keyFunc(object);
  }

  list(): T[] {
    return [...this.state.items.values()];
  }

  keys(): string[] {
    return [...this.state.items.keys()];
  }

  get size(): number {
    return this.state.items.size;
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.state.indices.get(index);
    if (idx === undefined) throw new Error(`store has no index named ${JSON.stringify(index)}`);
    const keys = idx.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of typeof keys === 'string' ? [keys] : keys) {
      const object = this.state.items.get(key);
      if (object !== undefined) out.push(object);
    }
    return out;
  }

  hasSynced(): boolean {
    return this.state.synced;
  }

  get lastSyncResourceVersion(): string | undefined {
    return this.state.lastSyncResourceVersion;
  }
}

/**
 * The single write side of a store: applies watcher events. Between `Init` and `InitDone` listed objects go to a
 * side buffer while readers keep seeing the previous state; `InitDone` swaps the buffer in atomically, so objects
 * that vanished while disconnected are simply gone (no delete events mid-list).
 */
export interface StoreWriter<T> {
  /**
   * Applies one event; returns what changed. For `InitDone` that is the difference between the old and the new
   * state: `add` for new keys, `update` for keys whose `metadata.resourceVersion` changed (unchanged objects are
   * not reported), `delete` for keys no longer listed (with the last cached object). `Init` and `InitApply`
   * change nothing visible and return `[]`. `Apply` gives `add` or `update`; `Delete` gives `delete` with the
   * event's object (also when the key was not cached, as client-go does).
   */
  apply(event: WatcherEvent<T>): StoreChange<T>[];
}

class Writer<T> implements StoreWriter<T> {
  constructor(private readonly state: StoreState<T>) {}

  apply(event: WatcherEvent<T>): StoreChange<T>[] {
    const s = this.state;
    switch (event.type) {
      case 'Init':
        s.buffer = new Map();
        return [];
      case 'InitApply':
        (s.buffer ??= new Map()).set(s.keyFunc(event.object), event.object);
        return [];
      case 'InitDone': {
        const next = s.buffer ?? new Map<string, T>();
        s.buffer = undefined;
        const changes: StoreChange<T>[] = [];
        for (const [key, object] of next) {
          const old = s.items.get(key);
          if (old === undefined) changes.push({ type: 'add', object });
          else if (resourceVersionOf(old) !== resourceVersionOf(object) || resourceVersionOf(object) === undefined) {
            changes.push({ type: 'update', old, object });
          }
        }
        for (const [key, old] of s.items) if (!next.has(key)) changes.push({ type: 'delete', object: old });
        s.replace(next);
        s.synced = true;
        s.lastSyncResourceVersion = event.resourceVersion;
        return changes;
      }
      case 'Apply': {
        const old = s.put(s.keyFunc(event.object), event.object);
        return [
          old === undefined ? { type: 'add', object: event.object } : { type: 'update', old, object: event.object },
        ];
      }
      case 'Delete':
        s.remove(s.keyFunc(event.object));
        return [{ type: 'delete', object: event.object }];
    }
  }
}

function resourceVersionOf(object: unknown): string | undefined {
  return (object as KubernetesObject | undefined)?.metadata?.resourceVersion;
}

/**
 * A store and its single writer (kube-runtime's `store()`): hand the writer to one reflector or informer and share
 * the store with readers.
 */
export function createStore<T extends KubernetesObject>(
  options: StoreOptions<T> = {},
): { store: Store<T>; writer: StoreWriter<T> } {
  const state = new StoreState<T>(options.keyFunc ?? metaNamespaceKey, options.indexers ?? {});
  return { store: new StoreReader(state), writer: new Writer(state) };
}
