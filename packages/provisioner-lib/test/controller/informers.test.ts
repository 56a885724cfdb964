/**
 * The controller's own caches against the API server: what workers and provisioners read from them (claims by uid,
 * volumes and classes by name) is what the server serves, less managedFields, for objects listed at the start and
 * for objects added and changed later, including a volume and a claim that refer to each other.
 */
import { startApiServer, type Testkit } from '@kprov/testkit';
import {
  CoreV1Api,
  StorageV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { realClock } from '../../src/clock/clock.js';
import { startInformers, type ControllerInformers } from '../../src/controller/informers.js';
import { silentLogger } from '../../src/logging/logger.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PROVISIONER = 'example.com/fast';

function claim(name: string, namespace: string): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace,
      labels: { app: 'database' },
      annotations: {
        'volume.kubernetes.io/storage-provisioner': PROVISIONER,
        'volume.beta.kubernetes.io/storage-provisioner': PROVISIONER,
      },
      finalizers: ['kubernetes.io/pvc-protection'],
    },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } },
  };
}

/** A volume provisioned for `c` (which has its server-assigned uid). */
function volumeFor(name: string, c: V1PersistentVolumeClaim): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'fast',
      hostPath: { path: `/var/lib/fast/${name}` },
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: c.metadata?.namespace,
        name: c.metadata?.name,
        uid: c.metadata?.uid,
      },
    },
  };
}

interface Env {
  kit: Testkit;
  core: CoreV1Api;
  storage: StorageV1Api;
}

async function env(): Promise<Env> {
  const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  cleanups.push(() => kit.stop());
  return {
    kit,
    core: kit.kubeConfig.makeApiClient(CoreV1Api),
    storage: kit.kubeConfig.makeApiClient(StorageV1Api),
  };
}

function start(e: Env): ControllerInformers {
  const stop = new AbortController();
  const nothing = (): void => undefined;
  const informers = startInformers(e.kit.kubeConfig, stop.signal, {
    resyncPeriodMs: 0,
    clock: realClock,
    logger: silentLogger,
    onClaim: nothing,
    onVolume: nothing,
    onVolumeDeleted: nothing,
  });
  cleanups.push(async () => {
    stop.abort();
    await informers.done;
  });
  return informers;
}

/** Waits until the cache has the server's current version of the object, then compares the two. */
async function expectCachedAsServed<T extends { metadata?: { resourceVersion?: string; managedFields?: unknown } }>(
  served: T,
  cached: () => T | undefined,
): Promise<void> {
  delete served.metadata?.managedFields;
  await vi.waitFor(() => expect(cached()?.metadata?.resourceVersion).toBe(served.metadata?.resourceVersion), WAIT);
  expect(cached()).toEqual(served);
}

describe("the controller's caches", () => {
  it('read as the server serves claims, volumes and classes, listed and watched, bound to each other', async () => {
    const e = await env();
    await e.storage.createStorageClass({
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'fast' },
        provisioner: PROVISIONER,
        reclaimPolicy: 'Delete',
        mountOptions: ['noatime'],
        parameters: { type: 'ssd' },
      },
    });
    const listedClaim = await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claim('listed', 'default'),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'kube-public',
      body: claim('other', 'kube-public'),
    });
    await e.core.createPersistentVolume({ body: volumeFor('pv-listed', listedClaim) });

    const informers = start(e);
    await informers.waitForSync(new AbortController().signal);
    const watchedClaim = await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claim('watched', 'default'),
    });
    await vi.waitFor(() => expect(informers.claimByUid(watchedClaim.metadata?.uid ?? '')).toBeDefined(), WAIT);
    await e.core.createPersistentVolume({ body: volumeFor('pv-watched', watchedClaim) });
    // What the PV binder does once a volume is provisioned for a claim.
    for (const [name, volumeName] of [
      ['listed', 'pv-listed'],
      ['watched', 'pv-watched'],
    ] as const) {
      e.kit.store.modify('persistentvolumeclaims', 'default', name, (o) => {
        (o.spec as { volumeName?: string }).volumeName = volumeName;
      });
    }

    for (const [namespace, name] of [
      ['default', 'listed'],
      ['kube-public', 'other'],
      ['default', 'watched'],
    ] as const) {
      const served = await e.core.readNamespacedPersistentVolumeClaim({ namespace, name });
      await expectCachedAsServed(served, () => informers.claimByUid(served.metadata?.uid ?? ''));
    }
    for (const name of ['pv-listed', 'pv-watched']) {
      const served = await e.core.readPersistentVolume({ name });
      await expectCachedAsServed(served, () => informers.volumeByName(name));
    }
    await expectCachedAsServed(await e.storage.readStorageClass({ name: 'fast' }), () => informers.classByName('fast'));
    expect(informers.volumeByName('pv-watched')?.spec?.claimRef).toMatchObject({
      name: 'watched',
      uid: watchedClaim.metadata?.uid,
    });
    expect(informers.claimByUid(listedClaim.metadata?.uid ?? '')?.spec?.volumeName).toBe('pv-listed');
  });
});
