import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { describeEvents, raw, recordWatch } from '../helpers.js';
import { WAIT } from '../../src/vitest.js';

let kit: Testkit;
let core: CoreV1Api;

beforeAll(async () => {
  kit = await startApiServer({
    nodes: [],
    binder: false,
    scheduler: false,
    kubelet: false,
    http: { bookmarkIntervalMs: 100 },
  });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
});
afterAll(() => kit.stop());

const ns = async (name: string): Promise<void> => {
  await core.createNamespace({ body: { metadata: { name } } });
};

describe('watch', () => {
  it('sends ADDED for existing objects, then ADDED, MODIFIED and DELETED as they happen', async () => {
    await ns('w1');
    await core.createNamespacedConfigMap({ namespace: 'w1', body: { metadata: { name: 'before' } } });
    const w = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w1/configmaps');
    await vi.waitFor(() => expect(w.events).toHaveLength(1), WAIT);
    await core.createNamespacedConfigMap({ namespace: 'w1', body: { metadata: { name: 'x' } } });
    await core.patchNamespacedConfigMap(
      { name: 'x', namespace: 'w1', body: { data: { a: '1' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ name: 'x', namespace: 'w1' });
    await vi.waitFor(
      () => expect(describeEvents(w.events)).toEqual(['ADDED before', 'ADDED x', 'MODIFIED x', 'DELETED x']),
      WAIT,
    );
    const rvs = w.events.slice(1).map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(w.events[1]?.object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    w.abort();
  });

  it('resumes after a dropped connection from the last resourceVersion without losing or repeating events', async () => {
    await ns('w2');
    const first = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w2/configmaps', {
      resourceVersion: String(kit.store.resourceVersion),
    });
    await core.createNamespacedConfigMap({ namespace: 'w2', body: { metadata: { name: 'a' } } });
    await vi.waitFor(() => expect(first.events).toHaveLength(1), WAIT);
    expect(kit.server.dropWatches('configmaps')).toBeGreaterThan(0);
    expect(await first.done).toBeTruthy();
    // Written while no watch is open.
    await core.createNamespacedConfigMap({ namespace: 'w2', body: { metadata: { name: 'b' } } });
    await core.deleteNamespacedConfigMap({ name: 'a', namespace: 'w2' });
    const last = first.events.at(-1)?.object.metadata?.resourceVersion ?? '';
    const second = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w2/configmaps', { resourceVersion: last });
    await core.createNamespacedConfigMap({ namespace: 'w2', body: { metadata: { name: 'c' } } });
    await vi.waitFor(() => expect(describeEvents(second.events)).toEqual(['ADDED b', 'DELETED a', 'ADDED c']), WAIT);
    second.abort();
  });

  it('answers a resourceVersion older than the history window with ERROR 410 Expired, and a relist recovers', async () => {
    await ns('w3');
    const old = String(kit.store.resourceVersion);
    await core.createNamespacedConfigMap({ namespace: 'w3', body: { metadata: { name: 'kept' } } });
    kit.store.compact();
    const w = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w3/configmaps', { resourceVersion: old });
    await w.done;
    expect(w.events).toHaveLength(1);
    expect(w.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(String(w.events[0]?.object.message)).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    const relist = await core.listNamespacedConfigMap({ namespace: 'w3' });
    expect(relist.items.map((i) => i.metadata?.name)).toEqual(['kept']);
    const again = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w3/configmaps', {
      resourceVersion: relist.metadata?.resourceVersion ?? '',
    });
    await core.createNamespacedConfigMap({ namespace: 'w3', body: { metadata: { name: 'new' } } });
    await vi.waitFor(() => expect(describeEvents(again.events)).toEqual(['ADDED new']), WAIT);
    again.abort();
  });

  it('ends open watches with 410 when the server expires them', async () => {
    const w = await recordWatch(kit.kubeConfig, '/api/v1/configmaps', {
      resourceVersion: String(kit.store.resourceVersion),
    });
    await vi.waitFor(() => expect(kit.server.openWatches).toBeGreaterThan(0), WAIT);
    kit.server.expireWatches('configmaps');
    await w.done;
    expect(w.events.at(-1)).toMatchObject({ type: 'ERROR', object: { code: 410 } });
  });

  it('sends bookmarks with the current resourceVersion when asked', async () => {
    const w = await recordWatch(kit.kubeConfig, '/api/v1/secrets', {
      allowWatchBookmarks: true,
      resourceVersion: String(kit.store.resourceVersion),
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'bm-' } } });
    await vi.waitFor(() => expect(w.events.some((e) => e.type === 'BOOKMARK')).toBe(true), WAIT);
    const bookmark = w.events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).toMatchObject({ kind: 'Secret', apiVersion: 'v1' });
    expect(Number(bookmark?.object.metadata?.resourceVersion)).toBeGreaterThan(0);
    w.abort();
  });

  it('ends the stream after timeoutSeconds', async () => {
    const w = await recordWatch(kit.kubeConfig, '/api/v1/secrets', { timeoutSeconds: 1 });
    expect(await w.done).toBeNull();
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    await ns('w4');
    const w = await recordWatch(kit.kubeConfig, '/api/v1/namespaces/w4/configmaps', { labelSelector: 'on=yes' });
    await core.createNamespacedConfigMap({
      namespace: 'w4',
      body: { metadata: { name: 'flip', labels: { on: 'no' } } },
    });
    const label = (on: string) =>
      core.patchNamespacedConfigMap(
        { name: 'flip', namespace: 'w4', body: { metadata: { labels: { on } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await label('yes');
    await label('yes-still');
    await label('yes');
    await core.patchNamespacedConfigMap(
      { name: 'flip', namespace: 'w4', body: { data: { k: 'v' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await vi.waitFor(
      () => expect(describeEvents(w.events)).toEqual(['ADDED flip', 'DELETED flip', 'ADDED flip', 'MODIFIED flip']),
      WAIT,
    );
    w.abort();
  });

  it('streams newline-delimited JSON events over plain HTTP', async () => {
    await ns('w5');
    await core.createNamespacedSecret({ namespace: 'w5', body: { metadata: { name: 's' } } });
    const res = await raw(kit, 'GET', '/api/v1/namespaces/w5/secrets?watch=1&timeoutSeconds=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const lines = res.text.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      type: 'ADDED',
      object: { kind: 'Secret', metadata: { name: 's' } },
    });
  });
});
