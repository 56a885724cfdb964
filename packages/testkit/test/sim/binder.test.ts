import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/store/store.js';
import { startPvBinder } from '../../src/sim/binder.js';
import { EventRecorder } from '../../src/sim/events.js';
import type { Stoppable } from '../../src/sim/queue.js';
import { type Loose, eventually, claim, get, pod, podWithClaim, settle, storageClass, volume } from './fixtures.js';

let store: ObjectStore;
let loops: Stoppable[];

beforeEach(() => {
  store = new ObjectStore();
  loops = [];
});
afterEach(async () => {
  for (const l of loops) await l.stop();
});

const claimOf = (name: string): Loose => get(store, 'persistentvolumeclaims', 'default', name);
const volumeOf = (name: string): Loose => get(store, 'persistentvolumes', undefined, name);

describe('PV controller: dynamic provisioning', () => {
  it('announces the provisioner of an Immediate class at once', async () => {
    loops.push(startPvBinder(store));
    store.create('storage.k8s.io/storageclasses', storageClass('fast', 'example.com/fast'));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'fast' }));
    await eventually(() => {
      const c = claimOf('data');
      expect(c.metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe('example.com/fast');
      expect(c.metadata.annotations['volume.beta.kubernetes.io/storage-provisioner']).toBe('example.com/fast');
      expect(c.status.phase).toBe('Pending');
    });
  });

  it('waits for the selected node before announcing the provisioner of a WaitForFirstConsumer class', async () => {
    loops.push(startPvBinder(store));
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', 'example.com/local', { volumeBindingMode: 'WaitForFirstConsumer' }),
    );
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'local' }));
    await eventually(() => expect(claimOf('data').status.phase).toBe('Pending'));
    await settle();
    expect(claimOf('data').metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBeUndefined();

    store.modify('persistentvolumeclaims', 'default', 'data', (o) => {
      o.metadata.annotations = { ...o.metadata.annotations, 'volume.kubernetes.io/selected-node': 'node-1' };
    });
    await eventually(() =>
      expect(claimOf('data').metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe(
        'example.com/local',
      ),
    );
  });

  it('leaves claims of kubernetes.io/no-provisioner classes alone', async () => {
    loops.push(startPvBinder(store));
    store.create('storage.k8s.io/storageclasses', storageClass('manual', 'kubernetes.io/no-provisioner'));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'manual' }));
    await eventually(() => expect(claimOf('data').status.phase).toBe('Pending'));
    await settle();
    expect(claimOf('data').metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBeUndefined();
  });

  it('binds a provisioned PV whose claimRef names the claim, both ways', async () => {
    loops.push(startPvBinder(store));
    store.create('storage.k8s.io/storageclasses', storageClass('fast', 'example.com/fast'));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: 'fast' }));
    store.create(
      'persistentvolumes',
      volume(
        'pvc-1',
        {
          storageClassName: 'fast',
          capacity: { storage: '2Gi' },
          persistentVolumeReclaimPolicy: 'Delete',
          claimRef: {
            kind: 'PersistentVolumeClaim',
            apiVersion: 'v1',
            namespace: 'default',
            name: 'data',
            uid: c.metadata.uid,
          },
        },
        { annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/fast' } },
      ),
    );
    await eventually(() => {
      const bound = claimOf('data');
      expect(bound.spec.volumeName).toBe('pvc-1');
      expect(bound.metadata.annotations['pv.kubernetes.io/bind-completed']).toBe('yes');
      expect(bound.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBe('yes');
      expect(bound.status).toMatchObject({
        phase: 'Bound',
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '2Gi' },
      });
      const pv = volumeOf('pvc-1');
      expect(pv.status.phase).toBe('Bound');
      // The provisioner pre-bound it: the controller did not choose this volume.
      expect(pv.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    });
  });

  it('releases the PV when its bound claim is deleted', async () => {
    loops.push(startPvBinder(store));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create(
      'persistentvolumes',
      volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }),
    );
    await eventually(() => expect(volumeOf('pv-1').status.phase).toBe('Bound'));
    store.delete('persistentvolumeclaims', 'default', 'data');
    await eventually(() => {
      expect(claimOf('data')).toBeUndefined();
      expect(volumeOf('pv-1').status.phase).toBe('Released');
    });
  });

  it('marks a bound claim Lost when its volume disappears', async () => {
    loops.push(startPvBinder(store, { protection: false }));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create(
      'persistentvolumes',
      volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }),
    );
    await eventually(() => expect(claimOf('data').status.phase).toBe('Bound'));
    store.delete('persistentvolumes', undefined, 'pv-1');
    await eventually(() => expect(claimOf('data').status.phase).toBe('Lost'));
  });
});

