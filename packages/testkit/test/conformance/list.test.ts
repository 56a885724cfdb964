import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { apiError, raw } from '../helpers.js';

let kit: Testkit;
let core: CoreV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'other' } } });
  const items: [string, string, Record<string, string>][] = [
    ['default', 'web-1', { app: 'web', tier: 'front' }],
    ['default', 'web-2', { app: 'web', tier: 'back' }],
    ['default', 'db-1', { app: 'db' }],
    ['other', 'web-3', { app: 'web', tier: 'front' }],
    ['other', 'plain', {}],
  ];
  for (const [namespace, name, labels] of items) {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels } } });
  }
});
afterAll(() => kit.stop());

const names = (list: { items: { metadata?: { name?: string } }[] }): string[] =>
  list.items.map((i) => i.metadata?.name ?? '');

describe('list', () => {
  it('lists one namespace or all, in namespace then name order', async () => {
    expect(names(await core.listNamespacedConfigMap({ namespace: 'default' }))).toEqual(['db-1', 'web-1', 'web-2']);
    expect(names(await core.listConfigMapForAllNamespaces())).toEqual(['db-1', 'web-1', 'web-2', 'plain', 'web-3']);
  });

  it('filters by equality and set-based label selectors', async () => {
    const sel = async (labelSelector: string): Promise<string[]> =>
      names(await core.listConfigMapForAllNamespaces({ labelSelector }));
    expect(await sel('app=web')).toEqual(['web-1', 'web-2', 'web-3']);
    expect(await sel('app==web,tier!=back')).toEqual(['web-1', 'web-3']);
    expect(await sel('tier in (front,back)')).toEqual(['web-1', 'web-2', 'web-3']);
    expect(await sel('app notin (web)')).toEqual(['db-1', 'plain']);
    expect(await sel('tier')).toEqual(['web-1', 'web-2', 'web-3']);
    expect(await sel('!tier')).toEqual(['db-1', 'plain']);
  });

  it('filters by field selectors and refuses unsupported fields', async () => {
    expect(names(await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=other' }))).toEqual([
      'plain',
      'web-3',
    ]);
    expect(
      names(
        await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name!=plain,metadata.namespace=other' }),
      ),
    ).toEqual(['web-3']);
    const status = await apiError(core.listConfigMapForAllNamespaces({ fieldSelector: 'data.k=v' }));
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(status.message).toContain('data.k');
  });

  it('filters pods by spec.nodeName and status.phase', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p1' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } },
    });
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    expect(names(await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=n1' }))).toEqual([
      'p1',
    ]);
    expect(names(await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=' }))).toEqual([
      'p2',
    ]);
    expect(
      names(await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'status.phase=Pending' })),
    ).toEqual(['p1', 'p2']);
  });

  it('pages with limit and continue, consistently at the first page resourceVersion', async () => {
    const first = await core.listConfigMapForAllNamespaces({ limit: 2 });
    expect(names(first)).toEqual(['db-1', 'web-1']);
    expect(first.metadata?.remainingItemCount).toBe(3);
    const token = first.metadata?._continue;
    expect(token).toBeTruthy();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'zz-late' } } });
    await core.deleteNamespacedConfigMap({ name: 'plain', namespace: 'other' });
    const second = await core.listConfigMapForAllNamespaces({ limit: 2, _continue: token ?? '' });
    expect(names(second)).toEqual(['web-2', 'plain']);
    const third = await core.listConfigMapForAllNamespaces({ limit: 2, _continue: second.metadata?._continue ?? '' });
    expect(names(third)).toEqual(['web-3']);
    expect(third.metadata?._continue).toBeUndefined();
    expect(third.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it('serves resourceVersion=0 whole, ignoring limit, as the watch cache of kube-apiserver v1.32 does', async () => {
    const all = await core.listConfigMapForAllNamespaces();
    expect(all.items.length).toBeGreaterThan(2);
    const cached = await core.listConfigMapForAllNamespaces({ resourceVersion: '0', limit: 2 });
    expect(names(cached)).toEqual(names(all));
    expect(cached.metadata?._continue).toBeUndefined();
    expect(cached.metadata?.remainingItemCount).toBeUndefined();
  });

  it('answers 410 Expired for a continue token older than the history window', async () => {
    const first = await core.listConfigMapForAllNamespaces({ limit: 1 });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'after-' } } });
    kit.store.compact();
    const status = await apiError(
      core.listConfigMapForAllNamespaces({ limit: 1, _continue: first.metadata?._continue ?? '' }),
    );
    expect(status).toMatchObject({ code: 410, reason: 'Expired' });
    expect(status.message).toMatch(/^The provided continue parameter is too old/);
  });

  it('serves an exact resourceVersion from history and answers 504 for a future one', async () => {
    const before = await core.listNamespacedConfigMap({ namespace: 'default' });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'later' } } });
    const rv = before.metadata?.resourceVersion ?? '';
    const exact = await core.listNamespacedConfigMap({
      namespace: 'default',
      resourceVersion: rv,
      resourceVersionMatch: 'Exact',
    });
    expect(names(exact)).toEqual(names(before));
    expect(exact.metadata?.resourceVersion).toBe(rv);
    const future = await raw(kit, 'GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${Number(rv) + 1000}`);
    expect(future.status).toBe(504);
    expect(future.json()).toMatchObject({
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }] },
    });
  });
});
