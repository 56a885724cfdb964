/**
 * Capacity through `main()` on both tiers: off (no PV watch, no path metrics) while the config declares no capacity;
 * once a reload of the ConfigMap declares one, the budgets start, counting the volumes made before, and show in
 * `/metrics`.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { BASE_PATH, claim, provisioningFailure, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, setConfigJson, startKit, waitStarted } from '../main/harness.js';

const PREFIX = 'local_path_provisioner_path_';

describeTiers('capacity through main()', () => {
  it('starts the budgets when a reloaded config declares a capacity, counting the volumes made before', async () => {
    const k = await startKit();
    const program = runMain(k.kubeconfig, ['--http-endpoint', '127.0.0.1:0']);
    const { endpoint } = await waitStarted(program);
    const metrics = async (): Promise<string> => (await fetch(`${endpoint!.url}/metrics`)).text();
    await provisionOne(k, 'before');
    expect(await metrics()).not.toContain(`${PREFIX}allocated_bytes{`);

    await setConfigJson(k, {
      nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [{ path: BASE_PATH, capacity: '200Mi' }] }],
    });
    const labels = `{node="node-1",path="${BASE_PATH}"}`;
    await vi.waitFor(async () => {
      const text = await metrics();
      expect(text).toContain(`${PREFIX}allocated_bytes${labels} ${128 * 2 ** 20}`);
      expect(text).toContain(`${PREFIX}capacity_bytes${labels} ${200 * 2 ** 20}`);
      expect(text).toContain(`${PREFIX}free_bytes${labels} ${72 * 2 ** 20}`);
      expect(text).toContain(`${PREFIX}volumes${labels} 1`);
    }, WAIT);

    const next = claim('after');
    next.metadata!.annotations = { 'volume.kubernetes.io/selected-node': 'node-1' };
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: next });
    expect(await provisioningFailure(k, 'after')).toContain(
      `not enough space on node node-1 for claim default/after (requests 128Mi): ${BASE_PATH} has 72Mi free (capacity 200Mi, 128Mi allocated to 1 volume)`,
    );
  });
});
