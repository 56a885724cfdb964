/**
 * Capacity budgets on both tiers (the testkit's scheduler, or the real kube-scheduler and kube-controller-manager):
 * three nodes whose paths declare different capacities; a full node hands its claim back to the scheduler, which
 * places it elsewhere; a claim larger than every path fails; the budget is rebuilt from the PVs after a restart;
 * the status report and the path metrics show the same numbers.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { prometheusSink } from '@kprov/provisioner-lib/prometheus';
import { ANN_SELECTED_NODE as SELECTED_NODE } from '@kprov/provisioner-lib';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import { Registry } from 'prom-client';
import { expect, it, vi } from 'vitest';
import { runStatus } from '../../src/capacity/status-command.js';
import {
  claim,
  type Env,
  eventsFor,
  getClaim,
  getVolume,
  NAMESPACE,
  perTest,
  provisioningFailure,
  storageClass,
  WAIT,
  waitBound,
} from '../provisioner/helpers.js';

/** node-1: 1Gi, node-2: 4Gi, node-3: 2Gi. */
const CONFIG = {
  nodePathMap: [
    { node: 'node-1', paths: [{ path: '/data/small', capacity: '1Gi' }] },
    { node: 'node-2', paths: [{ path: '/data/large', capacity: '4Gi' }] },
    { node: 'node-3', paths: [{ path: '/data/large', capacity: '2Gi' }] },
  ],
};
const NODES = [{ name: 'node-1' }, { name: 'node-2' }, { name: 'node-3' }];

/** A claim of `size`, already given a node (as the scheduler gives one, knowing nothing of the budgets). */
function claimOn(name: string, size: string, node?: string): V1PersistentVolumeClaim {
  const c = claim(name, 'local-path', { resources: { requests: { storage: size } } });
  if (node !== undefined) c.metadata!.annotations = { [SELECTED_NODE]: node };
  return c;
}

/** A pod using the claim that keeps running (so that its node counts it), pinned to `node` when given. */
function runningPod(name: string, claimName: string, node?: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      ...(node === undefined ? {} : { nodeSelector: { 'kubernetes.io/hostname': node } }),
      containers: [
        {
          name: 'app',
          image: 'busybox',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'sleep 3600'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}

/** The node a PV's node affinity names. */
async function nodeOfClaim(e: Env, name: string): Promise<string> {
  const pvName = await waitBound(e, name);
  const pv = await getVolume(e, pvName);
  return pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values?.[0] ?? '';
}

/** Fills node-1 with 600Mi and 300Mi volumes whose pods keep running there. */
async function fillNode1(e: Env): Promise<void> {
  await e.storage.createStorageClass({ body: storageClass() });
  for (const [name, size] of [
    ['fill-a', '600Mi'],
    ['fill-b', '300Mi'],
  ] as const) {
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claimOn(name, size) });
    await e.core.createNamespacedPod({ namespace: 'default', body: runningPod(`pod-${name}`, name, 'node-1') });
    expect(await nodeOfClaim(e, name)).toBe('node-1');
  }
}

const { env } = perTest();

