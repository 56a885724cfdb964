/**
 * Node mode installed as docs/local-path.md tells users, on two real nodes: `kubectl apply -f
 * deploy/local-path-storage-node-mode.yaml`, and the chart with `helm install ... --set mode=node`. The DaemonSet's
 * pods get Ready on both nodes through their probes, on a tainted node too (a node kept for some workloads still gets
 * their volumes made); a claim used by a pod on each node gets its directory on that node's disk, made by that node's
 * provisioner (no helper pod is ever created) and a PV pinned to that node; deleting the claim removes the directory
 * and the PV; and a provisioner pod deleted as `kubectl delete pod` does stops with exit code 0 and no error in its
 * last log lines, holding no Lease (node mode elects no leader).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ObjectReader, recordWatch, type Cluster, type UserTools } from '@kprov/testkit';
import type { TierContext } from '@kprov/testkit/vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { PROVISIONED_ON_ANNOTATION } from '../../src/volume/annotations.js';
import {
  ARCHIVE,
  deleteClaim,
  describeWithImage,
  expectGracefulStop,
  PACKAGE,
  podsByNode,
  ROLLOUT_TIMEOUT,
  toolsFor,
  useClaimOn,
} from './helpers.js';

const NAMESPACE = 'local-path-storage';
const BASE_PATH = '/opt/local-path-provisioner';
const NODES = ['node-1', 'node-2'];
/** A taint of node-2, as an administrator keeps a node for some workloads. */
const TAINT = { key: 'example.com/dedicated', value: 'storage', effect: 'NoSchedule' };

/** How each install is done (the docs' command) and what it names. */
interface Install {
  run: (tools: UserTools) => Promise<unknown>;
  /** The DaemonSet's pods. */
  selector: string;
  /** The StorageClass's provisioner. */
  provisioner: string;
}

const INSTALLS: [string, Install][] = [
  [
    'kubectl apply -f deploy/local-path-storage-node-mode.yaml',
    {
      run: ({ kubectl }) => kubectl('apply', '-f', path.join(PACKAGE, 'deploy/local-path-storage-node-mode.yaml')),
      selector: 'app=local-path-provisioner',
      provisioner: 'rancher.io/local-path',
    },
  ],
  [
    'helm install --set mode=node',
    {
      run: ({ helm }) =>
        helm(
          'install',
          'local-path-provisioner',
          path.join(PACKAGE, 'deploy/chart/local-path-provisioner'),
          '--namespace',
          NAMESPACE,
          '--create-namespace',
          '--set',
          'mode=node',
        ),
      selector: 'app.kubernetes.io/name=local-path-provisioner',
      provisioner: 'cluster.local/local-path-provisioner',
    },
  ],
];

/** Installs, and waits for the DaemonSet's pods to be Ready on every node; resolves with them by node. */
async function installed(cluster: Cluster, tools: UserTools, install: Install): Promise<Map<string, V1Pod>> {
  await install.run(tools);
  await tools.kubectl(
    'rollout',
    'status',
    `--namespace=${NAMESPACE}`,
    'daemonset/local-path-provisioner',
    `--timeout=${ROLLOUT_TIMEOUT}`,
  );
  const pods = await podsByNode(cluster, NAMESPACE, install.selector);
  expect([...pods.keys()].sort()).toEqual(NODES);
  for (const pod of pods.values()) {
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, pod.metadata?.name).toBe('True');
    expect(pod.status?.containerStatuses?.[0]?.restartCount, pod.metadata?.name).toBe(0);
  }
  return pods;
}

async function walkThrough(tier: TierContext, install: Install): Promise<void> {
  const cluster = await tier.start({ nodes: NODES.map((name) => ({ name })), images: [ARCHIVE] });
  const tools = await toolsFor(cluster);
  const read = new ObjectReader(cluster.kubeConfig);
  // node-2 is kept for the workloads that tolerate its taint: their volumes are made there too.
  await tools.kubectl('taint', 'nodes', 'node-2', `${TAINT.key}=${TAINT.value}:${TAINT.effect}`);
  const pods = await installed(cluster, tools, install);
  expect((await tools.kubectl('get', 'storageclass', 'local-path', '-o', 'jsonpath={.provisioner}')).trim()).toBe(
    install.provisioner,
  );
  // Every pod of the namespace from now on: no helper pod may be among them.
  const podEvents = await recordWatch<V1Pod>(cluster.kubeConfig, `/api/v1/namespaces/${NAMESPACE}/pods`);
  tier.defer(() => podEvents.stop());

  const volumes = new Map<string, { pvName: string; dir: string }>();
  for (const node of NODES) {
    const name = `data-${node}`;
    const pvName = await useClaimOn(cluster, tools.kubectl, name, 'local-path', node, [
      { ...TAINT, operator: 'Equal' },
    ]);
    const pv = (await read.volume(pvName))!;
    const nodePath = `${BASE_PATH}/${pvName}_default_${name}`;
    expect(pv.metadata?.annotations).toMatchObject({
      'pv.kubernetes.io/provisioned-by': install.provisioner,
      [PROVISIONED_ON_ANNOTATION]: node,
    });
    expect(pv.spec).toMatchObject({
      hostPath: { path: nodePath, type: 'DirectoryOrCreate' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    });
    expect(readFileSync(cluster.onNode(node, `${nodePath}/test`), 'utf8')).toBe('local-path-test\n');
    // Made in the provisioner's container, with the mode of the stock setup script whatever its umask.
    expect(statSync(cluster.onNode(node, nodePath)).mode & 0o777).toBe(0o777);
    for (const other of NODES.filter((n) => n !== node))
      expect(existsSync(cluster.onNode(other, nodePath)), `${nodePath} on ${other}`).toBe(false);
    volumes.set(node, { pvName, dir: cluster.onNode(node, nodePath) });
  }

  for (const node of NODES) {
    const { pvName, dir } = volumes.get(node)!;
    await deleteClaim(tools.kubectl, `data-${node}`, pvName);
    expect(existsSync(dir), dir).toBe(false);
    expect(existsSync(cluster.onNode(node, BASE_PATH))).toBe(true);
  }
  const created = podEvents.events.filter((e) => e.type === 'ADDED').map((e) => e.object);
  expect(created.filter((p) => p.metadata?.ownerReferences?.[0]?.kind !== 'DaemonSet')).toEqual([]);

  const stopped = pods.get('node-1')!.metadata!.name!;
  await expectGracefulStop(cluster, NAMESPACE, stopped);
  expect(await read.leases(NAMESPACE)).toEqual([]);
}

describeWithImage('node mode installed as the docs say, on two real nodes', (tier) => {
  it.each(INSTALLS)(
    '%s: a provisioner Ready on each node makes and removes that node’s volumes itself',
    async (_, install) => {
      await walkThrough(tier, install);
    },
  );
});
