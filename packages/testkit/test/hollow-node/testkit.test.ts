/**
 * startKubelet as a client of the testkit's own API server (its in-process kubelet off): the same kubelet loop, now
 * through list+watch caches and REST writes. The node is registered, kept alive with a Lease, gets pods from the
 * testkit's scheduler, runs a WaitForFirstConsumer claim's pod, deletes pods for good and serves their logs on its
 * HTTPS endpoint with the kubelet's answers.
 */
import { request } from 'node:https';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubelet, type Kubelet } from '../../src/hollow-node/start.js';
import { waitFor } from '../../src/process/wait-for.js';
import { registerNode } from '../../src/sim/nodes.js';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { WAIT } from '../../src/vitest.js';
import { claimPod, fileOnNode, hostPathPod, provisionOnFirstConsumer, waitForGone, waitForPhase } from './helpers.js';

let kit: Testkit;
let kubelet: Kubelet;
let root: string;
const errors: string[] = [];

beforeAll(async () => {
  kit = await startApiServer({ kubelet: false, nodes: [] });
  kubelet = await startKubelet({
    kubeConfig: kit.kubeConfig,
    nodes: [{ name: 'sim-1', labels: { 'topology.kubernetes.io/zone': 'z1' } }],
    leaseDurationSeconds: 2,
    onError: (err, where) => errors.push(`${where}: ${String(err)}`),
  });
  root = kubelet.nodes[0]?.root ?? '';
});
afterAll(async () => {
  await kubelet?.stop();
  await kit?.stop();
  expect(existsSync(root)).toBe(false);
});

/** A GET to the kubelet's log endpoint, as kube-apiserver makes it. */
function kubeletGet(p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: kubelet.logPort, path: p, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('startKubelet on the testkit', () => {
  it('registers the node Ready and schedulable, and renews its Lease', async () => {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    const node = await core.readNode({ name: 'sim-1' });
    expect(node.metadata?.labels).toMatchObject({
      'kubernetes.io/hostname': 'sim-1',
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/zone': 'z1',
    });
    expect(node.status?.addresses).toEqual([{ type: 'InternalIP', address: '127.0.0.1' }]);
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(kubelet.logPort);
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.spec?.taints ?? []).toEqual([]);
    const leases = kit.kubeConfig.makeApiClient(CoordinationV1Api);
    const first = await leases.readNamespacedLease({ namespace: 'kube-node-lease', name: 'sim-1' });
    expect(first.spec).toMatchObject({ holderIdentity: 'sim-1', leaseDurationSeconds: 2 });
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: 'sim-1',
      uid: node.metadata?.uid,
    });
    // Renewed every quarter of its duration: 500 ms.
    await waitFor(
      'the Lease renewed',
      async () => {
        const lease = await leases.readNamespacedLease({ namespace: 'kube-node-lease', name: 'sim-1' });
        return String(lease.spec?.renewTime) !== String(first.spec?.renewTime) ? true : undefined;
      },
      { timeoutMs: WAIT.timeout },
    );
  });

  it('takes over a Node that exists already: labels merged, its status written', async () => {
    registerNode(kit.store, { name: 'existing', labels: { kept: 'yes' }, capacity: { cpu: '1' } });
    const second = await startKubelet({
      kubeConfig: kit.kubeConfig,
      nodes: [{ name: 'existing', labels: { added: 'yes' } }],
    });
    try {
      const node = await kit.kubeConfig.makeApiClient(CoreV1Api).readNode({ name: 'existing' });
      expect(node.metadata?.labels).toMatchObject({ kept: 'yes', added: 'yes', 'kubernetes.io/hostname': 'existing' });
      expect(node.status?.addresses).toEqual([{ type: 'InternalIP', address: '127.0.0.1' }]);
      expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(second.logPort);
      expect(node.status?.capacity?.cpu).toBe('4');
    } finally {
      await second.stop();
      // The Node stays after stop, as a kubelet leaves it: gone here, so that the scheduler does not pick it.
      kit.store.delete('nodes', undefined, 'existing');
    }
  });

  it('fails a start-up that takes too long, naming what it waited for and why', async () => {
    const remove = kit.faults.add({ verb: 'list', resource: 'secrets', action: { type: 'error', code: 403 } });
    try {
      await expect(
        startKubelet({ kubeConfig: kit.kubeConfig, nodes: [{ name: 'denied' }], startTimeoutMs: 1500 }),
      ).rejects.toThrow(
        /^timed out after \d+ ms waiting for the first lists of pods, claims, volumes, ConfigMaps and Secrets \(last error: HTTP-Code: 403\nMessage: GET \/api\/v1\/secrets: /,
      );
    } finally {
      remove();
      kit.store.delete('nodes', undefined, 'denied');
    }
  });

  it('runs a scheduled pod with a hostPath volume to Succeeded, its file under the node root', async () => {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: hostPathPod('writer', 'echo "hello from $HOSTNAME" > /data/writer.txt'),
    });
    const pod = await waitForPhase(kit.kubeConfig, 'writer', 'Succeeded');
    expect(pod.spec?.nodeName).toBe('sim-1');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(await fileOnNode(root, 'var/kprov-test/writer.txt')).toBe('hello from writer\n');
  });

  it('runs the pod of a WaitForFirstConsumer claim once a volume is provisioned for the selected node', async () => {
    const node = await provisionOnFirstConsumer(kit.kubeConfig, {
      className: 'wffc',
      claim: 'data',
      provisioner: 'test.kprov.io/tiny',
      pod: claimPod('consumer', 'data', 'echo stored > /data/file'),
    });
    expect(node).toBe('sim-1');
    await waitForPhase(kit.kubeConfig, 'consumer', 'Succeeded');
    expect(await fileOnNode(root, 'pvs/data/file')).toBe('stored\n');
  });

  it('deletes a running pod for good and removes its directory', async () => {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('sleeper', 'echo up; exec sleep 600') });
    const pod = await waitForPhase(kit.kubeConfig, 'sleeper', 'Running');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'sleeper' });
    await waitForGone(kit.kubeConfig, 'sleeper');
    const dir = path.join(root, 'var/lib/kubelet/pods', pod.metadata?.uid ?? '');
    await waitFor(`${dir} removed`, () => (existsSync(dir) ? undefined : true), { timeoutMs: WAIT.timeout });
  });

  it('serves logs on its endpoint with the kubelet answers', async () => {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: hostPathPod('talker', 'echo one; echo two; echo three'),
    });
    await waitForPhase(kit.kubeConfig, 'talker', 'Succeeded');
    expect(await kubeletGet('/containerLogs/default/talker/c')).toEqual({ status: 200, body: 'one\ntwo\nthree\n' });
    expect(await kubeletGet('/containerLogs/default/talker/c?tailLines=2')).toEqual({
      status: 200,
      body: 'two\nthree\n',
    });
    expect(await kubeletGet('/containerLogs/default/talker/c?limitBytes=5')).toEqual({ status: 200, body: 'one\nt' });
    expect(await kubeletGet('/containerLogs/default/talker/c?previous=true')).toEqual({
      status: 400,
      body: 'previous terminated container "c" in pod "talker" not found',
    });
    expect(await kubeletGet('/containerLogs/default/talker/nope')).toEqual({
      status: 404,
      body: 'container "nope" not found in pod "talker"',
    });
    expect(await kubeletGet('/containerLogs/default/ghost/c')).toEqual({
      status: 404,
      body: 'pod "ghost" does not exist',
    });
  });

  it('follows a running container until it ends', async () => {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: hostPathPod('ticker', 'echo a; sleep 0.3; echo b; sleep 0.3; echo c'),
    });
    await waitForPhase(kit.kubeConfig, 'ticker', 'Running');
    expect(await kubeletGet('/containerLogs/default/ticker/c?follow=true')).toEqual({ status: 200, body: 'a\nb\nc\n' });
    await waitForPhase(kit.kubeConfig, 'ticker', 'Succeeded');
  });

  it('reported no background errors', () => {
    expect(errors).toEqual([]);
  });
});