describe('PV controller: static volumes', () => {
  it('makes volumes without claimRef Available', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumes', volume('pv-1'));
    await eventually(() => expect(volumeOf('pv-1').status.phase).toBe('Available'));
  });

  it('matches a class-less claim to the smallest fitting Available volume of class ""', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumes', volume('too-small', { capacity: { storage: '500Mi' } }));
    store.create(
      'persistentvolumes',
      volume('other-class', { capacity: { storage: '2Gi' }, storageClassName: 'gold' }),
    );
    store.create(
      'persistentvolumes',
      volume('wrong-mode', { capacity: { storage: '2Gi' }, accessModes: ['ReadOnlyMany'] }),
    );
    store.create('persistentvolumes', volume('block', { capacity: { storage: '2Gi' }, volumeMode: 'Block' }));
    store.create('persistentvolumes', volume('unlabelled', { capacity: { storage: '2Gi' } }));
    store.create('persistentvolumes', volume('big', { capacity: { storage: '10Gi' } }, { labels: { tier: 'db' } }));
    store.create('persistentvolumes', volume('right', { capacity: { storage: '3Gi' } }, { labels: { tier: 'db' } }));
    await eventually(() => expect(volumeOf('right').status.phase).toBe('Available'));

    const c = store.create(
      'persistentvolumeclaims',
      claim('data', { storageClassName: '', selector: { matchLabels: { tier: 'db' } } }),
    );
    await eventually(() => {
      const pv = volumeOf('right');
      expect(pv.status.phase).toBe('Bound');
      expect(pv.spec.claimRef).toMatchObject({
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'data',
        uid: c.metadata.uid,
      });
      expect(pv.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBe('yes');
      const bound = claimOf('data');
      expect(bound.spec.volumeName).toBe('right');
      expect(bound.status).toMatchObject({ phase: 'Bound', capacity: { storage: '3Gi' } });
    });
    for (const other of ['too-small', 'other-class', 'wrong-mode', 'block', 'unlabelled', 'big']) {
      expect(volumeOf(other).status.phase).toBe('Available');
    }
  });

  it('matches a claim without class to a class "" volume when there is no default class', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumes', volume('pv-1'));
    store.create('persistentvolumeclaims', claim('data'));
    await eventually(() => expect(claimOf('data').spec.volumeName).toBe('pv-1'));
  });

  it('gives a claim without class the default class', async () => {
    loops.push(startPvBinder(store));
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('std', 'example.com/std', {
        metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      }),
    );
    store.create('persistentvolumeclaims', claim('data'));
    await eventually(() => {
      const c = claimOf('data');
      expect(c.spec.storageClassName).toBe('std');
      expect(c.metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe('example.com/std');
    });
  });

  it('binds a claim to the volume it names', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumes', volume('chosen', { capacity: { storage: '5Gi' } }));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: '', volumeName: 'chosen' }));
    await eventually(() => {
      const c = claimOf('data');
      expect(c.status.phase).toBe('Bound');
      // The user chose the volume: only the volume side is marked as bound by the controller.
      expect(c.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
      expect(volumeOf('chosen').metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    });
  });
});

