import type { KubernetesObject } from '@kubernetes/client-node';
import { startApiServer, type KubeObject, type Testkit, type TestkitOptions } from '@kprov/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { Backoff } from '../../src/backoff/backoff.js';
import {
  informerFor,
  type EventHandler,
  type Informer,
  type InformerForOptions,
  type InformerKind,
  type InformerKinds,
} from '../../src/cache/informer.js';
import type { WatcherRestart } from '../../src/watch/watcher.js';

interface Recorded {
  log: string[];
  restarts: WatcherRestart[];
  controller: AbortController;
  done: Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function kitWith(options: TestkitOptions = {}): Promise<Testkit> {
  const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false, ...options });
  cleanups.push(() => kit.stop());
  return kit;
}

const nameOf = (o: KubernetesObject): string => o.metadata?.name ?? '';

/** An informer of `kind` with small backoff, recording handler calls as `add x`, `update x`, `delete x`. */
function informer<K extends InformerKind>(
  kit: Testkit,
  kind: K,
  options: InformerForOptions<InformerKinds[K]> = {},
): { informer: Informer<InformerKinds[K]>; rec: Recorded; start: () => void } {
  const rec: Recorded = { log: [], restarts: [], controller: new AbortController(), done: Promise.resolve() };
  const handler: EventHandler<InformerKinds[K]> = {
    add: (o) => rec.log.push(`add ${nameOf(o)}`),
    update: (old, o) => rec.log.push(old === o ? `resync ${nameOf(o)}` : `update ${nameOf(o)}`),
    delete: (o) => rec.log.push(`delete ${nameOf(o)}`),
  };
  const inf = informerFor(kit.kubeConfig, kind, {
    backoff: new Backoff({ initialMs: 10, maxMs: 50 }),
    onRestart: (r) => rec.restarts.push(r),
    handlers: handler,
    ...options,
  });
  cleanups.push(async () => {
    rec.controller.abort();
    await rec.done;
  });
  return {
    informer: inf,
    rec,
    start: () => {
      rec.done = inf.run(rec.controller.signal);
    },
  };
}

function pvc(name: string, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' },
  };
}

function label(kit: Testkit, name: string, value: string, namespace = 'default'): void {
  kit.store.modify('persistentvolumeclaims', namespace, name, (o) => {
    o.metadata.labels = { ...o.metadata.labels, step: value };
  });
}

/** The store's view (name → resourceVersion) equals the server's. */
function serverView(kit: Testkit, resource: string): Record<string, string> {
  return Object.fromEntries(
    kit.store
      .list(resource)
      .map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o.metadata.resourceVersion ?? '']),
  );
}

