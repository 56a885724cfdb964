/**
 * The provisioner end to end on both tiers: upstream's walkthrough (examples/pod), a custom nodeAffinityKey,
 * deletion after the node is gone, and the Retain policy.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { SELECTED_NODE_ANNOTATION } from '../../src/volume/annotations.js';
import {
  BASE_PATH,
  claim,
  type Env,
  eventsFor,
  getVolume,
  helperPodsNow,
  perTest,
  settle,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

/** Deletes the walkthrough's pod and claim. */
async function deletePodAndClaim(e: Env, pod = 'volume-test', pvc = 'local-path-pvc'): Promise<void> {
  await e.core.deleteNamespacedPod({ name: pod, namespace: 'default' });
  await e.core.deleteNamespacedPersistentVolumeClaim({ name: pvc, namespace: 'default' });
}

const { env } = perTest();

describeTiers(
  'LocalPathProvisioner',
  () => {
    it('walks through examples/pod: provisions, binds, serves the pod, and cleans up', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const pvName = await waitBound(e);
      const pv = (await getVolume(e, pvName))!;
      const nodePath = `${BASE_PATH}/${pvName}_default_local-path-pvc`;
      expect(pv.metadata?.annotations).toMatchObject({
        [SELECTED_NODE_ANNOTATION]: 'node-1',
        'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path',
      });
      expect(pv.spec).toMatchObject({
        persistentVolumeReclaimPolicy: 'Delete',
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '128Mi' },
        volumeMode: 'Filesystem',
        storageClassName: 'local-path',
        hostPath: { path: nodePath, type: 'DirectoryOrCreate' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
            ],
          },
        },
      });
      // The event is recorded asynchronously, possibly after the binder bound the claim.
      await vi.waitFor(
        async () =>
          expect(await eventsFor(e, 'PersistentVolumeClaim', 'local-path-pvc', 'ProvisioningSucceeded')).toHaveLength(
            1,
          ),
        WAIT,
      );

      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(statSync(dir).mode & 0o777).toBe(0o777);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      // The setup helper pod ran and is gone.
      await vi.waitFor(() => expect([...e.helperPods]).toEqual([`helper-pod-create-${pvName}`]), WAIT);
      expect(await helperPodsNow(e)).toEqual([]);

      await deletePodAndClaim(e);
      await vi.waitFor(async () => {
        expect(await getVolume(e, pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      await vi.waitFor(() => expect(e.helperPods).toContain(`helper-pod-delete-${pvName}`), WAIT);
      expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(true);
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
    });

    it('uses a custom nodeAffinityKey and still cleans up on the right node', async () => {
      const e = await env({
        nodes: [{ name: 'node-1' }, { name: 'node-2', labels: { 'test.example.com/stable-id': 'my-stable-node' } }],
      });
      await e.storage.createStorageClass({
        body: storageClass('local-path-custom-affinity', {
          parameters: { nodeAffinityKey: 'test.example.com/stable-id' },
        }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-custom-affinity'),
      });
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: volumeTestPod('local-path-pvc', 'volume-test', { 'test.example.com/stable-id': 'my-stable-node' }),
      });

      const pvName = await waitBound(e);
      const pv = (await getVolume(e, pvName))!;
      expect(pv.metadata?.annotations?.[SELECTED_NODE_ANNOTATION]).toBe('node-2');
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
        { key: 'test.example.com/stable-id', operator: 'In', values: ['my-stable-node'] },
      ]);
      await waitSucceeded(e);
      const dir = e.onNode('node-2', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');

      // Upstream would take "my-stable-node" for a node name, find no such node and skip the cleanup.
      await deletePodAndClaim(e);
      await vi.waitFor(async () => {
        expect(await getVolume(e, pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      expect(e.warnings).toEqual([]);
      expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(false);
    });

    it('deletes the PV of a node that is gone, skipping the cleanup with a warning', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      expect(existsSync(dir)).toBe(true);

      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNode({ name: 'node-1' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });

      await vi.waitFor(async () => expect(await getVolume(e, pvName)).toBeUndefined(), WAIT);
      expect(e.warnings).toEqual([
        {
          pv: pvName,
          reason: 'VolumeCleanupSkipped',
          message: expect.stringContaining(
            `Node node-1 does not exist, skipping cleanup of volume ${pvName}`,
          ) as unknown,
        },
      ]);
      expect(existsSync(dir)).toBe(true);
      expect([...e.helperPods].filter((p) => p.startsWith('helper-pod-delete-'))).toEqual([]);
    });

    it('keeps the directory of a Retain volume', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass('local-path-retain', { reclaimPolicy: 'Retain' }) });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-retain'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      expect((await getVolume(e, pvName))?.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);

      await deletePodAndClaim(e);
      await vi.waitFor(async () => expect((await getVolume(e, pvName))?.status?.phase).toBe('Released'), WAIT);
      await settle(e.controller);
      expect(await getVolume(e, pvName)).toBeDefined();
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      expect([...e.helperPods].filter((p) => p.startsWith('helper-pod-delete-'))).toEqual([]);
    });
  },
  { tiers: ALL_TIERS },
);
