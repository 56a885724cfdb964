import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CoreV1Api, PatchStrategy, setHeaderOptions, StorageV1Api } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { WAIT } from '../../src/vitest.js';

let kit: Testkit;
let core: CoreV1Api;
let storage: StorageV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [{ name: 'node-a' }] });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
  storage = kit.kubeConfig.makeApiClient(StorageV1Api);
  await storage.createStorageClass({
    body: { metadata: { name: 'wffc' }, provisioner: 'example.com/sim', volumeBindingMode: 'WaitForFirstConsumer' },
  });
});
afterAll(() => kit.stop());

const pvc = (name: string, storageClassName: string) => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } } },
});

describe('simulated control loops through the API', () => {
  it('annotates a WaitForFirstConsumer claim with the selected node once a pod uses it', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc('wait', 'wffc') });
    const before = await core.readNamespacedPersistentVolumeClaim({ name: 'wait', namespace: 'default' });
    expect(before.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'consumer' },
        spec: {
          containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'true'] }],
          volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'wait' } }],
          restartPolicy: 'Never',
        },
      },
    });
    await vi.waitFor(async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'wait', namespace: 'default' });
      expect(c.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe('node-a');
      expect(c.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe('example.com/sim');
    }, WAIT);
  });

  it('binds a PV whose claimRef names the claim, and releases it when the claim goes', async () => {
    await storage.createStorageClass({ body: { metadata: { name: 'now' }, provisioner: 'example.com/sim' } });
    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: pvc('bind-me', 'now'),
    });
    await core.createPersistentVolume({
      body: {
        metadata: { name: 'pv-bind-me' },
        spec: {
          capacity: { storage: '2Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'now',
          persistentVolumeReclaimPolicy: 'Delete',
          hostPath: { path: '/data/pv-bind-me' },
          claimRef: { namespace: 'default', name: 'bind-me', uid: claim.metadata?.uid ?? '' },
        },
      },
    });
    await vi.waitFor(async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'bind-me', namespace: 'default' });
      expect(c.spec?.volumeName).toBe('pv-bind-me');
      expect(c.status?.phase).toBe('Bound');
      expect(c.status?.capacity?.storage).toBe('2Gi');
      expect((await core.readPersistentVolume({ name: 'pv-bind-me' })).status?.phase).toBe('Bound');
    }, WAIT);
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'bind-me', namespace: 'default' });
    await vi.waitFor(async () => {
      expect((await core.readPersistentVolume({ name: 'pv-bind-me' })).status?.phase).toBe('Released');
    }, WAIT);
  });

  it("leaves a grown claim to an external resizer, as kube-controller-manager's expand controller does", async () => {
    await storage.createStorageClass({
      body: { metadata: { name: 'grows' }, provisioner: 'example.com/sim', allowVolumeExpansion: true },
    });
    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: pvc('grow', 'grows'),
    });
    await core.createPersistentVolume({
      body: {
        metadata: { name: 'pv-grow' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'grows',
          hostPath: { path: '/data/pv-grow' },
          claimRef: { namespace: 'default', name: 'grow', uid: claim.metadata?.uid ?? '' },
        },
      },
    });
    await vi.waitFor(async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'grow', namespace: 'default' });
      expect(c.status?.phase).toBe('Bound');
    }, WAIT);
    await core.patchNamespacedPersistentVolumeClaim(
      { name: 'grow', namespace: 'default', body: { spec: { resources: { requests: { storage: '3Gi' } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await vi.waitFor(async () => {
      const events = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.name=grow,reason=ExternalExpanding',
      });
      expect(events.items.map((e) => [e.type, e.source?.component, e.message])).toEqual([
        ['Normal', 'volume_expand', 'waiting for an external controller to expand this PVC'],
      ]);
    }, WAIT);
    const c = await core.readNamespacedPersistentVolumeClaim({ name: 'grow', namespace: 'default' });
    expect(c.status?.capacity?.storage).toBe('1Gi');
    expect((await core.readPersistentVolume({ name: 'pv-grow' })).spec?.capacity?.storage).toBe('1Gi');
  });

  it('runs a pod that creates a directory on a hostPath volume under the node root', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'mkdir' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'busybox',
              command: ['mkdir', '-p', '/host/made/by/pod'],
              volumeMounts: [{ name: 'h', mountPath: '/host' }],
            },
          ],
          volumes: [{ name: 'h', hostPath: { path: '/var/lib/sim', type: 'DirectoryOrCreate' } }],
        },
      },
    });
    await vi.waitFor(async () => {
      const p = await core.readNamespacedPod({ name: 'mkdir', namespace: 'default' });
      expect(p.status?.phase).toBe('Succeeded');
      expect(p.spec?.nodeName).toBe('node-a');
    }, WAIT);
    const root = kit.nodes[0]?.root ?? '';
    expect(existsSync(join(root, 'var/lib/sim/made/by/pod'))).toBe(true);
  });

  it('serves the logs of a pod', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'talker' },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo one; echo two'] }],
        },
      },
    });
    await vi.waitFor(async () => {
      expect((await core.readNamespacedPod({ name: 'talker', namespace: 'default' })).status?.phase).toBe('Succeeded');
    }, WAIT);
    expect(await core.readNamespacedPodLog({ name: 'talker', namespace: 'default' })).toBe('one\ntwo\n');
    expect(await core.readNamespacedPodLog({ name: 'talker', namespace: 'default', tailLines: 1 })).toBe('two\n');
  });
});
