import { Agent as HttpAgent } from 'node:http';
import { ApiException, type KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { Agent as UndiciAgent } from 'undici';
import { closeSharedConnections } from '../../src/client/agent.js';
import { apiStatus, isAlreadyExists } from '../../src/client/api-errors.js';
import { hotPathApi } from '../../src/client/hot-path.js';
import { RestClient } from '../../src/client/rest.js';
import { startCountingProxy, type CountingProxy } from './tcp-proxy.js';

const volume = (name: string): V1PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
});

describe('RestClient against the testkit', () => {
  let kit: Testkit;
  let kc: KubeConfig;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    kc = kubeConfigFor(kit.url);
  });

  afterEach(async () => {
    await closeSharedConnections(kc);
    await kit.stop();
  });

  it('sends JSON and reads JSON through the shared connection pool, with query parameters', async () => {
    const rest = new RestClient(kc);
    await rest.json({ method: 'POST', path: '/api/v1/persistentvolumes', body: volume('a') });
    await rest.json({ method: 'POST', path: '/api/v1/persistentvolumes', body: volume('b') });
    const page = await rest.json<{ items: V1PersistentVolume[]; metadata: { continue?: string } }>({
      method: 'GET',
      path: '/api/v1/persistentvolumes',
      query: { limit: 1, labelSelector: undefined },
    });
    expect(page.items.map((v) => v.metadata?.name)).toEqual(['a']);
    expect(page.metadata.continue).toBeTruthy();
    expect(kit.server.requestCounts()['create persistentvolumes']).toBe(2);
  });

  it("rejects with client-node's ApiException, whose body is the Status text", async () => {
    const api = hotPathApi(kc);
    await api.createPersistentVolume({ body: volume('a') });
    const err: unknown = await api.createPersistentVolume({ body: volume('a') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect(isAlreadyExists(err)).toBe(true);
    expect(apiStatus(err)).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    const missing: unknown = await new RestClient(kc)
      .json({ method: 'GET', path: '/api/v1/persistentvolumes/nope' })
      .catch((e: unknown) => e);
    expect(apiStatus(missing)).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('lists item by item, in order, and resolves with the rest of the list; errors as json', async () => {
    const rest = new RestClient(kc);
    for (const name of ['a', 'b', 'c'])
      await rest.json({ method: 'POST', path: '/api/v1/persistentvolumes', body: volume(name) });
    const names: unknown[] = [];
    const list = await rest.list<{
      kind?: string;
      metadata?: { resourceVersion?: string; continue?: string };
      items: unknown[];
    }>({ path: '/api/v1/persistentvolumes', query: { limit: 2 } }, (item) =>
      names.push((item as V1PersistentVolume).metadata?.name),
    );
    expect(names).toEqual(['a', 'b']);
    expect(list).toMatchObject({ kind: 'PersistentVolumeList', items: [] });
    expect(list.metadata?.resourceVersion).toBeTruthy();
    expect(list.metadata?.continue).toBeTruthy();
    const missing: unknown = await rest
      .list({ path: '/api/v1/namespaces/default/persistentvolumeclaims/nope' }, () => undefined)
      .catch((e: unknown) => e);
    expect(apiStatus(missing)).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('decodes what the hot-path calls return into the model shape', async () => {
    const api = hotPathApi(kc);
    const pv = await api.createPersistentVolume({ body: volume('a') });
    expect(pv.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const event = await api.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'e1', namespace: 'default' },
        involvedObject: { kind: 'PersistentVolume', name: 'a' },
        reason: 'Test',
        message: 'm',
        count: 1,
        firstTimestamp: new Date('2026-01-01T00:00:00Z'),
      },
    });
    expect(event.firstTimestamp).toEqual(new Date('2026-01-01T00:00:00Z'));
    const patched = await api.patchNamespacedEvent({ name: 'e1', namespace: 'default', body: { count: 2 } });
    expect(patched.count).toBe(2);
  });

  it("watches: events in order, then done once with the abort's reason when aborted", async () => {
    const rest = new RestClient(kc);
    const seen: string[] = [];
    const done = vi.fn();
    const controller = await rest.watch(
      '/api/v1/persistentvolumes',
      {},
      (type, object) => seen.push(`${type} ${(object as V1PersistentVolume).metadata?.name ?? ''}`),
      done,
    );
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    kit.store.create('persistentvolumes', { ...volume('a'), metadata: { name: 'a' } });
    kit.store.delete('persistentvolumes', '', 'a');
    await vi.waitFor(() => expect(seen).toEqual(['ADDED a', 'DELETED a']), WAIT);
    controller.abort(new Error('stopped by its owner'));
    await vi.waitFor(() => expect(done).toHaveBeenCalledTimes(1), WAIT);
    // The abort's reason, not the "aborted" of the connection's end.
    expect((done.mock.calls[0]?.[0] as Error).message).toBe('stopped by its owner');
  });

  // Real time: the limit is the watch's own timer. Each event is sent once the one before arrived, so the watch is
  // never silent for longer than a round trip to the in-process server, while the events go on for 2.5 limits.
  it('keeps a watch that gets events past its inactivity limit, and ends it with a TimeoutError once it goes silent', async () => {
    const limitMs = 2000;
    const rest = new RestClient(kc, { watchInactivityMs: limitMs });
    let events = 0;
    const done = vi.fn();
    await rest.watch('/api/v1/persistentvolumes', {}, () => (events += 1), done);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    const start = performance.now();
    for (let i = 0; performance.now() - start < 2.5 * limitMs; i++) {
      kit.store.create('persistentvolumes', { ...volume(`v${i}`), metadata: { name: `v${i}` } });
      await vi.waitFor(() => expect(events).toBe(i + 1), WAIT);
    }
    expect(done).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(done).toHaveBeenCalledTimes(1), WAIT);
    expect((done.mock.calls[0]?.[0] as Error).name).toBe('TimeoutError');
  });

  it('sends through the Node.js agent given as agent', async () => {
    const agent = new HttpAgent({ keepAlive: true });
    const rest = new RestClient(kc, { agent });
    await rest.json({ method: 'POST', path: '/api/v1/persistentvolumes', body: volume('a') });
    const page = await rest.json<{ items: V1PersistentVolume[] }>({ method: 'GET', path: '/api/v1/persistentvolumes' });
    expect(page.items.map((v) => v.metadata?.name)).toEqual(['a']);
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
    agent.destroy();
  });

  it('reports a refused watch with its status code', async () => {
    kit.faults.add({ verb: 'watch', resource: 'persistentvolumes', action: { type: 'error', code: 403 } });
    const done = vi.fn();
    await new RestClient(kc).watch('/api/v1/persistentvolumes', {}, () => undefined, done);
    await vi.waitFor(() => expect(done).toHaveBeenCalledTimes(1), WAIT);
    expect((done.mock.calls[0]?.[0] as { statusCode?: number }).statusCode).toBe(403);
  });
});