describe('storage object in use protection', () => {
  it('adds the finalizers to new claims and volumes', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create('persistentvolumes', volume('pv-1', { storageClassName: 'x' }));
    await eventually(() => {
      expect(claimOf('data').metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect(volumeOf('pv-1').metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
    });
  });

  it('is off with protection: false', async () => {
    loops.push(startPvBinder(store, { protection: false }));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'x' }));
    await eventually(() => expect(claimOf('data').status.phase).toBe('Pending'));
    await settle();
    expect(claimOf('data').metadata.finalizers).toBeUndefined();
  });

  it('keeps a claim used by a running pod until the pod is gone', async () => {
    loops.push(startPvBinder(store));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'x' }));
    await eventually(() => expect(claimOf('data').metadata.finalizers).toContain('kubernetes.io/pvc-protection'));
    store.create(
      'pods',
      pod('user', {}, { nodeName: 'node-1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }),
    );
    store.delete('persistentvolumeclaims', 'default', 'data');
    await settle();
    expect(claimOf('data').metadata.deletionTimestamp).toBeDefined();

    store.delete('pods', 'default', 'user');
    await eventually(() => expect(claimOf('data')).toBeUndefined());
  });

  it('lets a claim go once its pod has terminated, unless terminated pods count', async () => {
    loops.push(startPvBinder(store));
    for (const name of ['a', 'b']) {
      store.create('persistentvolumeclaims', claim(name, { storageClassName: 'x' }));
      store.create(
        'pods',
        pod(
          `user-${name}`,
          {},
          { nodeName: 'node-1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: name } }] },
        ),
      );
      store.modify(
        'pods',
        'default',
        `user-${name}`,
        (o) => {
          o.status = { ...(o.status as object), phase: 'Succeeded' };
        },
        { subresource: 'status' },
      );
    }
    await eventually(() => expect(claimOf('a').metadata.finalizers).toContain('kubernetes.io/pvc-protection'));
    store.delete('persistentvolumeclaims', 'default', 'a');
    await eventually(() => expect(claimOf('a')).toBeUndefined());

    await loops.pop()?.stop();
    loops.push(startPvBinder(store, { protection: { terminatedPodsUseClaims: true } }));
    await eventually(() => expect(claimOf('b').metadata.finalizers).toContain('kubernetes.io/pvc-protection'));
    store.delete('persistentvolumeclaims', 'default', 'b');
    await settle();
    expect(claimOf('b')).toBeDefined();
  });

  it('keeps a Bound volume being deleted until its claim is gone', async () => {
    loops.push(startPvBinder(store));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create(
      'persistentvolumes',
      volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }),
    );
    await eventually(() => {
      expect(volumeOf('pv-1').status.phase).toBe('Bound');
      expect(volumeOf('pv-1').metadata.finalizers).toContain('kubernetes.io/pv-protection');
    });
    store.delete('persistentvolumes', undefined, 'pv-1');
    await settle();
    expect(volumeOf('pv-1').metadata.deletionTimestamp).toBeDefined();

    store.delete('persistentvolumeclaims', 'default', 'data');
    await eventually(() => expect(volumeOf('pv-1')).toBeUndefined());
  });
});

