import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/store/store.js';
import { startPvBinder } from '../../src/sim/binder.js';
import type { Stoppable } from '../../src/sim/queue.js';
import { type Loose, eventually, claim, get, pod, settle, storageClass, volume } from './fixtures.js';

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
    store.create('storage.k8s.io/storageclasses', storageClass('local', 'example.com/local', { volumeBindingMode: 'WaitForFirstConsumer' }));
    store.create('persistentvolumeclaims', claim('data', { storageClassName: 'local' }));
    await eventually(() => expect(claimOf('data').status.phase).toBe('Pending'));
    await settle();
    expect(claimOf('data').metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBeUndefined();

    store.modify('persistentvolumeclaims', 'default', 'data', (o) => {
      o.metadata.annotations = { ...o.metadata.annotations, 'volume.kubernetes.io/selected-node': 'node-1' };
    });
    await eventually(() => expect(claimOf('data').metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe('example.com/local'));
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
          claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: c.metadata.uid },
        },
        { annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/fast' } },
      ),
    );
    await eventually(() => {
      const bound = claimOf('data');
      expect(bound.spec.volumeName).toBe('pvc-1');
      expect(bound.metadata.annotations['pv.kubernetes.io/bind-completed']).toBe('yes');
      expect(bound.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBe('yes');
      expect(bound.status).toMatchObject({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } });
      const pv = volumeOf('pvc-1');
      expect(pv.status.phase).toBe('Bound');
      // The provisioner pre-bound it: the controller did not choose this volume.
      expect(pv.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    });
  });

  it('releases the PV when its bound claim is deleted', async () => {
    loops.push(startPvBinder(store));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create('persistentvolumes', volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }));
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
    store.create('persistentvolumes', volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }));
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
    store.create('persistentvolumes', volume('other-class', { capacity: { storage: '2Gi' }, storageClassName: 'gold' }));
    store.create('persistentvolumes', volume('wrong-mode', { capacity: { storage: '2Gi' }, accessModes: ['ReadOnlyMany'] }));
    store.create('persistentvolumes', volume('block', { capacity: { storage: '2Gi' }, volumeMode: 'Block' }));
    store.create('persistentvolumes', volume('unlabelled', { capacity: { storage: '2Gi' } }));
    store.create('persistentvolumes', volume('big', { capacity: { storage: '10Gi' } }, { labels: { tier: 'db' } }));
    store.create('persistentvolumes', volume('right', { capacity: { storage: '3Gi' } }, { labels: { tier: 'db' } }));
    await eventually(() => expect(volumeOf('right').status.phase).toBe('Available'));

    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '', selector: { matchLabels: { tier: 'db' } } }));
    await eventually(() => {
      const pv = volumeOf('right');
      expect(pv.status.phase).toBe('Bound');
      expect(pv.spec.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: c.metadata.uid });
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
    store.create('storage.k8s.io/storageclasses', storageClass('std', 'example.com/std', { metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } }));
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
    store.create('pods', pod('user', {}, { nodeName: 'node-1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }));
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
      store.create('pods', pod(`user-${name}`, {}, { nodeName: 'node-1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: name } }] }));
      store.modify('pods', 'default', `user-${name}`, (o) => {
        o.status = { ...(o.status as object), phase: 'Succeeded' };
      }, { subresource: 'status' });
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
    store.create('persistentvolumes', volume('pv-1', { claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid } }));
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
