/**
 * The provisioner watches its helper pod instead of polling it (upstream polls every second): however long the
 * script runs, waiting costs no requests, so the client's QPS budget goes to provisioning; and the end of the pod is
 * acted on as soon as the kubelet reports it. Also: a helper pod deleted from under the provisioner fails the attempt
 * at once with a clear message instead of waiting for the timeout.
 */
import { writeFileSync } from 'node:fs';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { describeTiers } from '@kprov/testkit/vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  type Env,
  NAMESPACE,
  perTest,
  provisioningFailure,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
} from './helpers.js';

const { env } = perTest();

/** A setup script that waits for a `go` file next to the volume directory, then makes the directory. */
const GATED_SETUP =
  '#!/bin/sh\nset -eu\nwhile [ ! -e "$(dirname "$VOL_DIR")/go" ]; do sleep 0.02; done\nmkdir -m 0777 -p "$VOL_DIR"\n';

/** Waits until the (only) helper pod runs and returns its name. */
async function runningHelper(e: Env): Promise<string> {
  return vi.waitFor(() => {
    const [name] = [...e.helperPods];
    // Read from the store, not through the server: only the provisioner's requests are counted.
    const phase = (e.cluster.testkit!.store.get('pods', NAMESPACE, name ?? '') as V1Pod | undefined)?.status?.phase;
    if (name === undefined || phase !== 'Running') throw new Error('helper pod not running yet');
    return name;
  }, WAIT);
}

/** Requests about pods since the counts were reset (other requests, such as Event writes, may come at any time). */
function podRequests(e: Env): Record<string, number> {
  return Object.fromEntries(
    Object.entries(e.cluster.testkit!.server.requestCounts()).filter(([key]) => key.endsWith(' pods')),
  );
}

// Testkit only: it counts the requests the server received, which only the testkit can tell.
describeTiers(
  'waiting for a helper pod',
  () => {
    it('creates and watches the helper pod with one request each, sends none while the script runs, and binds at its end', async () => {
      // With cmdTimeoutSeconds 3600 only the pod's end can finish the wait.
      // No reconciler: its list of helper pods would be counted. The provisioner's waits run on a fake clock.
      const clock = new FakeClock();
      const e = await env({ setup: GATED_SETUP, cmdTimeoutSeconds: 3600, reconcile: false, clock });
      await e.storage.createStorageClass({ body: storageClass() });
      // The consumer pod first (it waits for its claim), so that every pod request counted below is the provisioner's.
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      e.cluster.testkit!.server.resetRequestCounts();
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await runningHelper(e);
      expect(podRequests(e)).toEqual({ 'create pods': 1, 'watch pods': 1 });

      // A poller (upstream: every second) would ask for the pod meanwhile. A request it sent would reach the server
      // before the one sent after it here (a list of namespaces, not counted as a pod request).
      await clock.advanceAsync(1500);
      await e.core.listNamespace();
      expect(podRequests(e)).toEqual({ 'create pods': 1, 'watch pods': 1 });

      writeFileSync(e.onNode('node-1', `${BASE_PATH}/go`), '');
      await waitBound(e);
      // The setup pod is kept until the PV is saved, then deleted: the claim can be Bound before that delete arrives.
      await vi.waitFor(
        () => expect(podRequests(e)).toEqual({ 'create pods': 1, 'watch pods': 1, 'log pods': 1, 'delete pods': 1 }),
        WAIT,
      );
    });

    it('fails the attempt at once when the helper pod is deleted from under it', async () => {
      const e = await env({ setup: GATED_SETUP, cmdTimeoutSeconds: 3600 });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const name = await runningHelper(e);

      await e.core.deleteNamespacedPod({ name, namespace: NAMESPACE });
      const message = await provisioningFailure(e);
      expect(message).toMatch(
        new RegExp(`^failed to create volume pvc-[0-9a-f-]+: pod ${NAMESPACE}/${name} was deleted`),
      );
    });
  },
  { tiers: ['testkit'] },
);
