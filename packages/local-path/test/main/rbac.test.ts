/**
 * The provisioner under RBAC, through `main()`: on the real tier it runs as the manifest's ServiceAccount (with a rule
 * taken away where a test says so); on the testkit, which authorizes everything, the same refusal is a 403 fault.
 */
import { ANN_SELECTED_NODE as SELECTED_NODE } from '@kprov/provisioner-lib';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  BASE_PATH,
  claim,
  eventsFor,
  getClaim,
  NAMESPACE,
  PROVISIONER_NAME,
  provisioningFailure,
  volumeTestPod,
  WAIT,
} from '../provisioner/helpers.js';
import { provisionOne, runMain, serviceAccountKubeconfig, startKit, waitStarted, type Kit } from './harness.js';

/** Creates `local-path-pvc` as the scheduler left it for a node that has since gone. */
async function claimOnGoneNode(k: Kit): Promise<void> {
  const c = claim();
  c.metadata!.annotations = { [SELECTED_NODE]: 'gone-node' };
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: c });
}

/** A kubeconfig of the provisioner: the ServiceAccount with `rules` rewritten on the real tier; the admin's on the testkit. */
/** The manifest's rules without `pods/log`. */
function withoutLogs(
  rules: { resources?: string[]; verbs?: string[] }[],
): { resources?: string[]; verbs?: string[] }[] {
  return rules.map((r) => ({ ...r, resources: (r.resources ?? []).filter((x) => x !== 'pods/log') }));
}

async function provisionerKubeconfig(
  k: Kit,
  rules?: NonNullable<Parameters<typeof serviceAccountKubeconfig>[1]>['rules'],
): Promise<string> {
  return k.cluster.controlPlane === undefined ? k.kubeconfig : serviceAccountKubeconfig(k, { rules });
}

/** Upstream's raw manifest: claims may be read, not updated or patched. */
const withoutClaimUpdate = (
  rules: { resources?: string[]; verbs?: string[] }[],
): { resources?: string[]; verbs?: string[] }[] =>
  rules.map((r) =>
    (r.resources ?? []).includes('persistentvolumeclaims') ? { ...r, verbs: ['get', 'list', 'watch'] } : r,
  );

describeTiers('RBAC', () => {
  it('a reschedule that RBAC forbids is a ReschedulingFailed Warning on the claim naming the missing verb', async () => {
    const k = await startKit();
    k.cluster.testkit?.faults.add({
      verb: 'update',
      resource: 'persistentvolumeclaims',
      action: { type: 'error', code: 403 },
    });
    const program = runMain(await provisionerKubeconfig(k, withoutClaimUpdate));
    await waitStarted(program);
    await claimOnGoneNode(k);
    const message = await vi.waitFor(async () => {
      const [event] = await eventsFor(k, 'PersistentVolumeClaim', 'local-path-pvc', 'ReschedulingFailed');
      if (event === undefined) throw new Error('no ReschedulingFailed event yet');
      expect(event.type).toBe('Warning');
      return event.message ?? '';
    }, WAIT);
    expect(message).toContain(`could not remove annotation ${SELECTED_NODE}`);
    expect(message).toContain('needs the "update" verb on persistentvolumeclaims');
    expect((await getClaim(k, 'local-path-pvc'))?.metadata?.annotations?.[SELECTED_NODE]).toBe('gone-node');
  });

  it("with the manifest's RBAC, the claim of a gone node goes back to the scheduler", async () => {
    const k = await startKit();
    const program = runMain(await provisionerKubeconfig(k));
    await waitStarted(program);
    await claimOnGoneNode(k);
    await vi.waitFor(
      async () => expect((await getClaim(k, 'local-path-pvc'))?.metadata?.annotations?.[SELECTED_NODE]).toBeUndefined(),
      WAIT,
    );
    expect(await eventsFor(k, 'PersistentVolumeClaim', 'local-path-pvc', 'ReschedulingFailed')).toEqual([]);
  });

  it('a failed helper pod whose log may not be read says "could not read the log" and why', async () => {
    const k = await startKit();
    k.cluster.testkit?.faults.add({
      verb: 'get',
      resource: 'pods',
      subresource: 'log',
      action: { type: 'error', code: 403 },
    });
    const cm = await k.core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
    cm.data = { ...cm.data, setup: '#!/bin/sh\necho boom\nexit 3\n' };
    await k.core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
    const program = runMain(await provisionerKubeconfig(k, withoutLogs));
    await waitStarted(program);
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    const message = await provisioningFailure(k);
    expect(message).toContain('exited with code 3');
    expect(message).toMatch(/could not read the log: .*(403|[Ff]orbidden)/);
    expect(message).not.toContain('no log output');
  });

  it("falls back to the container's terminated message when the log may not be read (FallbackToLogsOnError)", async () => {
    const k = await startKit();
    k.cluster.testkit?.faults.add({
      verb: 'get',
      resource: 'pods',
      subresource: 'log',
      action: { type: 'error', code: 403 },
    });
    const cm = await k.core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
    // The kubelet keeps the log's tail as the terminated message of a failed container with this policy.
    const template = (cm.data?.['helperPod.yaml'] ?? '').replace(
      'imagePullPolicy: IfNotPresent',
      'imagePullPolicy: IfNotPresent\n    terminationMessagePolicy: FallbackToLogsOnError',
    );
    cm.data = { ...cm.data, setup: '#!/bin/sh\necho disk full >&2\nexit 3\n', 'helperPod.yaml': template };
    await k.core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
    const program = runMain(await provisionerKubeconfig(k, withoutLogs));
    await waitStarted(program);
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    const message = await provisioningFailure(k);
    expect(message).toMatch(/could not read the log: .*(403|[Ff]orbidden)/);
    expect(message).toContain("the container's terminated message:\ndisk full");
  });
});

describeTiers('teardown checks as the ServiceAccount', () => {
  it('refuses a forged PV pointing at the base path: a VolumeDeletionRefused Warning on the PV, which is kept', async () => {
    const k = await startKit();
    const program = runMain(await provisionerKubeconfig(k));
    await waitStarted(program);
    const live = await provisionOne(k, 'live');
    // Created with the admin's rights: anyone allowed to create PVs.
    await k.core.createPersistentVolume({
      body: {
        metadata: { name: 'forged', annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME } },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: 'local-path',
          hostPath: { path: BASE_PATH },
          claimRef: { namespace: 'default', name: 'gone', uid: randomUUID() },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
              ],
            },
          },
        },
      },
    });
    const [event] = await vi.waitFor(async () => {
      const found = await eventsFor(k, 'PersistentVolume', 'forged', 'VolumeDeletionRefused');
      expect(found).toHaveLength(1);
      return found;
    }, WAIT);
    expect(event?.type).toBe('Warning');
    expect(event?.message).toContain(
      `refusing to remove "${BASE_PATH}" for volume forged: it is a base path of the config`,
    );
    expect(await k.read.volume('forged')).toBeDefined();
    expect(readFileSync(path.join(k.cluster.nodes[0]!.root, live.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');
  });
});