describeTiers(
  'capacity budgets',
  () => {
    it('hands a claim that does not fit back to the scheduler, which places it on another node', async () => {
      const registry = new Registry();
      const e = await env({ nodes: NODES, config: CONFIG, capacity: { metrics: prometheusSink(registry) } });
      await fillNode1(e);

      // node-1 has 124Mi left: a 512Mi claim for which node-1 was selected goes elsewhere.
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claimOn('next', '512Mi', 'node-1'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: runningPod('pod-next', 'next') });
      const message = await provisioningFailure(e, 'next');
      expect(message).toContain('not enough space on node node-1 for claim default/next (requests 512Mi)');
      expect(message).toContain('/data/small has 124Mi free (capacity 1Gi, 900Mi allocated to 2 volumes)');
      const node = await nodeOfClaim(e, 'next');
      expect(['node-2', 'node-3']).toContain(node);
      await vi.waitFor(async () => expect((await e.read.pod('pod-next'))?.spec?.nodeName).toBe(node), WAIT);
      const pv = (await getVolume(e, (await getClaim(e, 'next'))!.spec!.volumeName!))!;
      expect(pv.spec?.hostPath?.path).toMatch(/^\/data\/large\/pvc-/);

      // The metrics show the same totals.
      const text = await registry.metrics();
      expect(text).toContain(
        `local_path_provisioner_path_allocated_bytes{node="node-1",path="/data/small"} ${900 * 2 ** 20}`,
      );
      expect(text).toContain(
        `local_path_provisioner_path_free_bytes{node="node-1",path="/data/small"} ${124 * 2 ** 20}`,
      );
      expect(text).toContain(`local_path_provisioner_path_capacity_bytes{node="${node}",path="/data/large"}`);
      expect(text).toContain(`local_path_provisioner_path_volumes{node="${node}",path="/data/large"} 1`);

      // And so does the status command, from the API alone.
      const kubeconfig = path.join(tmpdir(), `kubeconfig-${process.pid}-${Date.now()}.yaml`);
      writeFileSync(kubeconfig, e.cluster.kubeConfig.exportConfig());
      let out = '';
      const code = await runStatus(
        ['--kubeconfig', kubeconfig, '--namespace', NAMESPACE],
        {},
        {
          stdout: { write: (t: string) => (out += t) },
          stderr: { write: (t: string) => (out += t) },
        },
      );
      expect(code).toBe(0);
      const lines = out
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/));
      expect(lines[0]).toEqual(['NODE', 'PATH', 'CAPACITY', 'ALLOCATED', 'FREE', 'VOLUMES']);
      expect(lines).toContainEqual(['node-1', '/data/small', '1Gi', '900Mi', '124Mi', '2']);
      expect(lines).toContainEqual([
        node,
        '/data/large',
        node === 'node-2' ? '4Gi' : '2Gi',
        '512Mi',
        node === 'node-2' ? '3.5Gi' : '1.5Gi',
        '1',
      ]);
    });

    it('fails a claim larger than every path with an event, and creates nothing', async () => {
      const e = await env({ nodes: NODES, config: CONFIG, capacity: {} });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claimOn('huge', '5Gi', 'node-2'),
      });
      const message = await provisioningFailure(e, 'huge');
      expect(message).toContain(
        'the claim default/huge requests 5Gi, more than any path of StorageClass "local-path" can hold (the largest capacity is 4Gi)',
      );
      expect((await getClaim(e, 'huge'))?.metadata?.annotations?.[SELECTED_NODE]).toBe('node-2');
      expect(await e.read.volumes()).toEqual([]);
      expect(e.helperPods.size).toBe(0);
    });

    it('rebuilds the budgets from the PVs after a restart', async () => {
      const e = await env({ nodes: NODES, config: CONFIG, capacity: {} });
      await fillNode1(e);
      await e.stopController();
      e.startController();
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claimOn('after', '200Mi', 'node-1'),
      });
      const message = await provisioningFailure(e, 'after');
      expect(message).toContain('/data/small has 124Mi free (capacity 1Gi, 900Mi allocated to 2 volumes)');
      // Handed back: the annotation is gone, and with no pod nothing selects a node again.
      await vi.waitFor(
        async () => expect((await getClaim(e, 'after'))?.metadata?.annotations?.[SELECTED_NODE]).toBeUndefined(),
        WAIT,
      );
      const events = await eventsFor(e, 'PersistentVolumeClaim', 'after', 'ProvisioningFailed');
      expect(events.every((ev) => ev.type === 'Warning')).toBe(true);
    });

    it('provisions many claims at once without over-committing a path', async () => {
      const e = await env({ nodes: NODES, config: CONFIG, capacity: {} });
      await e.storage.createStorageClass({ body: storageClass() });
      // Eight 200Mi claims on node-1 (1Gi) at once: five fit, three are handed back.
      const names = Array.from({ length: 8 }, (_, i) => `many-${i}`);
      await Promise.all(
        names.map((name) =>
          e.core.createNamespacedPersistentVolumeClaim({
            namespace: 'default',
            body: claimOn(name, '200Mi', 'node-1'),
          }),
        ),
      );
      await vi.waitFor(async () => {
        const claims = await Promise.all(names.map((n) => getClaim(e, n)));
        const bound = claims.filter((c) => c?.status?.phase === 'Bound').length;
        const handedBack = claims.filter((c) => c?.metadata?.annotations?.[SELECTED_NODE] === undefined).length;
        expect([bound, handedBack]).toEqual([5, 3]);
      }, WAIT);
    });
  },
  { tiers: ALL_TIERS },
);
