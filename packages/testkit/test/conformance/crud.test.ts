import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { apiError } from '../helpers.js';

let kit: Testkit;
let core: CoreV1Api;
let storage: StorageV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
  storage = kit.kubeConfig.makeApiClient(StorageV1Api);
});
afterAll(() => kit.stop());

const claim = (name: string): V1PersistentVolumeClaim => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

describe('create and get', () => {
  it('fills in uid, creationTimestamp and a resourceVersion that grows with every write', async () => {
    const a = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'a' }, data: { k: 'v' } },
    });
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
    expect(a.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(b.metadata?.resourceVersion)).toBeGreaterThan(Number(a.metadata?.resourceVersion));
    const got = await core.readNamespacedConfigMap({ name: 'a', namespace: 'default' });
    expect(got.data).toEqual({ k: 'v' });
    expect(got.metadata?.uid).toBe(a.metadata?.uid);
  });

  it('generates a name from generateName with a five-character suffix', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { generateName: 'gen-' } },
    });
    expect(created.metadata?.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('answers 409 AlreadyExists with the Status the real server sends', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('dup') });
    const status = await apiError(
      core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('dup') }),
    );
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'persistentvolumeclaims "dup" already exists',
      reason: 'AlreadyExists',
      details: { name: 'dup', kind: 'persistentvolumeclaims' },
      code: 409,
    });
  });

  it('answers 404 NotFound naming the group for non-core resources', async () => {
    const status = await apiError(storage.readStorageClass({ name: 'missing' }));
    expect(status).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'storageclasses.storage.k8s.io "missing" not found',
      details: { name: 'missing', group: 'storage.k8s.io', kind: 'storageclasses' },
    });
  });

  it('refuses objects in a namespace that does not exist', async () => {
    const status = await apiError(
      core.createNamespacedConfigMap({ namespace: 'nope', body: { metadata: { name: 'x' } } }),
    );
    expect(status).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "nope" not found' });
  });
});

describe('defaulting', () => {
  it('defaults the storage fields as the API server does', async () => {
    const pvc = await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('defaults') });
    expect(pvc.spec?.volumeMode).toBe('Filesystem');
    expect(pvc.status?.phase).toBe('Pending');
    const sc = await storage.createStorageClass({
      body: { metadata: { name: 'sc-defaults' }, provisioner: 'example.com/p' },
    });
    expect(sc.reclaimPolicy).toBe('Delete');
    expect(sc.volumeBindingMode).toBe('Immediate');
    const pv = await core.createPersistentVolume({
      body: {
        metadata: { name: 'pv-defaults' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
      },
    });
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.spec?.volumeMode).toBe('Filesystem');
    expect(pv.status?.phase).toBe('Pending');
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'pod-defaults' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    });
    expect(pod.spec?.restartPolicy).toBe('Always');
    expect(pod.status?.phase).toBe('Pending');
  });
});

describe('validation', () => {
  it('answers 422 Invalid for a bad name, with one cause per field', async () => {
    const status = await apiError(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Bad_Name' } } }),
    );
    expect(status.code).toBe(422);
    expect(status.reason).toBe('Invalid');
    expect(status.message).toMatch(
      /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(status.details).toMatchObject({
      name: 'Bad_Name',
      kind: 'ConfigMap',
      causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }],
    });
  });

  it('answers 422 Invalid for a claim without access modes', async () => {
    const status = await apiError(
      core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: { metadata: { name: 'no-modes' }, spec: { resources: { requests: { storage: '1Gi' } } } },
      }),
    );
    expect(status.code).toBe(422);
    expect(status.message).toContain('spec.accessModes: Required value: at least 1 access mode is required');
  });

  it('refuses a change to an immutable claim field', async () => {
    const pvc = await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('immutable') });
    pvc.spec = { ...pvc.spec, accessModes: ['ReadWriteMany'] };
    const status = await apiError(
      core.replaceNamespacedPersistentVolumeClaim({ name: 'immutable', namespace: 'default', body: pvc }),
    );
    expect(status.code).toBe(422);
    expect(status.details?.causes?.[0]?.field).toBe('spec');
    expect(status.message).toContain('spec is immutable after creation');
  });
});

describe('update', () => {
  it('answers 409 Conflict for a stale resourceVersion', async () => {
    const first = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cas' }, data: { n: '1' } },
    });
    await core.replaceNamespacedConfigMap({ name: 'cas', namespace: 'default', body: { ...first, data: { n: '2' } } });
    const status = await apiError(
      core.replaceNamespacedConfigMap({ name: 'cas', namespace: 'default', body: { ...first, data: { n: '3' } } }),
    );
    expect(status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "cas": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'cas', kind: 'configmaps' },
    });
    expect((await core.readNamespacedConfigMap({ name: 'cas', namespace: 'default' })).data).toEqual({ n: '2' });
  });

  it('keeps status out of main-resource updates and spec out of status updates', async () => {
    const pvc = await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('status-split') });
    const withStatus = { ...pvc, status: { phase: 'Bound' }, metadata: { ...pvc.metadata, labels: { a: 'b' } } };
    const afterMain = await core.replaceNamespacedPersistentVolumeClaim({
      name: 'status-split',
      namespace: 'default',
      body: withStatus,
    });
    expect(afterMain.metadata?.labels).toEqual({ a: 'b' });
    expect(afterMain.status?.phase).toBe('Pending');
    const viaStatus = {
      ...afterMain,
      status: { phase: 'Bound' },
      metadata: { ...afterMain.metadata, labels: { a: 'changed' } },
    };
    const afterStatus = await core.replaceNamespacedPersistentVolumeClaimStatus({
      name: 'status-split',
      namespace: 'default',
      body: viaStatus,
    });
    expect(afterStatus.status?.phase).toBe('Bound');
    expect(afterStatus.metadata?.labels).toEqual({ a: 'b' });
  });

  it('does not bump the resourceVersion for an update that changes nothing', async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'noop' }, data: { a: '1' } },
    });
    const again = await core.replaceNamespacedConfigMap({ name: 'noop', namespace: 'default', body: cm });
    expect(again.metadata?.resourceVersion).toBe(cm.metadata?.resourceVersion);
  });
});