describe('RestClient and a server that takes a request and never answers', () => {
  let kit: Testkit;
  let proxy: CountingProxy;
  let kc: KubeConfig;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    proxy = await startCountingProxy(kit.url);
    kc = kubeConfigFor(proxy.url);
  });

  afterEach(async () => {
    await proxy.close();
    await kit.stop();
  });

  it.each([
    ['Node.js agent (the default)', undefined],
    ['undici dispatcher', 'undici'],
  ] as const)(
    'fails the request with a TimeoutError after requestInactivityMs, then works again (%s)',
    async (_name, pool) => {
      const agent = pool === 'undici' ? new UndiciAgent() : undefined;
      const rest = new RestClient(kc, { requestInactivityMs: 300, ...(agent === undefined ? {} : { agent }) });
      try {
        proxy.stalled = true;
        const err: unknown = await rest
          .json({ method: 'GET', path: '/api/v1/persistentvolumes' })
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'TimeoutError' });
        proxy.stalled = false;
        // The same pool, without the short limit (a busy machine may take longer than it to answer).
        const after = new RestClient(kc, agent === undefined ? {} : { agent });
        const list = await after.json<{ items: unknown[] }>({ method: 'GET', path: '/api/v1/persistentvolumes' });
        expect(list.items).toEqual([]);
      } finally {
        await agent?.close();
        if (agent === undefined) await closeSharedConnections(kc);
      }
    },
  );
  it('hands over the items of a list as they arrive, before the answer has ended', async () => {
    const rest = new RestClient(kubeConfigFor(kit.url));
    const count = 200;
    for (let i = 0; i < count; i++)
      await rest.json({ method: 'POST', path: '/api/v1/persistentvolumes', body: volume(`v${i}`) });
    const whole = await fetch(`${kit.url}/api/v1/persistentvolumes`).then((r) => r.arrayBuffer());
    const names = (JSON.parse(Buffer.from(whole).toString()) as { items: V1PersistentVolume[] }).items.map(
      (v) => v.metadata?.name,
    );
    // Half the answer passes, the rest is held back: the items in the first half are in before the answer ends.
    proxy.holdAfterBytes = Math.floor(whole.byteLength / 2);
    const seen: string[] = [];
    const abort = new AbortController();
    const listing = new RestClient(kc).list({ path: '/api/v1/persistentvolumes', signal: abort.signal }, (item) =>
      seen.push((item as V1PersistentVolume).metadata?.name ?? ''),
    );
    const ended = listing.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await vi.waitFor(() => expect(seen.length).toBeGreaterThan(count / 4), WAIT);
    expect(seen.length).toBeLessThan(count);
    expect(seen).toEqual(names.slice(0, seen.length));
    abort.abort(new Error('enough'));
    expect(await ended).toMatchObject({ message: 'enough' });
  });
});