describe('PV controller: Events on claims', () => {
  const eventsOf = (name: string): Loose[] =>
    (JSON.parse(JSON.stringify(store.list('events', 'default'))) as Loose[]).filter(
      (e: Loose) => e.involvedObject.name === name,
    );

  it('records why a claim waits, as kube-controller-manager words it', async () => {
    // No protection loop: in a cluster its finalizer comes with the create, not as a second write.
    loops.push(startPvBinder(store, { protection: false }));
    store.create(
      'storage.k8s.io/storageclasses',
      storageClass('later', 'example.com/x', { volumeBindingMode: 'WaitForFirstConsumer' }),
    );
    store.create('storage.k8s.io/storageclasses', storageClass('local', 'kubernetes.io/no-provisioner'));
    await settle();
    store.create('persistentvolumeclaims', claim('waits', { storageClassName: 'later' }));
    store.create('persistentvolumeclaims', claim('no-class', { storageClassName: '' }));
    store.create('persistentvolumeclaims', claim('missing-class', { storageClassName: 'nope' }));
    store.create('persistentvolumeclaims', claim('in-tree', { storageClassName: 'local' }));
    store.create('pods', podWithClaim('user', 'pod-waits'));
    store.create('persistentvolumeclaims', claim('pod-waits', { storageClassName: 'later' }));
    await eventually(() => {
      const summary = (name: string) => eventsOf(name).map((e: Loose) => `${e.type} ${e.reason} ${e.message}`);
      expect(summary('waits')).toEqual([
        'Normal WaitForFirstConsumer waiting for first consumer to be created before binding',
      ]);
      expect(summary('no-class')).toEqual([
        'Normal FailedBinding no persistent volumes available for this claim and no storage class is set',
      ]);
      expect(summary('missing-class')).toEqual([
        'Warning ProvisioningFailed storageclass.storage.k8s.io "nope" not found',
      ]);
      expect(summary('in-tree')).toEqual([
        'Warning ProvisioningFailed no volume plugin matched name: kubernetes.io/no-provisioner',
      ]);
      expect(summary('pod-waits')).toEqual(['Normal WaitForPodScheduled waiting for pod user to be scheduled']);
    });
    const [e] = eventsOf('waits');
    expect(e).toMatchObject({
      metadata: { name: expect.stringMatching(/^waits\.[0-9a-f]{16}$/) as unknown, namespace: 'default' },
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'waits',
        apiVersion: 'v1',
        uid: claimOf('waits').metadata.uid,
      },
      source: { component: 'persistentvolume-controller' },
      reportingComponent: 'persistentvolume-controller',
      reportingInstance: '',
      count: 1,
    });
  });

  it('announces external provisioning after the annotation, once for the claim and once for its update', async () => {
    // No protection loop: in a cluster its finalizer comes with the create, not as a second write.
    loops.push(startPvBinder(store, { protection: false }));
    store.create('storage.k8s.io/storageclasses', storageClass('fast', 'example.com/fast'));
    await settle();
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'fast' }));
    await eventually(() => expect(eventsOf('data').map((e: Loose): unknown => e.count)).toEqual([2]));
    const [e] = eventsOf('data');
    expect(e.reason).toBe('ExternalProvisioning');
    expect(e.message).toBe(
      "Waiting for a volume to be created either by the external provisioner 'example.com/fast' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    );
    // The Event names the claim as it was once annotated.
    expect(e.involvedObject.resourceVersion).toBe(claimOf('data').metadata.resourceVersion);
  });

  it('counts repeats of an Event, and lets 25 through, then one per five minutes', () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const recorder = new EventRecorder(store, 'fidelity', () => now);
    const c = store.create('persistentvolumeclaims', claim('noisy', { storageClassName: '' }));
    for (let i = 0; i < 30; i++) recorder.event(c, 'Normal', 'Again', 'the same thing');
    expect(eventsOf('noisy').map((e: Loose): unknown => e.count)).toEqual([25]);
    now += 300_000;
    recorder.event(c, 'Normal', 'Again', 'the same thing');
    expect(eventsOf('noisy').map((e: Loose): unknown[] => [e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([
      [31, '2030-01-01T00:00:00Z', '2030-01-01T00:05:00Z'],
    ]);
  });
});

describe('startPvBinder stop', () => {
  it('writes nothing after stop', async () => {
    const binder = startPvBinder(store);
    await binder.stop();
    const rv = store.resourceVersion;
    store.create('persistentvolumes', volume('pv-1'));
    await settle();
    expect(store.resourceVersion).toBe(rv + 1);
    expect(volumeOf('pv-1').metadata.finalizers).toBeUndefined();
  });
});
