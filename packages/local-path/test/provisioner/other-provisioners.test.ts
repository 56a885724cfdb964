/**
 * Two provisioners in one namespace (e.g. one per disk, each with its own `--provisioner-name`), on both tiers: every
 * helper pod records the provisioner that made it, and the reconciler and the runner leave the helper pods of another
 * provisioner alone, while this provisioner's own leftovers (and those of an earlier version, which recorded none)
 * are still handled.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { HelperPodRunner } from '../../src/executor/helper-pod/runner.js';
import { HelperPodStatfs } from '../../src/executor/helper-pod/statfs.js';
import { loadHelperPodTemplate } from '../../src/executor/helper-pod/template.js';
import {
  BASE_PATH,
  claim,
  deleteAndWaitCleanedUp,
  type Env,
  HELPER_POD_YAML,
  NAMESPACE,
  PROVISIONER_NAME,
  perTest,
  SERVICE_ACCOUNT,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

const { env } = perTest();

/** The name of the other provisioner sharing the namespace. */
const OTHER = 'example.com/second-disk';
const PROVISIONER = 'local.path.provisioner/provisioner';

/**
 * A helper pod as a provisioner leaves it: `operation` on node-1, recording `provisioner` (none: an earlier version),
 * the volume `pvName` of the claim `default/gone` (which does not exist) at its default folder, running `script`.
 */
function helperPod(
  operation: 'create' | 'delete',
  pvName: string,
  provisioner: string | undefined,
  script: string,
): V1Pod {
  return {
    metadata: {
      name: `helper-pod-${operation}-${pvName}`,
      labels: { 'local.path.provisioner/operation': operation, 'local.path.provisioner/claim-uid': `uid-${pvName}` },
      annotations: {
        'local.path.provisioner/volume': pvName,
        'local.path.provisioner/claim': 'default/gone',
        'local.path.provisioner/path': folderOf(pvName),
        'local.path.provisioner/node': 'node-1',
        'local.path.provisioner/storage-class': 'local-path',
        ...(provisioner === undefined ? {} : { [PROVISIONER]: provisioner }),
      },
    },
    spec: {
      nodeName: 'node-1',
      restartPolicy: 'Never',
      serviceAccountName: SERVICE_ACCOUNT,
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'helper-pod',
          image: 'docker.io/library/busybox',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
        },
      ],
    },
  };
}

/** The default folder of `pvName` for the claim `default/gone`. */
function folderOf(pvName: string): string {
  return `${BASE_PATH}/${pvName}_default_gone`;
}

/** Creates the pods and waits until each is in the phase it is given with. */
async function createPods(e: Env, pods: [V1Pod, 'Running' | 'Succeeded'][]): Promise<void> {
  for (const [body] of pods) await e.core.createNamespacedPod({ namespace: NAMESPACE, body });
  await vi.waitFor(async () => {
    for (const [pod, phase] of pods) {
      const now = (await e.read.pod(pod.metadata!.name!, NAMESPACE))?.status?.phase;
      if (now !== phase) throw new Error(`${pod.metadata!.name!} is ${now ?? 'missing'}, not ${phase}`);
    }
  }, WAIT);
}

/** Names and uids of the pods in the provisioner's namespace now. */
async function podsNow(e: Env): Promise<Record<string, string>> {
  const pods = await e.read.pods(NAMESPACE);
  return Object.fromEntries(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.uid ?? '']));
}

