/**
 * Helper pods that do not finish: `cmdTimeoutSeconds` exceeded (upstream's `create process timeout after <N>
 * seconds`, for setup and teardown), and the controller stopped while a helper pod runs. In each case the helper pod
 * is deleted (its process killed), nothing is left half-made, and the next attempt succeeds once the script is fixed.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { CoreV1Api } from '@kubernetes/client-node';
import { ALL_TIERS, currentTier, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  type Env,
  eventsFor,
  getClaim,
  getPod,
  getVolume,
  NAMESPACE,
  helperPodsNow,
  perTest,
  SETUP_SCRIPT,
  storageClass,
  TEARDOWN_SCRIPT,
  volumes,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

const { env, defer } = perTest();

/** A script that hangs; were it ever to go on, it would create the directory. */
const HANGING_SETUP = '#!/bin/sh\nset -eu\nsleep 600\nmkdir -m 0777 -p "$VOL_DIR"\n';
const HANGING_TEARDOWN = '#!/bin/sh\nset -eu\nsleep 600\nrm -rf "$VOL_DIR"\n';

async function setScript(core: CoreV1Api, key: 'setup' | 'teardown', text: string): Promise<void> {
  const cm = await core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
  cm.data = { ...cm.data, [key]: text };
  await core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
}

/** The PV name the claim will get: `pvc-<claim uid>`, once the claim exists. */
async function pvNameOf(e: Env, claimName = 'local-path-pvc'): Promise<string> {
  return `pvc-${(await getClaim(e, claimName))!.metadata!.uid!}`;
}

/** Every helper pod that was added was deleted again before the next one of that name was added. */
function expectEachHelperPodDeleted(e: Env): void {
  const open = new Set<string>();
  for (const change of e.helperPodChanges) {
    const [type, name] = change.split(' ') as [string, string];
    if (type === 'ADDED') {
      expect(open.has(name), `${name} added twice without a delete in between`).toBe(false);
      open.add(name);
    } else open.delete(name);
  }
  expect([...open]).toEqual([]);
}

/**
 * `cmdTimeoutSeconds` for these tests: it counts from the helper pod's creation, so on real nodes (node tier) it
 * must leave a helper container time to start on a busy machine; 1 s elsewhere.
 */
function helperTimeoutSeconds(): number {
  return currentTier().name === 'node' ? 20 : 1;
}

async function provisionWalkthroughClaim(e: Env): Promise<void> {
  await e.storage.createStorageClass({ body: storageClass() });
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
  await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
}

