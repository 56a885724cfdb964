import { CoreV1Api, type V1ConfigMap, type Watch } from '@kubernetes/client-node';
import { startApiServer, type KubeObject, type Testkit, type TestkitOptions } from '@kprov/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { Backoff } from '../../src/backoff/backoff.js';
import { realClock, type Clock } from '../../src/clock/clock.js';
import { makeApiClient, watchWithAgent, withSignal } from '../../src/client/agent.js';
import {
  Watcher,
  type ListParams,
  type WatcherEvent,
  type WatcherOptions,
  type WatcherRestart,
} from '../../src/watch/watcher.js';

type WatchQuery = Record<string, string | number | boolean | undefined>;

interface Harness {
  kit: Testkit;
  watcher: Watcher<V1ConfigMap>;
  events: WatcherEvent<V1ConfigMap>[];
  restarts: WatcherRestart[];
  lists: ListParams[];
  watches: WatchQuery[];
  controller: AbortController;
  done: Promise<void>;
}

const harnesses: Harness[] = [];

afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    h.controller.abort();
    await h.done;
    await h.kit.stop();
  }
});

function configMap(name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

/** Starts a testkit and a watcher on configmaps in all namespaces, recording everything. */
async function start(
  options: Partial<WatcherOptions<V1ConfigMap>> & {
    kit?: TestkitOptions;
    seed?: string[];
    run?: boolean;
    watchFromBeforeSeed?: boolean;
  } = {},
): Promise<Harness> {
  const { kit: kitOptions, seed = [], run = true, watchFromBeforeSeed = false, ...watcherOptions } = options;
  const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false, ...kitOptions });
  // `watchFromBeforeSeed`: the watcher starts from the resourceVersion the store had before the seed objects.
  if (watchFromBeforeSeed) watcherOptions.resourceVersion = String(kit.store.resourceVersion);
  for (const name of seed) kit.store.create('configmaps', configMap(name));
  const core = makeApiClient(kit.kubeConfig, CoreV1Api);
  const realWatch = watchWithAgent(kit.kubeConfig);
  const lists: ListParams[] = [];
  const watches: WatchQuery[] = [];
  // Records the query of each watch, then delegates to the real Watch.
  const recordingWatch = {
    watch: (path: string, query: WatchQuery, cb: (t: string, o: unknown) => void, done: (e: unknown) => void) => {
      watches.push(query);
      return realWatch.watch(path, query, cb, done);
    },
  } as unknown as Watch;
  const events: WatcherEvent<V1ConfigMap>[] = [];
  const restarts: WatcherRestart[] = [];
  const watcher = new Watcher<V1ConfigMap>({
    list: (p, signal) => {
      lists.push(p);
      return core.listConfigMapForAllNamespaces(
        {
          limit: p.limit,
          ...(p.continue === undefined ? {} : { _continue: p.continue }),
          ...(p.resourceVersion === undefined ? {} : { resourceVersion: p.resourceVersion }),
        },
        withSignal(signal),
      );
    },
    watch: recordingWatch,
    path: '/api/v1/configmaps',
    backoff: new Backoff({ initialMs: 10, maxMs: 50 }),
    onRestart: (r) => restarts.push(r),
    ...watcherOptions,
  });
  const controller = new AbortController();
  const h: Harness = {
    kit,
    watcher,
    events,
    restarts,
    lists,
    watches,
    controller,
    done: run ? watcher.run((e) => events.push(e), controller.signal) : Promise.resolve(),
  };
  harnesses.push(h);
  return h;
}

const names = (events: WatcherEvent<V1ConfigMap>[], type: WatcherEvent<V1ConfigMap>['type']): string[] =>
  events.flatMap((e) => (e.type === type && 'object' in e ? [e.object.metadata?.name ?? ''] : []));

const initDone = (events: WatcherEvent<V1ConfigMap>[]): number => events.filter((e) => e.type === 'InitDone').length;

