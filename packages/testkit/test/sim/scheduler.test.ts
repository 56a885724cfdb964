import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/store/store.js';
import { startPvBinder } from '../../src/sim/binder.js';
import { registerNode, setNodeReady } from '../../src/sim/nodes.js';
import type { Stoppable } from '../../src/sim/queue.js';
import { startScheduler } from '../../src/sim/scheduler.js';
import {
  type Loose,
  eventually,
  claim,
  conditionOf,
  get,
  pod,
  podWithClaim,
  settle,
  storageClass,
  volume,
} from './fixtures.js';

let store: ObjectStore;
let loops: Stoppable[];

beforeEach(() => {
  store = new ObjectStore();
  loops = [startScheduler(store), startPvBinder(store)];
});
afterEach(async () => {
  for (const l of loops) await l.stop();
});

const podOf = (name: string): Loose => get(store, 'pods', 'default', name);
const claimOf = (name: string): Loose => get(store, 'persistentvolumeclaims', 'default', name);
const scheduled = (name: string): Loose => conditionOf(podOf(name), 'PodScheduled');

/** What an external provisioner does: a PV pre-bound to the claim, with the selected node's affinity. */
function provision(claimName: string, node: string): void {
  const c = store.mustGet('persistentvolumeclaims', 'default', claimName);
  const spec = c.spec as { storageClassName: string };
  store.create(
    'persistentvolumes',
    volume(
      `pvc-${claimName}`,
      {
        storageClassName: spec.storageClassName,
        claimRef: {
          kind: 'PersistentVolumeClaim',
          apiVersion: 'v1',
          namespace: 'default',
          name: claimName,
          uid: c.metadata.uid,
        },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
            ],
          },
        },
      },
      { annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/local' } },
    ),
  );
}

