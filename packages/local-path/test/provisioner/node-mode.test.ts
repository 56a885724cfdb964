/**
 * Node mode on both tiers: one provisioner per simulated node (as a DaemonSet runs them), all under the same
 * provisioner name without leader election, each making and removing the directories of its own node's claims
 * in-process on that node's disk.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { CoreV1Api, StorageV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { ProvisionController } from '@kprov/provisioner-lib';
import { expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { PROVISIONED_ON_ANNOTATION, SELECTED_NODE_ANNOTATION } from '../../src/volume/annotations.js';
import { NODE_MODE_NEEDS_SELECTED_NODE } from '../../src/executor/node/scope.js';
import { LocalPathProvisioner } from '../../src/provisioner/provisioner.js';
import {
  BASE_PATH,
  claim,
  configJson,
  eventsFor,
  getVolume,
  NAMESPACE,
  PROVISIONER_NAME,
  provisioningFailure,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';
import { nodeModeProvisioner } from '../node-mode/env.js';

const NODES = ['node-1', 'node-2', 'node-3'];

interface NodeModeEnv {
  cluster: Cluster;
  read: ObjectReader;
  core: CoreV1Api;
  storage: StorageV1Api;
  /** The provisioner of each node. */
  provisioners: Map<string, LocalPathProvisioner>;
  /** `warn(pv, message, reason)` calls of every provisioner, with the node of the provisioner. */
  warnings: { node: string; pv: string; message: string; reason: string }[];
  onNode: (node: string, nodePath: string) => string;
}

/** A cluster of three nodes and one node-mode provisioner per node, each seeing its node's disk at that node's root. */
async function nodeModeEnv(): Promise<NodeModeEnv> {
  const tier = currentTier();
  const cluster = await tier.start({ nodes: NODES.map((name) => ({ name })), namespaces: [NAMESPACE] });
  const kc = cluster.kubeConfig;
  const config = parseConfig(configJson());
  const provisioners = new Map<string, LocalPathProvisioner>();
  const warnings: NodeModeEnv['warnings'] = [];
  for (const node of cluster.nodes) {
    const provisioner = nodeModeProvisioner(kc, () => config, node, {
      warn: (pv, message, reason) => warnings.push({ node: node.name, pv: pv.metadata?.name ?? '', message, reason }),
    });
    provisioners.set(node.name, provisioner);
    const controller = new ProvisionController({
      kubeConfig: kc,
      provisionerName: PROVISIONER_NAME,
      provisioner,
      leaderElection: false,
    });
    const abort = new AbortController();
    const running = controller.run(abort.signal);
    tier.defer(async () => {
      abort.abort();
      await running.catch(() => undefined);
    });
  }
  return {
    cluster,
    read: new ObjectReader(kc),
    core: kc.makeApiClient(CoreV1Api),
    storage: kc.makeApiClient(StorageV1Api),
    provisioners,
    warnings,
    onNode: (node, nodePath) => cluster.onNode(node, nodePath),
  };
}

/** A claim `data-<node>` and a pod on that node writing into it. */
async function claimOn(e: NodeModeEnv, node: string): Promise<void> {
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(`data-${node}`) });
  await e.core.createNamespacedPod({
    namespace: 'default',
    body: volumeTestPod(`data-${node}`, `writer-${node}`, { 'kubernetes.io/hostname': node }),
  });
}

const dirOf = (pvName: string, node: string): string => `${BASE_PATH}/${pvName}_default_data-${node}`;