describeTiers(
  'helper pod timeout',
  () => {
    it("fails a hanging setup after cmdTimeoutSeconds with upstream's message, deletes the helper pod, and succeeds once fixed", async () => {
      const timeout = helperTimeoutSeconds();
      const e = await env({ cmdTimeoutSeconds: timeout, setup: HANGING_SETUP, retryMs: 200 });
      await provisionWalkthroughClaim(e);

      const event = await vi.waitFor(async () => {
        const [first] = await eventsFor(e, 'PersistentVolumeClaim', 'local-path-pvc', 'ProvisioningFailed');
        if (first === undefined) throw new Error('no ProvisioningFailed event yet');
        return first;
      }, WAIT);
      const pvName = await pvNameOf(e);
      expect(event.type).toBe('Warning');
      expect(event.message).toBe(`failed to create volume ${pvName}: create process timeout after ${timeout} seconds`);
      // The failed attempt's helper pod was deleted before the failure was reported.
      expect(e.helperPodChanges.slice(0, 2)).toEqual([
        `ADDED helper-pod-create-${pvName}`,
        `DELETED helper-pod-create-${pvName}`,
      ]);
      expect(await volumes(e)).toEqual([]);
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      expect(existsSync(dir)).toBe(false);

      // The scripts are mounted into each new helper pod: fixing the ConfigMap fixes the next retry.
      await setScript(e.core, 'setup', SETUP_SCRIPT);
      expect(await waitBound(e)).toBe(pvName);
      await waitSucceeded(e);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
      expectEachHelperPodDeleted(e);
    });

    it('fails a hanging teardown after cmdTimeoutSeconds, keeps the PV, and deletes it once fixed', async () => {
      const timeout = helperTimeoutSeconds();
      const e = await env({ cmdTimeoutSeconds: timeout, teardown: HANGING_TEARDOWN, retryMs: 200 });
      await provisionWalkthroughClaim(e);
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);

      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      const event = await vi.waitFor(async () => {
        const [first] = await eventsFor(e, 'PersistentVolume', pvName, 'VolumeFailedDelete');
        if (first === undefined) throw new Error('no VolumeFailedDelete event yet');
        return first;
      }, WAIT);
      expect(event.type).toBe('Warning');
      expect(event.message).toBe(`failed to delete volume ${pvName}: create process timeout after ${timeout} seconds`);
      expect(e.helperPodChanges).toContain(`DELETED helper-pod-delete-${pvName}`);
      expect((await getVolume(e, pvName))?.status?.phase).toBe('Released');
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');

      await setScript(e.core, 'teardown', TEARDOWN_SCRIPT);
      await vi.waitFor(async () => {
        expect(await getVolume(e, pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
      expectEachHelperPodDeleted(e);
    });
  },
  { tiers: ALL_TIERS },
);

describeTiers(
  'helper pod when the provisioner stops',
  (tier) => {
    it('deletes the running helper pod on shutdown, and the restarted provisioner provisions the claim', async () => {
      // A timeout far beyond the test: only the shutdown can end this helper pod.
      const e = await env({ cmdTimeoutSeconds: 3600, setup: HANGING_SETUP });
      await provisionWalkthroughClaim(e);
      const helper = await vi.waitFor(async () => {
        const name = [...e.helperPods][0];
        if (name === undefined || (await getPod(e, name, NAMESPACE))?.status?.phase !== 'Running')
          throw new Error('helper pod not running yet');
        return name;
      }, WAIT);
      const pvName = await pvNameOf(e);
      expect(helper).toBe(`helper-pod-create-${pvName}`);

      await e.stopController();
      // Stopping returns only after the in-flight provisioning let go of its helper pod.
      expect(await helperPodsNow(e)).toEqual([]);
      expect(e.helperPodChanges).toEqual([`ADDED ${helper}`, `DELETED ${helper}`]);
      expect(await volumes(e)).toEqual([]);
      expect((await getClaim(e, 'local-path-pvc'))?.status?.phase).toBe('Pending');

      await setScript(e.core, 'setup', SETUP_SCRIPT);
      e.startController();
      expect(await waitBound(e)).toBe(pvName);
      await waitSucceeded(e);
      expect(readFileSync(e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc/test`), 'utf8')).toBe(
        'local-path-test\n',
      );
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
      expectEachHelperPodDeleted(e);
      // The shutdown interrupted the first attempt; the claim itself never failed.
      expect(await eventsFor(e, 'PersistentVolumeClaim', 'local-path-pvc', 'ProvisioningFailed')).toEqual([]);
    });

    // Testkit only: it stops the provisioner from inside the server, between storing the pod and answering.
    it.skipIf(tier.name !== 'testkit')(
      'deletes the helper pod when the shutdown comes while its create request is under way',
      async () => {
        const e = await env({ cmdTimeoutSeconds: 3600, setup: HANGING_SETUP });
        // Stop the provisioner the moment the server stores the helper pod, before its answer reaches the provisioner.
        let stopping: Promise<void> | undefined;
        const unsubscribe = e.cluster.testkit!.store.subscribe((c) => {
          if (c.resource === 'pods' && c.type === 'ADDED' && c.object.metadata.namespace === NAMESPACE)
            stopping ??= e.stopController();
        });
        defer(() => Promise.resolve(unsubscribe()));
        await provisionWalkthroughClaim(e);
        await vi.waitFor(async () => expect(stopping).toBeDefined(), WAIT);
        await stopping;

        expect(await helperPodsNow(e)).toEqual([]);
        expect(e.helperPodChanges).toEqual([
          `ADDED helper-pod-create-${await pvNameOf(e)}`,
          `DELETED helper-pod-create-${await pvNameOf(e)}`,
        ]);
        expect(await volumes(e)).toEqual([]);
      },
    );

    it('replaces a helper pod left running by a provisioner that died', async () => {
      const e = await env();
      await e.stopController();
      await provisionWalkthroughClaim(e);
      // The scheduler picks the node while no provisioner runs.
      await vi.waitFor(
        async () =>
          expect(
            (await getClaim(e, 'local-path-pvc'))?.metadata?.annotations?.['volume.kubernetes.io/selected-node'],
          ).toBe('node-1'),
        WAIT,
      );
      const pvName = await pvNameOf(e);
      const helper = `helper-pod-create-${pvName}`;
      // What a killed process leaves behind: its helper pod, still running a setup that never ends.
      await e.core.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: helper, namespace: NAMESPACE },
          spec: {
            nodeName: 'node-1',
            restartPolicy: 'Never',
            containers: [
              {
                name: 'helper-pod',
                image: 'busybox',
                imagePullPolicy: 'IfNotPresent',
                command: ['sh', '-c', 'sleep 600'],
              },
            ],
          },
        },
      });
      await vi.waitFor(async () => expect((await getPod(e, helper, NAMESPACE))?.status?.phase).toBe('Running'), WAIT);

      e.startController();
      expect(await waitBound(e)).toBe(pvName);
      await waitSucceeded(e);
      expect(readFileSync(e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc/test`), 'utf8')).toBe(
        'local-path-test\n',
      );
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
      expect(e.helperPodChanges).toEqual([
        `ADDED ${helper}`,
        `DELETED ${helper}`,
        `ADDED ${helper}`,
        `DELETED ${helper}`,
      ]);
    });
  },
  { tiers: ALL_TIERS },
);