describe('scheduler', () => {
  it('binds a pod without claims to the node with the fewest pods', async () => {
    registerNode(store, { name: 'node-a' });
    registerNode(store, { name: 'node-b' });
    store.create('pods', pod('first'));
    await eventually(() => expect(podOf('first').spec.nodeName).toBe('node-a'));
    store.create('pods', pod('second'));
    await eventually(() => expect(podOf('second').spec.nodeName).toBe('node-b'));
    expect(scheduled('second')).toMatchObject({ status: 'True' });
  });

  it('honours nodeSelector and required node affinity, and skips nodes that are not Ready', async () => {
    registerNode(store, { name: 'node-a', labels: { disk: 'ssd' } });
    registerNode(store, { name: 'node-b', labels: { disk: 'ssd', zone: 'z1' }, ready: false });
    registerNode(store, { name: 'node-c', labels: { disk: 'ssd', zone: 'z1' } });
    registerNode(store, { name: 'node-d', labels: { zone: 'z1' } });
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
        },
      },
    };
    store.create('pods', pod('p', {}, { nodeSelector: { disk: 'ssd' }, affinity }));
    await eventually(() => expect(podOf('p').spec.nodeName).toBe('node-c'));
  });

  it('reports an unschedulable pod like kube-scheduler, and schedules it when a node fits', async () => {
    registerNode(store, { name: 'node-a' });
    registerNode(store, { name: 'node-b', ready: false });
    registerNode(store, { name: 'node-c', unschedulable: true });
    store.create('pods', pod('p', {}, { nodeSelector: { disk: 'ssd' } }));
    await eventually(() =>
      expect(scheduled('p')).toMatchObject({
        status: 'False',
        reason: 'Unschedulable',
        message:
          "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      }),
    );
    expect(podOf('p').status.phase).toBe('Pending');
    registerNode(store, { name: 'node-d', labels: { disk: 'ssd' } });
    await eventually(() => expect(podOf('p').spec.nodeName).toBe('node-d'));
    setNodeReady(store, 'node-b', true);
    expect(get(store, 'nodes', undefined, 'node-b').spec.taints).toBeUndefined();
  });

  it('says when there are no nodes at all', async () => {
    store.create('pods', pod('p'));
    await eventually(() => expect(scheduled('p')?.message).toBe('no nodes available to schedule pods'));
  });

  it('reports a missing claim', async () => {
    registerNode(store, { name: 'node-a' });
    store.create('pods', podWithClaim('p', 'nope'));
    await eventually(() =>
      expect(scheduled('p')).toMatchObject({
        reason: 'Unschedulable',
        message:
          '0/1 nodes are available: persistentvolumeclaim "nope" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
      }),
    );
  });

  it('waits for unbound Immediate claims', async () => {
    registerNode(store, { name: 'node-a' });
    store.create('storage.k8s.io/storageclasses', storageClass('now', 'example.com/now'));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'now' }));
    store.create('pods', podWithClaim('p', 'data'));
    await eventually(() =>
      expect(scheduled('p')?.message).toContain('pod has unbound immediate PersistentVolumeClaims'),
    );
    provision('data', 'node-a');
    await eventually(() => expect(podOf('p').spec.nodeName).toBe('node-a'));
  });

  it('selects a node for WaitForFirstConsumer claims and binds the pod once they are bound', async () => {
    registerNode(store, { name: 'node-a', labels: { zone: 'z1' } });
    registerNode(store, { name: 'node-b', labels: { zone: 'z2' } });
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', 'example.com/local', {
        volumeBindingMode: 'WaitForFirstConsumer',
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['z2'] }] }],
      }),
    );
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'local' }));
    await eventually(() => expect(claimOf('data').status.phase).toBe('Pending'));
    expect(claimOf('data').metadata.annotations?.['volume.kubernetes.io/selected-node']).toBeUndefined();

    store.create('pods', podWithClaim('p', 'data'));
    await eventually(() => {
      const c = claimOf('data');
      expect(c.metadata.annotations['volume.kubernetes.io/selected-node']).toBe('node-b');
      expect(c.metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe('example.com/local');
    });
    await settle();
    expect(podOf('p').spec.nodeName).toBeUndefined();

    provision('data', 'node-b');
    await eventually(() => expect(podOf('p').spec.nodeName).toBe('node-b'));
    expect(claimOf('data').status.phase).toBe('Bound');
  });

  it('keeps a pod whose claim has another selected node off the other nodes', async () => {
    registerNode(store, { name: 'node-a' });
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', 'example.com/local', { volumeBindingMode: 'WaitForFirstConsumer' }),
    );
    store.create(
      'persistentvolumeclaims',
      claim('data', { storageClassName: 'local' }, { annotations: { 'volume.kubernetes.io/selected-node': 'gone' } }),
    );
    store.create('pods', podWithClaim('p', 'data'));
    await eventually(() =>
      expect(scheduled('p')?.message).toBe(
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
      ),
    );
  });

  it('binds a local PV of a no-provisioner class on the node it lives on', async () => {
    registerNode(store, { name: 'node-a' });
    registerNode(store, { name: 'node-b' });
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', 'kubernetes.io/no-provisioner', { volumeBindingMode: 'WaitForFirstConsumer' }),
    );
    const onB = {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b'] }] },
        ],
      },
    };
    store.create(
      'persistentvolumes',
      volume('local-b', {
        storageClassName: 'local',
        hostPath: undefined,
        local: { path: '/mnt/disk' },
        nodeAffinity: onB,
      }),
    );
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'local' }));
    await eventually(() =>
      expect(get(store, 'persistentvolumes', undefined, 'local-b').status.phase).toBe('Available'),
    );
    store.create('pods', podWithClaim('p', 'data'));
    await eventually(() => expect(podOf('p').spec.nodeName).toBe('node-b'));
    expect(claimOf('data').spec.volumeName).toBe('local-b');
    expect(claimOf('data').metadata.annotations['volume.kubernetes.io/selected-node']).toBeUndefined();
  });

  it('reports a volume node affinity conflict for a bound claim', async () => {
    registerNode(store, { name: 'node-a' });
    store.create('storage.k8s.io/storageclasses', storageClass('now', 'example.com/now'));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'now' }));
    provision('data', 'elsewhere');
    await eventually(() => expect(claimOf('data').status.phase).toBe('Bound'));
    store.create('pods', podWithClaim('p', 'data'));
    await eventually(() => expect(scheduled('p')?.message).toContain('1 node(s) had volume node affinity conflict.'));
  });

  it('selects the preset node for WaitForFirstConsumer claims of a pod with spec.nodeName', async () => {
    registerNode(store, { name: 'node-a' });
    registerNode(store, { name: 'node-b' });
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', 'example.com/local', { volumeBindingMode: 'WaitForFirstConsumer' }),
    );
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'local' }));
    store.create('pods', podWithClaim('p', 'data', { nodeName: 'node-b' }));
    await eventually(() =>
      expect(claimOf('data').metadata.annotations['volume.kubernetes.io/selected-node']).toBe('node-b'),
    );
  });

  it('leaves pods of other schedulers alone', async () => {
    registerNode(store, { name: 'node-a' });
    store.create('pods', pod('p', {}, { schedulerName: 'other' }));
    await settle();
    expect(podOf('p').spec.nodeName).toBeUndefined();
    expect(podOf('p').status.conditions).toBeUndefined();
  });
});
