import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { apiError, raw } from '../helpers.js';

let kit: Testkit;
let core: CoreV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
});
afterAll(() => kit.stop());

const claim = (name: string, finalizers?: string[]) => ({
  metadata: { name, ...(finalizers ? { finalizers } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

describe('patch', () => {
  it('applies a merge patch to annotations, deleting with null', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'mp', annotations: { a: '1', b: '2' } } },
    });
    const patched = await core.patchNamespacedConfigMap(
      { name: 'mp', namespace: 'default', body: { metadata: { annotations: { a: null, c: '3' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.annotations).toEqual({ b: '2', c: '3' });
  });

  it('applies a JSON patch, and fails a test operation with 422', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'jp' }, data: { x: '1' } },
    });
    const patched = await core.patchNamespacedConfigMap(
      {
        name: 'jp',
        namespace: 'default',
        body: [
          { op: 'test', path: '/data/x', value: '1' },
          { op: 'add', path: '/data/y', value: '2' },
          { op: 'remove', path: '/data/x' },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(patched.data).toEqual({ y: '2' });
    const status = await apiError(
      core.patchNamespacedConfigMap(
        { name: 'jp', namespace: 'default', body: [{ op: 'test', path: '/data/y', value: 'nope' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ),
    );
    expect(status.code).toBe(422);
  });

  it('merges finalizers and removes one with a strategic merge patch directive', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claim('smp', ['a.example.com/one']),
    });
    const added = await core.patchNamespacedPersistentVolumeClaim(
      { name: 'smp', namespace: 'default', body: { metadata: { finalizers: ['b.example.com/two'] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    // As on a real server: without $setElementOrder, patch items go before the existing ones.
    expect(added.metadata?.finalizers).toEqual(['b.example.com/two', 'a.example.com/one']);
    const removed = await core.patchNamespacedPersistentVolumeClaim(
      {
        name: 'smp',
        namespace: 'default',
        body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example.com/one'] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(removed.metadata?.finalizers).toEqual(['b.example.com/two']);
  });

  it('patches status only through the status subresource', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('status-patch') });
    const main = await core.patchNamespacedPersistentVolumeClaim(
      { name: 'status-patch', namespace: 'default', body: { status: { phase: 'Lost' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(main.status?.phase).toBe('Pending');
    const status = await core.patchNamespacedPersistentVolumeClaimStatus(
      { name: 'status-patch', namespace: 'default', body: { status: { phase: 'Lost' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(status.status?.phase).toBe('Lost');
  });

  it('treats a resourceVersion in a merge patch as a precondition', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rv-patch' } } });
    await core.patchNamespacedConfigMap(
      { name: 'rv-patch', namespace: 'default', body: { data: { a: '1' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const status = await apiError(
      core.patchNamespacedConfigMap(
        {
          name: 'rv-patch',
          namespace: 'default',
          body: { metadata: { resourceVersion: cm.metadata?.resourceVersion }, data: { a: '2' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(status.reason).toBe('Conflict');
  });

  it('answers 415 for a patch type it does not know', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'p415' } } });
    const res = await raw(kit, 'PATCH', '/api/v1/namespaces/default/configmaps/p415', {
      body: '{}',
      contentType: 'text/plain',
    });
    expect(res.status).toBe(415);
    expect(res.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      // kube-apiserver's router answers this itself, before the patch handler could list the types it accepts.
      message: '415: Unsupported Media Type',
      reason: 'UnsupportedMediaType',
      details: {},
      code: 415,
    });
  });

  it('reads a create body by its content type: none is JSON, YAML is read, others get 415', async () => {
    const none = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: '{"metadata":{"name":"ct-none"}}',
      contentType: '',
    });
    expect(none.status).toBe(201);
    const yaml = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: 'metadata:\n  name: ct-yaml\ndata:\n  a: "1"\n',
      contentType: 'application/yaml',
    });
    expect(yaml.status).toBe(201);
    expect(yaml.json()).toMatchObject({ metadata: { name: 'ct-yaml' }, data: { a: '1' } });
    const text = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: '{"metadata":{"name":"ct-text"}}',
      contentType: 'text/plain',
    });
    expect(text.status).toBe(415);
    expect(text.json()).toMatchObject({
      reason: 'UnsupportedMediaType',
      message: expect.stringMatching(
        /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/,
      ) as unknown,
    });
  });
});

describe('delete', () => {
  it('marks an object with finalizers for deletion and removes it with the last finalizer', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claim('fin', ['example.com/a', 'example.com/b']),
    });
    const marked = await core.deleteNamespacedPersistentVolumeClaim({ name: 'fin', namespace: 'default' });
    expect(marked).toMatchObject({ metadata: { name: 'fin' } });
    const pending = await core.readNamespacedPersistentVolumeClaim({ name: 'fin', namespace: 'default' });
    expect(pending.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    const set = (finalizers: string[]) =>
      core.patchNamespacedPersistentVolumeClaim(
        { name: 'fin', namespace: 'default', body: { metadata: { finalizers } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const adding = await apiError(set(['example.com/a', 'example.com/b', 'example.com/new']));
    expect(adding.code).toBe(422);
    expect(adding.message).toContain('no new finalizers can be added if the object is being deleted');
    await set(['example.com/b']);
    expect(
      (await core.readNamespacedPersistentVolumeClaim({ name: 'fin', namespace: 'default' })).metadata?.finalizers,
    ).toEqual(['example.com/b']);
    await set([]);
    expect((await apiError(core.readNamespacedPersistentVolumeClaim({ name: 'fin', namespace: 'default' }))).code).toBe(
      404,
    );
  });

  it('checks uid and resourceVersion preconditions', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'pre' } } });
    const wrongUid = await apiError(
      core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default', body: { preconditions: { uid: 'not-it' } } }),
    );
    expect(wrongUid).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(wrongUid.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (not-it) does not match the UID in record (${cm.metadata?.uid}). The object might have been deleted and then recreated`,
    );
    const wrongRv = await apiError(
      core.deleteNamespacedConfigMap({
        name: 'pre',
        namespace: 'default',
        body: { preconditions: { resourceVersion: '1' } },
      }),
    );
    expect(wrongRv.message).toContain(
      'the ResourceVersion in the precondition (1) does not match the ResourceVersion in record',
    );
    const ok = await core.deleteNamespacedConfigMap({
      name: 'pre',
      namespace: 'default',
      body: { preconditions: { uid: cm.metadata?.uid ?? '', resourceVersion: cm.metadata?.resourceVersion ?? '' } },
    });
    expect(ok).toMatchObject({
      status: 'Success',
      details: { name: 'pre', kind: 'configmaps', uid: cm.metadata?.uid },
    });
  });

  it('deletes a collection by label selector', async () => {
    for (const [name, team] of [
      ['dc-1', 'x'],
      ['dc-2', 'x'],
      ['dc-3', 'y'],
    ] as const) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { team } } } });
    }
    await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'team=x' });
    const left = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'team' });
    expect(left.items.map((i) => i.metadata?.name)).toEqual(['dc-3']);
  });

  it('deletes a namespace with everything in it', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'in-it' } } });
    await core.deleteNamespace({ name: 'doomed' });
    expect((await apiError(core.readNamespace({ name: 'doomed' }))).code).toBe(404);
    expect((await apiError(core.readNamespacedConfigMap({ name: 'in-it', namespace: 'doomed' }))).code).toBe(404);
  });
});
