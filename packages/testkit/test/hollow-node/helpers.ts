/** What the kubelet tests share: pods and claims as a user writes them, and waits on them through client-node. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, StorageV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../src/process/wait-for.js';
import { WAIT } from '../../src/vitest.js';

/** A pod that runs `script` with `sh` and mounts the node's `hostDir` at `/data`; no nodeName: a scheduler places it. */
export function hostPathPod(name: string, script: string, hostDir = '/var/kprov-test'): V1Pod {
  return {
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'c',
          image: 'busybox',
          // A real node (startNode) has the image loaded and no registry to pull from.
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } }],
    },
  };
}

/** Waits until the pod's phase is `phase` (default 20 s); returns the pod. */
export async function waitForPhase(kc: KubeConfig, name: string, phase: string, timeoutMs = 20_000): Promise<V1Pod> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    `pod ${name} ${phase}`,
    async () => {
      const pod = await core.readNamespacedPod({ namespace: 'default', name });
      return pod.status?.phase === phase ? pod : undefined;
    },
    { timeoutMs },
  );
}

/** Waits until the pod is gone (default 20 s). */
export async function waitForGone(kc: KubeConfig, name: string, timeoutMs = 20_000): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await waitFor(
    `pod ${name} gone`,
    async () => {
      try {
        await core.readNamespacedPod({ namespace: 'default', name });
        return undefined;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return true;
        throw err;
      }
    },
    { timeoutMs },
  );
}

/** The text of a file under a node root, once it exists. */
export async function fileOnNode(root: string, file: string): Promise<string> {
  const p = path.join(root, file);
  await waitFor(`${p} to exist`, () => (existsSync(p) ? true : undefined), { timeoutMs: WAIT.timeout });
  return readFileSync(p, 'utf8');
}

/**
 * The WaitForFirstConsumer flow with the smallest possible provisioner: a class for `provisioner`, a claim, a pod
 * using it; once the scheduler has put `volume.kubernetes.io/selected-node` on the claim, a hostPath PV pinned to that
 * node is created for it (what local-path does, without the helper pod), and the PV controller binds the two.
 * Returns the node the volume went to.
 */
export async function provisionOnFirstConsumer(
  kc: KubeConfig,
  opts: { className: string; claim: string; pod: V1Pod; provisioner: string },
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  await storage.createStorageClass({
    body: {
      metadata: { name: opts.className },
      provisioner: opts.provisioner,
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      metadata: { name: opts.claim },
      spec: {
        storageClassName: opts.className,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
  await core.createNamespacedPod({ namespace: 'default', body: opts.pod });
  const selected = await waitFor(
    `claim ${opts.claim} to get a selected node`,
    async () => {
      const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: opts.claim });
      return pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
    },
    { timeoutMs: WAIT.timeout },
  );
  const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: opts.claim });
  await core.createPersistentVolume({
    body: {
      metadata: {
        name: `pvc-${pvc.metadata?.uid ?? ''}`,
        annotations: { 'pv.kubernetes.io/provisioned-by': opts.provisioner },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: opts.className,
        hostPath: { path: `/pvs/${opts.claim}`, type: 'DirectoryOrCreate' },
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: 'default',
          name: opts.claim,
          uid: pvc.metadata?.uid ?? '',
        },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [selected] }] },
            ],
          },
        },
      },
    },
  });
  return selected;
}

/** A pod that mounts claim `claim` at `/data` and runs `script`. */
export function claimPod(name: string, claim: string, script: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'c',
          image: 'busybox',
          // A real node (startNode) has the image loaded and no registry to pull from.
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    },
  };
}