function cacheView(inf: Informer<KubernetesObject>): Record<string, string> {
  return Object.fromEntries(
    inf.store
      .list()
      .map((o) => [`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o.metadata?.resourceVersion ?? '']),
  );
}

describe('Informer (PersistentVolumeClaims, all namespaces)', () => {
  it('is not synced until the first list completes, then lists and follows adds, updates and deletes', async () => {
    const kit = await kitWith();
    kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    kit.store.create('persistentvolumeclaims', pvc('a'));
    kit.store.create('persistentvolumeclaims', pvc('b', 'other'));
    kit.faults.add({ verb: 'list', action: { type: 'latency', ms: 300 }, count: 1 });
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    expect(inf.hasSynced()).toBe(false);
    start();
    await vi.waitFor(() => expect(kit.server.requestCounts()['list persistentvolumeclaims']).toBe(1), WAIT);
    expect(inf.hasSynced()).toBe(false);
    await inf.waitForSync(rec.controller.signal);
    expect(inf.hasSynced()).toBe(true);
    expect(inf.store.keys().sort()).toEqual(['default/a', 'other/b']);
    expect(rec.log.sort()).toEqual(['add a', 'add b']);

    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumeclaims', pvc('c'));
    label(kit, 'a', '1');
    kit.store.delete('persistentvolumeclaims', 'other', 'b');
    await vi.waitFor(() => expect(rec.log.slice(2)).toEqual(['add c', 'update a', 'delete b']), WAIT);
    expect(inf.store.get('default/a')?.metadata?.labels).toEqual({ step: '1' });
    expect(inf.store.get('other/b')).toBeUndefined();
    expect(cacheView(inf)).toEqual(serverView(kit, 'persistentvolumeclaims'));
  });

  it('indexes claims by uid', async () => {
    const kit = await kitWith();
    const created = kit.store.create('persistentvolumeclaims', pvc('a'));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    const uid = created.metadata.uid ?? '';
    expect(inf.store.byIndex('uid', uid).map(nameOf)).toEqual(['a']);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    const later = kit.store.create('persistentvolumeclaims', pvc('b'));
    await vi.waitFor(() => expect(inf.store.byIndex('uid', later.metadata.uid ?? '').map(nameOf)).toEqual(['b']), WAIT);
  });

  it('gives listed and watched objects the same typed shape', async () => {
    const kit = await kitWith();
    kit.store.create('persistentvolumeclaims', pvc('listed'));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumeclaims', pvc('watched'));
    await vi.waitFor(() => expect(inf.store.get('default/watched')).toBeDefined(), WAIT);
    for (const key of ['default/listed', 'default/watched']) {
      const o = inf.store.get(key);
      expect(o?.apiVersion).toBe('v1');
      expect(o?.kind).toBe('PersistentVolumeClaim');
      expect(o?.metadata?.creationTimestamp).toBeInstanceOf(Date);
      expect(o?.spec?.resources?.requests?.storage).toBe('1Gi');
    }
  });

  it('resumes after dropped watches without losing or duplicating events', async () => {
    const kit = await kitWith();
    const {
      informer: inf,
      rec,
      start,
    } = informer(kit, 'PersistentVolumeClaim', { backoff: new Backoff({ initialMs: 150, maxMs: 150, jitter: 0 }) });
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumeclaims', pvc('a'));
    await vi.waitFor(() => expect(rec.log).toEqual(['add a']), WAIT);
    kit.server.dropWatches();
    kit.store.create('persistentvolumeclaims', pvc('b'));
    label(kit, 'a', '1');
    await vi.waitFor(() => expect(rec.restarts.some((r) => r.reason === 'dropped')).toBe(true), WAIT);
    kit.server.dropWatches();
    kit.store.delete('persistentvolumeclaims', 'default', 'a');
    await vi.waitFor(() => expect(rec.log).toEqual(['add a', 'add b', 'update a', 'delete a']), WAIT);
    expect(kit.server.requestCounts()['list persistentvolumeclaims']).toBe(1);
    expect(rec.restarts.every((r) => !r.relist)).toBe(true);
    expect(cacheView(inf)).toEqual(serverView(kit, 'persistentvolumeclaims'));
  });

  it('relists after 410 Expired and matches the server exactly, including an object deleted meanwhile', async () => {
    const kit = await kitWith();
    for (const n of ['keep', 'change', 'remove']) kit.store.create('persistentvolumeclaims', pvc(n));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    rec.log.length = 0;
    kit.server.expireWatches();
    // These happen after the watch was cut, so only the relist can reveal them.
    kit.store.delete('persistentvolumeclaims', 'default', 'remove');
    label(kit, 'change', '1');
    kit.store.create('persistentvolumeclaims', pvc('new'));
    await vi.waitFor(() => expect(kit.server.requestCounts()['list persistentvolumeclaims']).toBe(2), WAIT);
    await vi.waitFor(() => expect(cacheView(inf)).toEqual(serverView(kit, 'persistentvolumeclaims')), WAIT);
    expect(inf.store.get('default/remove')).toBeUndefined();
    expect(rec.log.sort()).toEqual(['add new', 'delete remove', 'update change']);
    expect(rec.restarts[0]).toMatchObject({ reason: 'expired', relist: true });
  });

  it('syncs although half of the list calls fail', async () => {
    const kit = await kitWith();
    for (let i = 0; i < 5; i++) kit.store.create('persistentvolumeclaims', pvc(`c${i}`));
    kit.faults.add({ verb: 'list', action: { type: 'error', code: 500 }, rate: 0.5 });
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim', { pageSize: 2 });
    start();
    await vi.waitFor(() => expect(inf.hasSynced()).toBe(true), WAIT);
    expect(cacheView(inf)).toEqual(serverView(kit, 'persistentvolumeclaims'));
    expect(rec.log.filter((l) => l.startsWith('add'))).toHaveLength(5);
    expect(rec.restarts.every((r) => r.reason === 'list-failed' && r.statusCode === 500)).toBe(true);
  });

  it('advances its resourceVersion on bookmarks', async () => {
    const kit = await kitWith({ http: { bookmarkIntervalMs: 50 } });
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    const listed = inf.resourceVersion;
    kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'unrelated' } });
    await vi.waitFor(() => expect(inf.resourceVersion).toBe(String(kit.store.resourceVersion)), WAIT);
    expect(inf.resourceVersion).not.toBe(listed);
    expect(rec.log).toEqual([]);
  });

  it('survives an API server restart', async () => {
    const kit = await kitWith();
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    await kit.server.restart();
    kit.store.create('persistentvolumeclaims', pvc('after-restart'));
    await vi.waitFor(() => expect(rec.log).toEqual(['add after-restart']), WAIT);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
  });

  it('stops everything on abort and leaves no open watch', async () => {
    const kit = await kitWith();
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim', { resyncPeriodMs: 20 });
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    rec.controller.abort();
    await rec.done;
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(0), WAIT);
    kit.store.create('persistentvolumeclaims', pvc('too-late'));
    const count = rec.log.length;
    await expect(inf.waitForSync(AbortSignal.abort())).resolves.toBeUndefined();
    expect(inf.store.get('default/too-late')).toBeUndefined();
    expect(rec.log).toHaveLength(count);
    await expect(inf.run(new AbortController().signal)).rejects.toThrow(/only once/);
  });

  it('rejects waitForSync when its signal aborts first', async () => {
    const kit = await kitWith();
    kit.faults.add({ verb: 'list', action: { type: 'error', code: 500 } });
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    const waiting = new AbortController();
    const pending = inf.waitForSync(waiting.signal);
    waiting.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    expect(inf.hasSynced()).toBe(false);
    expect(rec.log).toEqual([]);
  });

  it('re-delivers update(obj, obj) for every cached object on resync', async () => {
    const kit = await kitWith();
    kit.store.create('persistentvolumeclaims', pvc('a'));
    kit.store.create('persistentvolumeclaims', pvc('b'));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim', { resyncPeriodMs: 30 });
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => {
      expect(rec.log.filter((l) => l === 'resync a').length).toBeGreaterThanOrEqual(2);
      expect(rec.log.filter((l) => l === 'resync b').length).toBeGreaterThanOrEqual(2);
    }, WAIT);
  });

  it('does not resync when resyncPeriodMs is 0 and does not re-announce unchanged objects on relist', async () => {
    const kit = await kitWith();
    kit.store.create('persistentvolumeclaims', pvc('a'));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.server.expireWatches();
    await vi.waitFor(() => expect(kit.server.requestCounts()['list persistentvolumeclaims']).toBe(2), WAIT);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    expect(rec.log).toEqual(['add a']);
  });

  it('isolates handler exceptions', async () => {
    const kit = await kitWith();
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolumeClaim');
    inf.addEventHandler({
      add: () => {
        throw new Error('handler bug');
      },
    });
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumeclaims', pvc('a'));
    kit.store.create('persistentvolumeclaims', pvc('b'));
    await vi.waitFor(() => expect(rec.log).toEqual(['add a', 'add b']), WAIT);
    expect(rec.restarts).toEqual([]);
  });
});

describe('informerFor (PersistentVolumes and StorageClasses)', () => {
  it('follows PersistentVolumes', async () => {
    const kit = await kitWith();
    const pv = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: `/tmp/${name}` },
        persistentVolumeReclaimPolicy: 'Delete',
      },
    });
    kit.store.create('persistentvolumes', pv('pv-1'));
    const { informer: inf, rec, start } = informer(kit, 'PersistentVolume');
    start();
    await inf.waitForSync(rec.controller.signal);
    expect(inf.store.keys()).toEqual(['pv-1']);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumes', pv('pv-2'));
    kit.store.delete('persistentvolumes', undefined, 'pv-1');
    await vi.waitFor(() => expect(rec.log).toEqual(['add pv-1', 'add pv-2', 'delete pv-1']), WAIT);
    expect(inf.store.get('pv-2')?.spec?.hostPath?.path).toBe('/tmp/pv-2');
  });

  it('follows StorageClasses', async () => {
    const kit = await kitWith();
    const sc = (name: string): KubeObject => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name },
      provisioner: 'example.com/test',
    });
    kit.store.create('storage.k8s.io/storageclasses', sc('fast'));
    const { informer: inf, rec, start } = informer(kit, 'StorageClass');
    start();
    await inf.waitForSync(rec.controller.signal);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('storage.k8s.io/storageclasses', sc('slow'));
    await vi.waitFor(() => expect(rec.log).toEqual(['add fast', 'add slow']), WAIT);
    expect(inf.store.get('slow')?.provisioner).toBe('example.com/test');
    expect(inf.store.get('slow')?.kind).toBe('StorageClass');
    expect(inf.store.get('fast')?.apiVersion).toBe('storage.k8s.io/v1');
  });
});
