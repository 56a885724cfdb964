/**
 * describeTiers: the same tests on the testkit and, with KUBEBUILDER_ASSETS, on a real control plane, each test
 * starting from a clean cluster although the real tier's control plane is shared by the file.
 */
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { describeTiers } from '../../src/vitest.js';

describeTiers('a cluster per test', (tier) => {
  const claim = {
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual' },
  };

  for (const round of [1, 2]) {
    it(`starts clean, with the namespaces asked for (round ${round})`, async () => {
      const c = await tier.start({ nodes: [], namespaces: ['team-a'] });
      expect(c.tier).toBe(tier.name);
      const core = c.kubeConfig.makeApiClient(CoreV1Api);
      const storage = c.kubeConfig.makeApiClient(StorageV1Api);
      // What the other round created is gone.
      expect((await core.listPersistentVolumeClaimForAllNamespaces()).items).toEqual([]);
      expect((await storage.listStorageClass()).items).toEqual([]);
      expect(
        (await core.listNamespacedConfigMap({ namespace: 'team-a' })).items
          .map((m) => m.metadata?.name)
          .filter((n) => n !== 'kube-root-ca.crt'),
      ).toEqual([]);
      await storage.createStorageClass({
        body: { metadata: { name: 'manual' }, provisioner: 'kubernetes.io/no-provisioner' },
      });
      await core.createNamespacedPersistentVolumeClaim({ namespace: 'team-a', body: claim });
      await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'left-behind' } } });
      await core.createPersistentVolume({
        body: {
          metadata: { name: `pv-${round}`, finalizers: ['example.com/keep'] },
          spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
        },
      });
    });
  }

  it('takes the API server down and back with the data kept', async () => {
    const c = await tier.start({ nodes: [] });
    const core = c.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'kept' } } });
    await c.stopApiServer();
    await expect(core.readNamespacedConfigMap({ namespace: 'default', name: 'kept' })).rejects.toThrow();
    await c.startApiServer();
    expect((await core.readNamespacedConfigMap({ namespace: 'default', name: 'kept' })).metadata?.name).toBe('kept');
  });
});
