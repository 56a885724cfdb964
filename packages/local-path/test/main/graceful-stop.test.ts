/**
 * A provisioner asked to stop (SIGTERM: `kubectl delete pod`, a rolling update) while a helper pod runs finishes
 * that volume before it exits: the helper pod runs to its end, the PV is saved, nothing is logged as an error, and
 * the Lease is given up afterwards. Cutting the operation short instead deleted the helper pod in the middle of its
 * script and logged `Error syncing claim ... This operation was aborted`, leaving the volume to the next leader.
 */
import { writeFile } from 'node:fs/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { BASE_PATH, claim, NAMESPACE, SETUP_SCRIPT, volumeTestPod, WAIT } from '../provisioner/helpers.js';
import { runMain, startKit, waitStarted } from './harness.js';

/** The stock setup script, once a file `go` exists in the base path: the stop can come while it waits. */
const WAITING_SETUP = SETUP_SCRIPT.replace(
  'set -eu\n',
  'set -eu\nwhile [ ! -e "$VOL_BASE/go" ]; do sleep 0.05; done\n',
);

describeTiers('a stop while a volume is being made', () => {
  it('finishes the volume in flight, logs no error, then gives the Lease up and exits 0', async () => {
    const k = await startKit();
    await k.core.patchNamespacedConfigMap(
      { name: 'local-path-config', namespace: NAMESPACE, body: { data: { setup: WAITING_SETUP } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const program = runMain(k.kubeconfig);
    await waitStarted(program);
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    const helper = await vi.waitFor(async () => {
      const pod = (await k.read.pods(NAMESPACE)).find((p) => p.metadata?.name?.startsWith('helper-pod-create-'));
      if (pod?.status?.phase !== 'Running') throw new Error('no setup helper pod running yet');
      return pod.metadata?.name ?? '';
    }, WAIT);
    const pvName = helper.replace('helper-pod-create-', '');

    program.stop();
    // The stop waits for the script, which goes on once `go` exists.
    await writeFile(k.cluster.onNode('node-1', `${BASE_PATH}/go`), '');
    expect(await program.exited).toBe(0);

    expect(await k.read.volume(pvName)).toBeDefined();
    expect(program.messages()).toContain(
      `Volume ${pvName} has been created on node-1:${BASE_PATH}/${pvName}_default_local-path-pvc`,
    );
    // Errors are the JSON lines without "v" (klog's JSON gives errors none).
    expect(program.entries().filter((e) => !('v' in e))).toEqual([]);
    const [lease] = await k.read.leases(NAMESPACE);
    expect(lease?.spec?.holderIdentity ?? '').toBe('');
  });
});