describe('startKubelet on the testkit, when the API server misbehaves', () => {
  it('retries a status write answered 409 Conflict or 500, through its queue', async () => {
    errors.length = 0;
    const removeConflicts = kit.faults.add({
      verb: 'update',
      resource: 'pods',
      subresource: 'status',
      action: { type: 'error', code: 409 },
      count: 3,
    });
    const removeErrors = kit.faults.add({
      verb: 'update',
      resource: 'pods',
      subresource: 'status',
      action: { type: 'error', code: 500 },
      count: 1,
    });
    try {
      const core = kit.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('contested', 'echo fine') });
      const pod = await waitForPhase(kit.kubeConfig, 'contested', 'Succeeded');
      expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
      const contested = errors.filter((e) => e.startsWith('pod default/contested: '));
      // The errors whole in the failure's message: a code alone does not say which write failed, or why.
      expect(
        contested.map((e) => /HTTP-Code: (\d+)/.exec(e)?.[1]),
        contested.join('\n'),
      ).toEqual(['409', '409', '409', '500']);
    } finally {
      removeConflicts();
      removeErrors();
    }
  });

  it('resumes cut watches and relists after expired ones', async () => {
    errors.length = 0;
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    kit.server.dropWatches();
    await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('after-drop', 'echo one') });
    await waitForPhase(kit.kubeConfig, 'after-drop', 'Succeeded');
    kit.server.expireWatches();
    await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('after-expiry', 'echo two') });
    await waitForPhase(kit.kubeConfig, 'after-expiry', 'Succeeded');
    // A pod deleted while the watches were down is noticed by the relist.
    kit.server.expireWatches();
    await core.deleteNamespacedPod({ namespace: 'default', name: 'after-drop' });
    await waitForGone(kit.kubeConfig, 'after-drop');
  });
});