describeTiers(
  'helper pods of two provisioners in one namespace',
  () => {
    it('record the provisioner that made them, setup, teardown and measuring pods alike', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      await deleteAndWaitCleanedUp(e, pvName, e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`));
      const created = e.helperPodsCreated.filter((p) => p.metadata?.name?.endsWith(pvName) === true);
      expect(created.map((p) => p.metadata?.labels?.['local.path.provisioner/operation'])).toEqual([
        'create',
        'delete',
      ]);
      for (const pod of created) expect(pod.metadata?.annotations?.[PROVISIONER]).toBe(PROVISIONER_NAME);
      const statfs = new HelperPodStatfs({
        kubeConfig: e.cluster.kubeConfig,
        namespace: NAMESPACE,
        helperPodTemplate: () => loadHelperPodTemplate(HELPER_POD_YAML, false),
        serviceAccountName: SERVICE_ACCOUNT,
        configMapName: 'local-path-config',
        provisionerName: PROVISIONER_NAME,
        timeoutSeconds: () => 60,
      });
      expect(statfs.pod('node-1', BASE_PATH).metadata?.annotations?.[PROVISIONER]).toBe(PROVISIONER_NAME);
    });

    it("are left alone by the reconciler when they are another provisioner's, while its own are handled", async () => {
      const e = await env({ reconcile: false });
      for (const pv of ['pvc-own-orphan', 'pvc-other-orphan'])
        mkdirSync(e.onNode('node-1', folderOf(pv)), { recursive: true });
      await createPods(e, [
        // Another provisioner's teardown still running, and its setup whose claim and PV are gone.
        [helperPod('delete', 'pvc-other', OTHER, 'sleep 300'), 'Running'],
        [helperPod('create', 'pvc-other-orphan', OTHER, 'true'), 'Succeeded'],
        // This provisioner's leftovers: a teardown pod, one of an earlier version (no provisioner), and an orphan.
        [helperPod('delete', 'pvc-own', PROVISIONER_NAME, 'true'), 'Succeeded'],
        [helperPod('delete', 'pvc-earlier', undefined, 'true'), 'Succeeded'],
        [helperPod('create', 'pvc-own-orphan', PROVISIONER_NAME, 'true'), 'Succeeded'],
      ]);
      const others = await podsNow(e);

      const report = await e.reconciler.reconcile(new AbortController().signal);

      expect(report.failed).toEqual([]);
      expect(report.tornDown).toEqual(['helper-pod-create-pvc-own-orphan']);
      expect([...report.deleted].sort()).toEqual([
        'helper-pod-create-pvc-own-orphan',
        'helper-pod-delete-pvc-earlier',
        'helper-pod-delete-pvc-own',
      ]);
      expect(existsSync(e.onNode('node-1', folderOf('pvc-own-orphan')))).toBe(false);
      expect(existsSync(e.onNode('node-1', folderOf('pvc-other-orphan')))).toBe(true);
      // The other provisioner's pods are the same pods, untouched, and no teardown ran for its orphan.
      await vi.waitFor(async () => {
        expect(await podsNow(e)).toEqual({
          'helper-pod-delete-pvc-other': others['helper-pod-delete-pvc-other'],
          'helper-pod-create-pvc-other-orphan': others['helper-pod-create-pvc-other-orphan'],
        });
      }, WAIT);
      expect(e.helperPods).not.toContain('helper-pod-delete-pvc-other-orphan');
    });

    it("are not replaced by a helper pod of the same name when they are another provisioner's", async () => {
      const e = await env({ reconcile: false });
      const runner = new HelperPodRunner({ kubeConfig: e.cluster.kubeConfig, pollIntervalMs: 50 });
      // A teardown pod of this provisioner, as `buildHelperPod` makes it (namespace set).
      const own = (pvName: string): V1Pod => {
        const pod = helperPod('delete', pvName, PROVISIONER_NAME, 'true');
        pod.metadata!.namespace = NAMESPACE;
        return pod;
      };
      await createPods(e, [
        [helperPod('delete', 'pvc-other', OTHER, 'sleep 300'), 'Running'],
        [helperPod('delete', 'pvc-earlier', undefined, 'sleep 300'), 'Running'],
      ]);
      const before = await podsNow(e);

      await expect(runner.run({ pod: own('pvc-other'), timeoutSeconds: 60 })).rejects.toThrow(
        `helper pod ${NAMESPACE}/helper-pod-delete-pvc-other already exists and belongs to the provisioner ${OTHER}`,
      );
      // A leftover of an earlier version (no provisioner) is replaced as before: the run succeeds.
      await runner.run({ pod: own('pvc-earlier'), timeoutSeconds: 60 });

      await vi.waitFor(async () => {
        expect(await podsNow(e)).toEqual({ 'helper-pod-delete-pvc-other': before['helper-pod-delete-pvc-other'] });
      }, WAIT);
    });
  },
  { tiers: ALL_TIERS },
);
