/**
 * Capacity budgets in node mode on both tiers: one provisioner per simulated node, each keeping the budgets of its
 * node (an `auto` path measured in-process); a full node hands the claim back and another node's provisioner makes it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ObjectReader } from '@kprov/testkit';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { ProvisionController } from '@kprov/provisioner-lib';
import { expect, it, vi } from 'vitest';
import { measureFileSystem } from '../../src/executor/node/statfs.js';
import { CapacityTracker } from '../../src/capacity/tracker.js';
import { parseConfig } from '../../src/config/index.js';
import {
  claim,
  getVolume,
  NAMESPACE,
  PROVISIONER_NAME,
  provisioningFailure,
  storageClass,
  WAIT,
  waitBound,
} from '../provisioner/helpers.js';
import { nodeModeProvisioner } from '../node-mode/env.js';

const CONFIG = {
  nodePathMap: [
    { node: 'node-1', paths: [{ path: '/data/auto', capacity: 'auto' }] },
    { node: 'node-2', paths: [{ path: '/data/large', capacity: '4Gi' }] },
    { node: 'node-3', paths: [{ path: '/data/large', capacity: '2Gi' }] },
  ],
};

function claimOn(name: string, size: string, node: string): V1PersistentVolumeClaim {
  const c = claim(name, 'local-path', { resources: { requests: { storage: size } } });
  c.metadata!.annotations = { 'volume.kubernetes.io/selected-node': node };
  return c;
}

describeTiers('capacity budgets in node mode', () => {
  it("hands a full node's claim back, and another node's provisioner makes it", async () => {
    const tier = currentTier();
    const cluster = await tier.start({
      nodes: ['node-1', 'node-2', 'node-3'].map((name) => ({ name })),
      namespaces: [NAMESPACE],
    });
    const kc = cluster.kubeConfig;
    // node-1's path is a 64 MiB tmpfs.
    const auto = cluster.onNode('node-1', '/data/auto');
    mkdirSync(auto, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', auto]);
    tier.defer(() => execFileSync('umount', [auto]));
    const config = parseConfig(JSON.stringify(CONFIG));
    for (const node of cluster.nodes) {
      const abort = new AbortController();
      const capacity = new CapacityTracker({
        kubeConfig: kc,
        provisionerName: PROVISIONER_NAME,
        config: () => config,
        measure: (_node, path) => measureFileSystem(node.root, path),
      });
      const provisioner = nodeModeProvisioner(kc, () => config, node, { capacity });
      const controller = new ProvisionController({
        kubeConfig: kc,
        provisionerName: PROVISIONER_NAME,
        provisioner,
        leaderElection: false,
      });
      const running = Promise.all([controller.run(abort.signal), capacity.run(abort.signal)]);
      tier.defer(async () => {
        abort.abort();
        await running.catch(() => undefined);
      });
    }
    const core = kc.makeApiClient(CoreV1Api);
    const read = new ObjectReader(kc);
    await kc.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });

    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('first', '48Mi', 'node-1'),
    });
    await waitBound({ read }, 'first');
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claimOn('next', '32Mi', 'node-1') });
    expect(await provisioningFailure({ read }, 'next')).toContain(
      'not enough space on node node-1 for claim default/next (requests 32Mi): /data/auto has 16Mi free (capacity 64Mi, 48Mi allocated to 1 volume)',
    );
    // The controller writes the Event, then removes the claim's selected node (as the Go library does): the claim is
    // handed back once that update is in.
    const handedBack = await vi.waitFor(async () => {
      const c = (await read.claim('next'))!;
      expect(c.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();
      return c;
    }, WAIT);
    // With no pod, the test plays the scheduler's second pick.
    handedBack.metadata!.annotations = {
      ...handedBack.metadata?.annotations,
      'volume.kubernetes.io/selected-node': 'node-3',
    };
    await core.replaceNamespacedPersistentVolumeClaim({ name: 'next', namespace: 'default', body: handedBack });
    const pv = await getVolume({ read }, await waitBound({ read }, 'next'));
    expect(pv?.metadata?.annotations?.['local.path.provisioner/provisioned-on']).toBe('node-3');
    expect(pv?.spec?.hostPath?.path).toMatch(/^\/data\/large\//);
  });
});
