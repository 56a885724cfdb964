/**
 * A describeTiers suite as a project writes it, run by `../existing-cluster.test.ts` with
 * KPROV_USE_EXISTING_CLUSTER=true against a cluster that holds objects of its "user" (`users-*`). The tests run in
 * order: the second checks what the first left.
 */
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { waitFor } from '../../../src/process/wait-for.js';
import { CREATED_FOR_TEST_LABEL } from '../../../src/tiers/existing.js';
import { describeTiers } from '../../../src/vitest.js';
import { hostPathPod } from '../../hollow-node/helpers.js';

const names = (items: { metadata?: { name?: string } }[]): string[] => items.map((i) => i.metadata?.name ?? '');

describeTiers(
  'on an existing cluster',
  (tier) => {
    it('gives the cluster of the kubeconfig, with the namespaces and simulated nodes asked for', async () => {
      const c = await tier.start({ namespaces: ['team-a'], nodes: [{ name: 'sim-1' }] });
      expect(c.tier).toBe('real');
      expect(c.controlPlane).toBeUndefined();
      expect(c.url).toBe(process.env.EXPECTED_URL);
      const core = c.kubeConfig.makeApiClient(CoreV1Api);
      const storage = c.kubeConfig.makeApiClient(StorageV1Api);
      expect((await core.readNamespace({ name: 'team-a' })).metadata?.labels?.[CREATED_FOR_TEST_LABEL]).toBe('true');
      // The simulated kubelet runs a pod the cluster's scheduler put on its node.
      await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('made-by-test', 'echo ok > /data/ok') });
      await waitFor('pod made-by-test Succeeded', async () => {
        const pod = await core.readNamespacedPod({ namespace: 'default', name: 'made-by-test' });
        return pod.status?.phase === 'Succeeded' ? pod : undefined;
      });
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'made-by-test' } } });
      await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'made-by-test' } } });
      await storage.createStorageClass({
        body: { metadata: { name: 'made-by-test' }, provisioner: 'kubernetes.io/no-provisioner' },
      });
      // A change to an object of the user's is the test's own business: it is not undone, and the object stays.
      await core.patchNamespacedConfigMap({
        namespace: 'default',
        name: 'users-config',
        body: [{ op: 'add', path: '/data', value: { touched: 'yes' } }],
      });
      await expect(c.compact()).rejects.toThrow(/compact\(\) is not possible on an existing cluster/);
    });

    it('starts without what the previous test made, and with everything of the cluster that was there before', async () => {
      const c = await tier.start({ nodes: [] });
      const core = c.kubeConfig.makeApiClient(CoreV1Api);
      const storage = c.kubeConfig.makeApiClient(StorageV1Api);
      const configMaps = names((await core.listNamespacedConfigMap({ namespace: 'default' })).items);
      expect(configMaps).toContain('users-config');
      expect(configMaps).not.toContain('made-by-test');
      expect(names((await core.listNamespacedPod({ namespace: 'default' })).items)).toEqual([]);
      expect(names((await storage.listStorageClass()).items)).toEqual(['users-class']);
      const namespaces = names((await core.listNamespace()).items);
      expect(namespaces).toContain('users-ns');
      expect(namespaces).not.toContain('team-a');
      expect(names((await core.listNode()).items)).not.toContain('sim-1');
    });

    it('refuses a namespace or a node name of the cluster it did not make', async () => {
      await expect(tier.start({ namespaces: ['users-ns'], nodes: [] })).rejects.toThrow(
        /namespace users-ns already exists on the existing cluster .* and the tier did not make it/,
      );
      await expect(tier.start({ nodes: [{ name: 'users-node' }] })).rejects.toThrow(
        /a Node users-node already exists on the existing cluster/,
      );
    });
  },
  { tiers: ['real'] },
);