describeTiers('LocalPathProvisioner in node mode', () => {
  it("gives each node's pods volumes on their own node's disk, and deleting a claim removes only its directory", async () => {
    const e = await nodeModeEnv();
    await e.storage.createStorageClass({ body: storageClass() });
    for (const node of NODES) await claimOn(e, node);

    const pvs = new Map<string, string>();
    for (const node of NODES) {
      const pvName = await waitBound(e, `data-${node}`);
      pvs.set(node, pvName);
      await waitSucceeded(e, `writer-${node}`);
      const pv = (await getVolume(e, pvName))!;
      expect(pv.metadata?.annotations).toMatchObject({
        [PROVISIONED_ON_ANNOTATION]: node,
        [SELECTED_NODE_ANNOTATION]: node,
        'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME,
      });
      expect(pv.spec?.hostPath?.path).toBe(dirOf(pvName, node));
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([node]);
      const dir = e.onNode(node, dirOf(pvName, node));
      expect(statSync(dir).mode & 0o777).toBe(0o777);
      expect(existsSync(`${dir}/test`)).toBe(true);
      // Only this node's disk has it.
      for (const other of NODES.filter((n) => n !== node))
        expect(existsSync(e.onNode(other, dirOf(pvName, node)))).toBe(false);
    }
    // No helper pod ran.
    expect(await e.read.pods(NAMESPACE)).toEqual([]);

    await e.core.deleteNamespacedPod({ name: 'writer-node-2', namespace: 'default' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-node-2', namespace: 'default' });
    const gone = pvs.get('node-2')!;
    await vi.waitFor(async () => {
      expect(await getVolume(e, gone)).toBeUndefined();
      expect(existsSync(e.onNode('node-2', dirOf(gone, 'node-2')))).toBe(false);
    }, WAIT);
    expect(existsSync(e.onNode('node-2', BASE_PATH))).toBe(true);
    for (const node of ['node-1', 'node-3']) {
      expect(existsSync(e.onNode(node, dirOf(pvs.get(node)!, node)))).toBe(true);
      expect(await getVolume(e, pvs.get(node)!)).toBeDefined();
    }
  });

  it('leaves a PV of another node alone: neither its directory nor the PV object is deleted', async () => {
    const e = await nodeModeEnv();
    await e.storage.createStorageClass({ body: storageClass() });
    await claimOn(e, 'node-1');
    const pvName = await waitBound(e, 'data-node-1');
    await waitSucceeded(e, 'writer-node-1');
    const pv = (await getVolume(e, pvName))!;
    const dir = e.onNode('node-1', dirOf(pvName, 'node-1'));

    // Asked directly, node-2's provisioner refuses.
    const released: V1PersistentVolume = { ...pv, status: { phase: 'Released' } };
    await expect(e.provisioners.get('node-2')!.delete(released, new AbortController().signal)).rejects.toThrow(
      `ignored because volume ${pvName} was provisioned on node node-1, not on node-2`,
    );
    expect(existsSync(dir)).toBe(true);

    // A PV whose identity annotation was edited to another node: its own node's provisioner ignores it, and the
    // named node's provisioner refuses it too, as its node affinity names node-1.
    const current = (await getVolume(e, pvName))!;
    current.metadata!.annotations![PROVISIONED_ON_ANNOTATION] = 'node-3';
    await e.core.replacePersistentVolume({ name: pvName, body: current });
    await e.core.deleteNamespacedPod({ name: 'writer-node-1', namespace: 'default' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-node-1', namespace: 'default' });
    await vi.waitFor(async () => expect((await getVolume(e, pvName))?.status?.phase).toBe('Released'), WAIT);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await getVolume(e, pvName)).toBeDefined();
    expect(existsSync(dir)).toBe(true);
    await expect(
      e.provisioners.get('node-3')!.delete((await getVolume(e, pvName))!, new AbortController().signal),
    ).rejects.toThrow(`ignored because the node affinity of volume ${pvName} names node node-1, not node-3`);
    expect(existsSync(dir)).toBe(true);
  });

  it("refuses to remove a forged PV's path: the base path holding a live volume", async () => {
    const e = await nodeModeEnv();
    await e.storage.createStorageClass({ body: storageClass() });
    await claimOn(e, 'node-1');
    const pvName = await waitBound(e, 'data-node-1');
    await waitSucceeded(e, 'writer-node-1');
    const live = e.onNode('node-1', dirOf(pvName, 'node-1'));

    await e.core.createPersistentVolume({
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: {
          name: 'forged',
          annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME, [PROVISIONED_ON_ANNOTATION]: 'node-1' },
        },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: 'local-path',
          hostPath: { path: BASE_PATH, type: 'DirectoryOrCreate' },
          claimRef: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace: 'default',
            name: 'none',
            uid: randomUUID(),
          },
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
    await vi.waitFor(
      () =>
        expect(e.warnings).toContainEqual({
          node: 'node-1',
          pv: 'forged',
          reason: 'VolumeDeletionRefused',
          message: expect.stringContaining(
            `refusing to remove ${JSON.stringify(BASE_PATH)} for volume forged`,
          ) as unknown,
        }),
      WAIT,
    );
    expect(e.warnings.every((w) => w.node === 'node-1')).toBe(true);
    expect(await getVolume(e, 'forged')).toBeDefined();
    expect(readFileSync(`${live}/test`, 'utf8')).toBe('local-path-test\n');
  });

  it('does not follow a volume directory replaced by a symbolic link: the target is kept, the PV too', async () => {
    const e = await nodeModeEnv();
    await e.storage.createStorageClass({ body: storageClass() });
    await claimOn(e, 'node-1');
    const pvName = await waitBound(e, 'data-node-1');
    await waitSucceeded(e, 'writer-node-1');
    const dir = e.onNode('node-1', dirOf(pvName, 'node-1'));
    const precious = e.onNode('node-1', '/precious');
    mkdirSync(precious);
    writeFileSync(`${precious}/file`, 'keep');
    renameSync(dir, `${dir}.moved`);
    symlinkSync(precious, dir);

    await e.core.deleteNamespacedPod({ name: 'writer-node-1', namespace: 'default' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-node-1', namespace: 'default' });
    const message = await vi.waitFor(async () => {
      const [event] = await eventsFor(e, 'PersistentVolume', pvName, 'VolumeFailedDelete');
      if (event === undefined) throw new Error('no VolumeFailedDelete event yet');
      return event.message ?? '';
    }, WAIT);
    expect(message).toContain('refusing');
    expect(readFileSync(`${precious}/file`, 'utf8')).toBe('keep');
    expect(await getVolume(e, pvName)).toBeDefined();
  });

  it('refuses a claim of an Immediate class with a Warning event, creating nothing', async () => {
    const e = await nodeModeEnv();
    await e.storage.createStorageClass({
      body: storageClass('local-path-immediate', { volumeBindingMode: 'Immediate' }),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claim('immediate', 'local-path-immediate'),
    });
    const message = await provisioningFailure(e, 'immediate');
    expect(message).toContain(NODE_MODE_NEEDS_SELECTED_NODE);
    expect(message).toContain('WaitForFirstConsumer');
    const events = await eventsFor(e, 'PersistentVolumeClaim', 'immediate', 'ProvisioningFailed');
    expect(events.every((ev) => ev.type === 'Warning')).toBe(true);
    expect((await e.read.claim('immediate'))?.status?.phase).toBe('Pending');
    expect(await e.read.volumes()).toEqual([]);
    for (const node of NODES) expect(existsSync(e.onNode(node, BASE_PATH))).toBe(false);
  });
});
