/**
 * The "writing an out-of-tree dynamic provisioner" walkthrough, end to end on both tiers: class, claim, the
 * program started through `main()`, a pod writing to the volume, then cleanup.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ObjectReader } from '@kprov/testkit';
import { ALL_TIERS, describeTiers, WAIT } from '@kprov/testkit/vitest';
import { CoreV1Api, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { IDENTITY_ANNOTATION } from '../src/provisioner.js';
import { hostpathClaim, runMain, storageClass, tempDir, type RunningMain } from './helpers.js';

const testPod: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'test-pod', namespace: 'default' },
  spec: {
    containers: [
      {
        name: 'test-pod',
        image: 'busybox',
        imagePullPolicy: 'IfNotPresent',
        command: ['/bin/sh'],
        args: ['-c', 'touch /mnt/SUCCESS && exit 0 || exit 1'],
        volumeMounts: [{ name: 'hostpath-pvc', mountPath: '/mnt' }],
      },
    ],
    restartPolicy: 'Never',
    volumes: [{ name: 'hostpath-pvc', persistentVolumeClaim: { claimName: 'hostpath-claim' } }],
  },
};

describeTiers(
  'the hostPath walkthrough',
  (tier) => {
    it('provisions, binds, serves a pod, and cleans up on claim deletion', async () => {
      const cluster = await tier.start({ nodes: [{ name: 'node-1' }] });
      const files = await tempDir('kprov-hostpath-kubeconfig-');
      tier.defer(files.cleanup);
      const kubeconfig = await cluster.writeKubeconfig(path.join(files.dir, 'kubeconfig'));
      const root = cluster.nodes[0]!.root;
      const read = new ObjectReader(cluster.kubeConfig);
      const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
      const storage = cluster.kubeConfig.makeApiClient(StorageV1Api);
      await storage.createStorageClass({ body: storageClass() });
      await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: hostpathClaim() });

      const program: RunningMain = runMain(
        ['--kubeconfig', kubeconfig, '--host-root', root, '--leader-election-namespace', 'default'],
        {
          NODE_NAME: 'node-1',
        },
      );
      tier.defer(() => program.stop());
      await program.started;

      // PV created and bound.
      const pvName = await vi.waitFor(async () => {
        const c = await read.claim('hostpath-claim');
        expect(c?.status?.phase).toBe('Bound');
        return c!.spec!.volumeName!;
      }, WAIT);
      const pv = (await read.volume(pvName))!;
      const nodePath = `/tmp/hostpath-provisioner/${pvName}`;
      expect(pv.metadata?.annotations?.[IDENTITY_ANNOTATION]).toBe('node-1');
      expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe('example.com/hostpath');
      expect(pv.spec).toMatchObject({
        persistentVolumeReclaimPolicy: 'Delete',
        accessModes: ['ReadWriteMany'],
        capacity: { storage: '1Mi' },
        hostPath: { path: nodePath, type: 'Directory' },
        storageClassName: 'example-hostpath',
      });
      const dir = path.join(root, nodePath);
      expect(statSync(dir).mode & 0o777).toBe(0o777);

      // The pod writes SUCCESS into the volume.
      await core.createNamespacedPod({ namespace: 'default', body: testPod });
      await vi.waitFor(async () => {
        expect((await read.pod('test-pod'))?.status?.phase).toBe('Succeeded');
      }, WAIT);
      expect(existsSync(path.join(dir, 'SUCCESS'))).toBe(true);

      // Deleting pod and claim removes the PV object and the directory.
      await core.deleteNamespacedPod({ name: 'test-pod', namespace: 'default' });
      await core.deleteNamespacedPersistentVolumeClaim({ name: 'hostpath-claim', namespace: 'default' });
      await vi.waitFor(async () => {
        expect(await read.volume(pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);

      expect(await program.stop()).toBe(0);
      expect(program.output()).toContain('Created volume directory');
      expect(program.output()).toContain('Deleted volume directory');
    });
  },
  { tiers: ALL_TIERS },
);
