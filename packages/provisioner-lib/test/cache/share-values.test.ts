/**
 * `shareRepeatedValues` as an informer's transform, against the API server: cached volumes read exactly as the
 * server serves them, listed, watched and updated, also with a table far too small for the values it is given.
 */
import { startApiServer } from '@kprov/testkit';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { informerFor } from '../../src/cache/informer.js';
import { stripManagedFields } from '../../src/cache/managed-fields.js';
import { InternTable } from '../../src/cache/intern-table.js';
import { shareRepeatedValues } from '../../src/cache/share-values.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A CSI volume with most of what repeats across volumes (and some that does not), on node `node-<i % 2>`. */
function volume(name: string, i: number): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      labels: { 'app.kubernetes.io/name': 'database', tier: i % 2 === 0 ? 'gold' : 'silver' },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'csi.example.com', note: `volume number ${i}` },
      finalizers: ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer'],
    },
    spec: {
      capacity: { storage: `${i + 1}Gi` },
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'fast-ssd',
      volumeMode: 'Filesystem',
      mountOptions: ['noatime', 'nodiratime'],
      csi: {
        driver: 'csi.example.com',
        volumeHandle: `handle-${name}`,
        fsType: 'ext4',
        volumeAttributes: { 'storage.kubernetes.io/csiProvisionerIdentity': '1700000000000-8081-csi.example.com' },
      },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'team-a', name: `data-${i}` },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [`node-${i % 2}`] }] },
          ],
        },
      },
    },
  };
}

describe('shareRepeatedValues as the transform of a volumes informer', () => {
  it('caches listed, watched and updated volumes as served, with a table that holds at most 4 values', async () => {
    const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    cleanups.push(() => kit.stop());
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await core.createPersistentVolume({ body: volume(`listed-${i}`, i) });

    const table = new InternTable({ capacity: 4 });
    const informer = informerFor(kit.kubeConfig, 'PersistentVolume', {
      transform: (v) => shareRepeatedValues(stripManagedFields(v), table),
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await informer.waitForSync(stop.signal);
    for (let i = 3; i < 6; i++) await core.createPersistentVolume({ body: volume(`watched-${i}`, i) });
    const updated = await core.readPersistentVolume({ name: 'listed-1' });
    updated.metadata!.labels = { ...updated.metadata!.labels, tier: 'bronze' };
    await core.replacePersistentVolume({ name: 'listed-1', body: updated });

    const names = ['listed-0', 'listed-1', 'listed-2', 'watched-3', 'watched-4', 'watched-5'];
    for (const name of names) {
      const served = await core.readPersistentVolume({ name });
      delete served.metadata?.managedFields;
      await vi.waitFor(
        () => expect(informer.store.get(name)?.metadata?.resourceVersion).toBe(served.metadata?.resourceVersion),
        WAIT,
      );
      expect(informer.store.get(name)).toEqual(served);
    }
    expect(informer.store.get('listed-1')?.metadata?.labels).toEqual({
      'app.kubernetes.io/name': 'database',
      tier: 'bronze',
    });
    expect(table.size).toBeLessThanOrEqual(4);
  });
});
