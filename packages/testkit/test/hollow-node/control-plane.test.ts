/**
 * startKubelet against a real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler from
 * KUBEBUILDER_ASSETS): the node lifecycle controller accepts the node and its Lease, the real scheduler places pods
 * on it, the real PV controller binds a WaitForFirstConsumer claim, deleted pods leave (no Terminating forever), and
 * `pods/log` goes through kube-apiserver to the kubelet's endpoint.
 */
import { existsSync } from 'node:fs';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';
import { startKubelet, type Kubelet } from '../../src/hollow-node/start.js';
import { waitFor } from '../../src/process/wait-for.js';
import { WAIT } from '../../src/vitest.js';
import { claimPod, fileOnNode, hostPathPod, provisionOnFirstConsumer, waitForGone, waitForPhase } from './helpers.js';

describe.skipIf(!process.env.KUBEBUILDER_ASSETS)('startKubelet on a real control plane', () => {
  let cp: ControlPlane;
  let kubelet: Kubelet;
  let root: string;
  const errors: string[] = [];

  beforeAll(async () => {
    cp = await startControlPlane();
    kubelet = await startKubelet({
      kubeConfig: cp.kubeConfig,
      nodes: [{ name: 'kprov-node-1' }],
      leaseDurationSeconds: 8,
      onError: (err, where) => errors.push(`${where}: ${String(err)}`),
    });
    root = kubelet.nodes[0]?.root ?? '';
  }, 120_000);
  afterAll(async () => {
    await kubelet?.stop();
    await cp?.stop();
    expect(existsSync(root)).toBe(false);
  });

  it('registers a node the lifecycle controller finds Ready, untainted, with a renewed Lease', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    const node = await core.readNode({ name: 'kprov-node-1' });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
    });
    expect(node.spec?.taints ?? []).toEqual([]);
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(kubelet.logPort);
    const leases = cp.kubeConfig.makeApiClient(CoordinationV1Api);
    const first = await leases.readNamespacedLease({ namespace: 'kube-node-lease', name: 'kprov-node-1' });
    await waitFor(
      'the Lease renewed',
      async () => {
        const lease = await leases.readNamespacedLease({ namespace: 'kube-node-lease', name: 'kprov-node-1' });
        return String(lease.spec?.renewTime) !== String(first.spec?.renewTime) ? true : undefined;
      },
      { timeoutMs: WAIT.timeout },
    );
  });

  it('runs a pod the real scheduler placed, with a hostPath volume and the service account volume, to Succeeded', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    const script = 'echo "ns=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)" > /data/sa.txt';
    await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('writer', script) });
    const pod = await waitForPhase(cp.kubeConfig, 'writer', 'Succeeded');
    expect(pod.spec?.nodeName).toBe('kprov-node-1');
    expect(pod.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-'))).toBe(true);
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    expect(await fileOnNode(root, 'var/kprov-test/sa.txt')).toBe('ns=default\n');
  });

  it('runs the pod of a WaitForFirstConsumer claim once the PV controller has bound it', async () => {
    const node = await provisionOnFirstConsumer(cp.kubeConfig, {
      className: 'wffc',
      claim: 'data',
      provisioner: 'test.kprov.io/tiny',
      pod: claimPod('consumer', 'data', 'echo stored > /data/file'),
    });
    expect(node).toBe('kprov-node-1');
    await waitForPhase(cp.kubeConfig, 'consumer', 'Succeeded', 30_000);
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    expect((await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' })).status?.phase).toBe(
      'Bound',
    );
    expect(await fileOnNode(root, 'pvs/data/file')).toBe('stored\n');
  });

  it('serves pods/log through kube-apiserver, tailLines included', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: hostPathPod('talker', 'echo one; echo two; echo three'),
    });
    await waitForPhase(cp.kubeConfig, 'talker', 'Succeeded');
    expect(await core.readNamespacedPodLog({ namespace: 'default', name: 'talker' })).toBe('one\ntwo\nthree\n');
    expect(
      await core.readNamespacedPodLog({ namespace: 'default', name: 'talker', container: 'c', tailLines: 1 }),
    ).toBe('three\n');
    const previous = await core
      .readNamespacedPodLog({ namespace: 'default', name: 'talker', previous: true })
      .catch((e: unknown) => e);
    expect(previous).toMatchObject({ code: 400 });
    expect(String((previous as { body?: unknown }).body)).toContain(
      'previous terminated container \\"c\\" in pod \\"talker\\" not found',
    );
  });

  it('deletes a running pod for good once its processes are gone (no Terminating forever)', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('sleeper', 'exec sleep 600') });
    await waitForPhase(cp.kubeConfig, 'sleeper', 'Running');
    // The default grace period (30 s) is capped at 2 s by the kubelet; sleep dies of SIGTERM at once anyway.
    await core.deleteNamespacedPod({ namespace: 'default', name: 'sleeper' });
    await waitForGone(cp.kubeConfig, 'sleeper', 10_000);
  });

  it('deletes a finished pod for good', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'writer' });
    await waitForGone(cp.kubeConfig, 'writer', 10_000);
  });

  it('reported no background errors', () => {
    expect(errors).toEqual([]);
  });
});