describe('Watcher', () => {
  it('lists page by page between Init and InitDone, then watches from the list resourceVersion', async () => {
    const h = await start({ seed: ['a', 'b', 'c', 'd', 'e'], pageSize: 2 });
    await vi.waitFor(() => expect(h.watches).toHaveLength(1), WAIT);
    expect(h.lists.map((p) => p.limit)).toEqual([2, 2, 2]);
    expect(h.lists[0]?.continue).toBeUndefined();
    expect(h.lists[1]?.continue).toBeTypeOf('string');
    expect(h.events[0]).toEqual({ type: 'Init' });
    expect(names(h.events, 'InitApply')).toEqual(['a', 'b', 'c', 'd', 'e']);
    const done = h.events[6];
    expect(done?.type).toBe('InitDone');
    const rv = done?.type === 'InitDone' ? done.resourceVersion : undefined;
    expect(rv).toBe(String(h.kit.store.resourceVersion));
    const q = h.watches[0];
    expect(q?.resourceVersion).toBe(rv);
    expect(q?.allowWatchBookmarks).toBe(true);
    expect(q?.timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(q?.timeoutSeconds).toBeLessThan(600);
  });

  it('with initialListFromCache, lists at resourceVersion 0 in one answer first, and relists page by page', async () => {
    const h = await start({ seed: ['a', 'b', 'c', 'd', 'e'], pageSize: 2, initialListFromCache: true });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    expect(h.lists).toEqual([{ limit: 2, resourceVersion: '0' }]);
    expect(names(h.events, 'InitApply')).toEqual(['a', 'b', 'c', 'd', 'e']);
    h.kit.server.expireWatches();
    await vi.waitFor(() => expect(initDone(h.events)).toBe(2), WAIT);
    expect(h.lists.slice(1).map((p) => p.resourceVersion)).toEqual([undefined, undefined, undefined]);
    expect(h.lists.slice(1).map((p) => p.continue === undefined)).toEqual([true, false, false]);
  });

  it('starts with a watch from a given resourceVersion, without a list, and delivers every change after it', async () => {
    const h = await start({ seed: ['seeded'], watchFromBeforeSeed: true });
    // Created after that resourceVersion but before the watch began: it comes through the watch.
    await vi.waitFor(() => expect(names(h.events, 'Apply')).toEqual(['seeded']), WAIT);
    h.kit.store.create('configmaps', configMap('after'));
    await vi.waitFor(() => expect(names(h.events, 'Apply')).toEqual(['seeded', 'after']), WAIT);
    expect(h.lists).toEqual([]);
    expect(h.watches).toHaveLength(1);
    expect(h.events.some((e) => e.type === 'Init' || e.type === 'InitDone')).toBe(false);
  });

  it('emits Apply and Delete from the watch', async () => {
    const h = await start();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.store.create('configmaps', configMap('x'));
    h.kit.store.modify('configmaps', 'default', 'x', (o) => {
      o.data = { k: 'v' };
    });
    h.kit.store.delete('configmaps', 'default', 'x');
    await vi.waitFor(() => expect(names(h.events, 'Delete')).toEqual(['x']), WAIT);
    expect(names(h.events, 'Apply')).toEqual(['x', 'x']);
    expect(h.watcher.resourceVersion).toBe(String(h.kit.store.resourceVersion));
  });

  it('advances the resourceVersion on bookmarks without emitting anything', async () => {
    const h = await start({ kit: { http: { bookmarkIntervalMs: 50 } } });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    const before = h.watcher.resourceVersion;
    const count = h.events.length;
    // A change elsewhere moves the global resourceVersion; only bookmarks can tell the configmap watch.
    h.kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
    await vi.waitFor(() => expect(h.watcher.resourceVersion).toBe(String(h.kit.store.resourceVersion)), WAIT);
    expect(h.watcher.resourceVersion).not.toBe(before);
    expect(h.events).toHaveLength(count);
  });

  it('re-watches from the last resourceVersion, without a relist, when the server ends the watch', async () => {
    const h = await start({ minWatchTimeoutSeconds: 1 });
    await vi.waitFor(() => expect(h.watches.length).toBeGreaterThanOrEqual(2), WAIT);
    expect(h.restarts[0]).toMatchObject({ reason: 'ended', relist: false, delayMs: 0 });
    expect(h.lists).toHaveLength(1);
    expect(h.watches[1]?.resourceVersion).toBe(h.watcher.resourceVersion);
    h.kit.store.create('configmaps', configMap('late'));
    await vi.waitFor(() => expect(names(h.events, 'Apply')).toEqual(['late']), WAIT);
  });

  it('resumes after a dropped connection without losing or repeating events', async () => {
    const h = await start({ backoff: new Backoff({ initialMs: 200, maxMs: 200, jitter: 0 }) });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.store.create('configmaps', configMap('before'));
    await vi.waitFor(() => expect(names(h.events, 'Apply')).toEqual(['before']), WAIT);
    h.kit.server.dropWatches();
    // Changes while disconnected (the watcher waits 200 ms before resuming).
    h.kit.store.create('configmaps', configMap('during'));
    h.kit.store.delete('configmaps', 'default', 'before');
    await vi.waitFor(() => expect(h.restarts.some((r) => r.reason === 'dropped' && !r.relist)).toBe(true), WAIT);
    h.kit.store.create('configmaps', configMap('after'));
    await vi.waitFor(() => expect(names(h.events, 'Apply')).toEqual(['before', 'during', 'after']), WAIT);
    expect(names(h.events, 'Delete')).toEqual(['before']);
    expect(h.lists).toHaveLength(1);
  });

  it('re-watches at once when a watch that has been up a while drops, even with no events on it', async () => {
    let offset = 0;
    const clock: Clock = { ...realClock, now: () => realClock.now() + offset };
    const h = await start({ clock, backoff: new Backoff({ initialMs: 60_000, maxMs: 60_000, jitter: 0 }) });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    offset += 5_000;
    h.kit.server.dropWatches();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    expect(h.restarts.find((r) => r.reason === 'dropped')).toMatchObject({ delayMs: 0, relist: false });
  });

  it('relists on an ERROR 410 event', async () => {
    const h = await start({ seed: ['a'] });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.server.expireWatches();
    h.kit.store.delete('configmaps', 'default', 'a');
    await vi.waitFor(() => expect(initDone(h.events)).toBe(2), WAIT);
    expect(h.restarts[0]).toMatchObject({ reason: 'expired', relist: true, statusCode: 410 });
    // The second list no longer has 'a'; no Delete is synthesized.
    const secondInit = h.events.map((e) => e.type).lastIndexOf('Init');
    expect(names(h.events.slice(secondInit), 'InitApply')).toEqual([]);
    expect(names(h.events, 'Delete')).toEqual([]);
  });

  it('relists on a 410 response to the watch request', async () => {
    const h = await start();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.faults.add({ verb: 'watch', action: { type: 'error', code: 410 }, count: 1 });
    h.kit.server.dropWatches();
    await vi.waitFor(() => expect(initDone(h.events)).toBe(2), WAIT);
    expect(h.restarts.map((r) => r.reason)).toEqual(['dropped', 'expired']);
    expect(h.restarts[1]).toMatchObject({ relist: true, statusCode: 410 });
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
  });

  it('backs off and retries watch errors from the last resourceVersion', async () => {
    const h = await start();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.faults.add({ verb: 'watch', action: { type: 'error', code: 500 }, count: 3 });
    h.kit.server.dropWatches();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    const errors = h.restarts.filter((r) => r.reason === 'error');
    expect(errors).toHaveLength(3);
    for (const r of errors) {
      expect(r.statusCode).toBe(500);
      expect(r.relist).toBe(false);
      expect(r.delayMs).toBeGreaterThan(0);
    }
    expect(h.lists).toHaveLength(1);
  });

  it('backs off and retries a failing list until it succeeds', async () => {
    const kitFaults = await start({ run: false });
    kitFaults.kit.faults.add({ verb: 'list', action: { type: 'error', code: 500 }, count: 3 });
    kitFaults.done = kitFaults.watcher.run((e) => kitFaults.events.push(e), kitFaults.controller.signal);
    await vi.waitFor(() => expect(initDone(kitFaults.events)).toBe(1), WAIT);
    expect(kitFaults.restarts.map((r) => [r.reason, r.statusCode, r.relist])).toEqual([
      ['list-failed', 500, true],
      ['list-failed', 500, true],
      ['list-failed', 500, true],
    ]);
    expect(kitFaults.events.filter((e) => e.type === 'Init')).toHaveLength(4);
  });

  it('relists when nothing arrives for idleTimeoutMs', async () => {
    const h = await start({ idleTimeoutMs: 300, kit: { http: { bookmarkIntervalMs: 60_000 } } });
    await vi.waitFor(() => expect(h.restarts.some((r) => r.reason === 'idle')).toBe(true), WAIT);
    expect(h.restarts.find((r) => r.reason === 'idle')).toMatchObject({ relist: true, delayMs: 0 });
    await vi.waitFor(() => expect(initDone(h.events)).toBeGreaterThanOrEqual(2), WAIT);
  });

  it('keeps going when the consumer throws', async () => {
    const h = await start({ run: false, seed: ['a'] });
    const seen: string[] = [];
    h.done = h.watcher.run((e) => {
      seen.push(e.type);
      throw new Error('consumer bug');
    }, h.controller.signal);
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.kit.store.create('configmaps', configMap('b'));
    await vi.waitFor(() => expect(seen).toEqual(['Init', 'InitApply', 'InitDone', 'Apply']), WAIT);
    expect(h.restarts).toEqual([]);
  });

  it('stops on abort and leaves no open watch', async () => {
    const h = await start();
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(1), WAIT);
    h.controller.abort();
    await h.done;
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(0), WAIT);
    h.kit.store.create('configmaps', configMap('ignored'));
    expect(names(h.events, 'Apply')).toEqual([]);
  });

  it('stops on abort while backing off', async () => {
    const h = await start({ run: false, backoff: new Backoff({ initialMs: 60_000, maxMs: 60_000 }) });
    h.kit.faults.add({ verb: 'list', action: { type: 'error', code: 500 } });
    h.done = h.watcher.run((e) => h.events.push(e), h.controller.signal);
    await vi.waitFor(() => expect(h.restarts).toHaveLength(1), WAIT);
    h.controller.abort();
    await h.done;
  });

  it('is also an async iterable', async () => {
    const h = await start({ run: false, seed: ['a', 'b'] });
    const seen: string[] = [];
    for await (const e of h.watcher.events(h.controller.signal)) {
      seen.push(e.type === 'InitApply' ? `InitApply ${e.object.metadata?.name ?? ''}` : e.type);
      if (e.type === 'InitDone') h.kit.store.create('configmaps', configMap('c'));
      if (e.type === 'Apply') break;
    }
    expect(seen).toEqual(['Init', 'InitApply a', 'InitApply b', 'InitDone', 'Apply']);
    await vi.waitFor(() => expect(h.kit.server.openWatches).toBe(0), WAIT);
  });
});
