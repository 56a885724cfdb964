/** `main()` in node mode on either tier: `--node-mode` with the node's name from the environment, no helper pod. */
import { existsSync, statSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { PROVISIONED_ON_ANNOTATION } from '../../src/volume/annotations.js';
import { getVolume, NAMESPACE, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, startKit, waitStarted } from './harness.js';

describeTiers('local-path-provisioner start --node-mode', () => {
  it("provisions and removes volumes on its node's disk in-process, without leader election", async () => {
    const k = await startKit();
    const root = k.cluster.nodes.find((n) => n.name === 'node-1')!.root;
    const program = runMain(k.kubeconfig, ['--node-mode', '--host-root', root], { KUTTI_NODE_NAME: 'node-1' });
    await waitStarted(program);
    expect(program.messages()).toContain('Provisioner started in node mode on node-1');

    const { pvName, nodePath } = await provisionOne(k, 'data');
    expect((await getVolume(k, pvName))?.metadata?.annotations?.[PROVISIONED_ON_ANNOTATION]).toBe('node-1');
    const dir = k.cluster.onNode('node-1', nodePath);
    expect(statSync(dir).mode & 0o777).toBe(0o777);
    expect(existsSync(`${dir}/test`)).toBe(true);
    expect(await k.read.pods(NAMESPACE)).toEqual([]);
    expect(await k.read.leases(NAMESPACE)).toEqual([]);

    await k.core.deleteNamespacedPod({ name: 'pod-data', namespace: 'default' });
    await k.core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
    await vi.waitFor(async () => {
      expect(await getVolume(k, pvName)).toBeUndefined();
      expect(existsSync(dir)).toBe(false);
    }, WAIT);
    program.stop();
    expect(await program.exited).toBe(0);
  });
});
