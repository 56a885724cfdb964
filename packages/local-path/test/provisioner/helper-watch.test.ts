/**
 * The provisioner watches its helper pod instead of polling it (upstream polls every second): however long the
 * script runs, waiting costs no requests, so the client's QPS budget goes to provisioning; and the end of the pod is
 * acted on as soon as the kubelet reports it. Also: a helper pod deleted from under the provisioner fails the attempt
 * at once with a clear message instead of waiting for the timeout.
 */
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASE_PATH, claim, eventsFor, getPod, NAMESPACE, startEnv, storageClass, volumeTestPod, waitBound, WAIT, type Env } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function env(...args: Parameters<typeof startEnv>): Promise<Env> {
  const e = await startEnv(...args);
  cleanups.push(e.stop);
  return e;
}

/** A setup script that waits for a `go` file next to the volume directory, then makes the directory. */
const GATED_SETUP = '#!/bin/sh\nset -eu\nwhile [ ! -e "$(dirname "$VOL_DIR")/go" ]; do sleep 0.02; done\nmkdir -m 0777 -p "$VOL_DIR"\n';

/** Waits until the (only) helper pod runs and returns its name. */
async function runningHelper(e: Env): Promise<string> {
  return vi.waitFor(() => {
    const [name] = [...e.helperPods];
    if (name === undefined || getPod(e.kit, name, NAMESPACE)?.status?.phase !== 'Running') throw new Error('helper pod not running yet');
    return name;
  }, WAIT);
}

describe('waiting for a helper pod', () => {
  it('sends no request while the script runs, and binds as soon as the pod succeeded', async () => {
    // With cmdTimeoutSeconds 3600 only the pod's end can finish the wait.
    const e = await env({ setup: GATED_SETUP, cmdTimeoutSeconds: 3600 });
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    await runningHelper(e);

    e.kit.server.resetRequestCounts();
    // A poller (upstream: every second; ours used to look every 50 ms here) would ask for the pod meanwhile.
    await sleep(1500);
    expect(e.kit.server.requestCounts()).toEqual({});

    writeFileSync(e.onNode('node-1', `${BASE_PATH}/go`), '');
    await waitBound(e.kit);
    const counts = e.kit.server.requestCounts();
    expect(counts['get pods']).toBeUndefined();
    expect(counts['log pods']).toBe(1);
    expect(counts['delete pods']).toBe(1);
  });

  it('fails the attempt at once when the helper pod is deleted from under it', async () => {
    const e = await env({ setup: GATED_SETUP, cmdTimeoutSeconds: 3600 });
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    const name = await runningHelper(e);

    await e.core.deleteNamespacedPod({ name, namespace: NAMESPACE });
    const message = await vi.waitFor(() => {
      const [event] = eventsFor(e.kit, 'PersistentVolumeClaim', 'local-path-pvc', 'ProvisioningFailed');
      if (event === undefined) throw new Error('no ProvisioningFailed event yet');
      return event.message ?? '';
    }, WAIT);
    expect(message).toMatch(new RegExp(`^failed to create volume pvc-[0-9a-f-]+: pod ${NAMESPACE}/${name} was deleted`));
  });
});
