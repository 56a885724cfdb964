/**
 * The one PV informer of `main()`: the controller, the capacity budgets and the teardowns' check that a directory
 * holds no other PV's volume all read it. A teardown over another PV's volume is still refused when the check reads
 * that cache, and deleting volumes lists no PVs (testkit tier, which counts the requests it serves).
 */
import { existsSync, readFileSync } from 'node:fs';
import { StorageV1Api } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { BASE_PATH, eventsFor, forgedVolume, getVolume, storageClass, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, setConfigJson, startKit, waitStarted } from './harness.js';

describeTiers('the PV cache of main()', () => {
  it("still refuses a teardown that would remove another PV's volume", async () => {
    const k = await startKit({ withClass: false });
    await k.cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({
      body: storageClass('local-path', { parameters: { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/' } }),
    });
    const program = runMain(k.kubeconfig);
    await waitStarted(program);
    const live = await provisionOne(k, 'data');
    expect(live.nodePath).toBe(`${BASE_PATH}/default/data`);

    // The claim exists, with another uid: the PV controller releases the forged volume, whose directory is the live one.
    await k.core.createPersistentVolume({ body: forgedVolume('forged', live.nodePath, 'data') });
    const message = await vi.waitFor(async () => {
      const [event] = await eventsFor(k, 'PersistentVolume', 'forged', 'VolumeDeletionRefused');
      if (event === undefined) throw new Error('no VolumeDeletionRefused event yet');
      return event.message ?? '';
    }, WAIT);
    expect(message).toContain(`it holds the volume of PV ${live.pvName}`);
    expect(await getVolume(k, 'forged')).toBeDefined();
    expect(readFileSync(`${k.cluster.onNode('node-1', live.nodePath)}/test`, 'utf8')).toBe('local-path-test\n');
  });
});

describeTiers(
  'the PV cache of main(), counting requests',
  () => {
    it('lists and watches the PVs once with capacity budgets on, and lists none to delete volumes', async () => {
      const k = await startKit();
      const kit = k.cluster.testkit!;
      // A capacity turns the budgets on from the start: before, they watched the PVs beside the controller.
      await setConfigJson(k, {
        nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [{ path: BASE_PATH, capacity: '10Gi' }] }],
      });
      kit.server.resetRequestCounts();
      const program = runMain(k.kubeconfig);
      await waitStarted(program);
      const volumes: { pvName: string; nodePath: string }[] = [];
      for (const name of ['a', 'b', 'c']) volumes.push(await provisionOne(k, name));

      for (const name of ['a', 'b', 'c']) {
        await k.core.deleteNamespacedPod({ name: `pod-${name}`, namespace: 'default' });
        await k.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
      }
      await vi.waitFor(async () => {
        for (const { pvName, nodePath } of volumes) {
          expect(await getVolume(k, pvName)).toBeUndefined();
          expect(existsSync(k.cluster.onNode('node-1', nodePath))).toBe(false);
        }
      }, WAIT);
      const counts = kit.server.requestCounts();
      expect(counts['list persistentvolumes']).toBe(1);
      expect(counts['watch persistentvolumes']).toBe(1);
    });
  },
  { tiers: ['testkit'] },
);
