/**
 * The Go library's TestController cases (controller_test.go, v13), run against the testkit API server over HTTP.
 * Names are kept so each case can be traced to its Go original.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import { QueueVolumeStore } from '../../src/controller/volume-store.js';
import {
  FINALIZER,
  PROVISIONER,
  ProvisioningState,
  badProvisioner,
  expectedProvisionedVolume,
  extProvisioner,
  ignoredProvisioner,
  newCSIVolume,
  newClaim,
  newStorageClass,
  newVolume,
  stateProvisioner,
  testProvisioner,
} from './fixtures.js';
import { startHarness, type Harness } from './harness.js';
import { internalsOf } from '../../src/controller/internals.js';

const PROVISION_OK = 'controller_persistentvolumeclaim_provision_total';
const PROVISION_FAILED = 'controller_persistentvolumeclaim_provision_failed_total';
const DELETE_OK = 'controller_persistentvolume_delete_total';
const DELETE_FAILED = 'controller_persistentvolume_delete_failed_total';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const c1 = (): V1StorageClass => newStorageClass('class-1', PROVISIONER);
const claim1 = (ann: Record<string, string> = {}, mode?: 'Block'): V1PersistentVolumeClaim =>
  newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, '', ann, mode);
const WFFC = { volumeBindingMode: 'WaitForFirstConsumer' };

interface Case {
  classes?: V1StorageClass[];
  claims?: V1PersistentVolumeClaim[];
  volumes?: V1PersistentVolume[] | ((claims: V1PersistentVolumeClaim[]) => V1PersistentVolume[]);
  deleting?: string[];
  provisioner: Provisioner;
  options?: Partial<ProvisionControllerOptions>;
  /** Faults on PV writes: verb and how many times. */
  failPV?: { verb: 'create' | 'delete'; count?: number };
  /** An error code for every claim update. */
  failClaimUpdate?: 403 | 500;
  inProgress?: (claims: V1PersistentVolumeClaim[]) => V1PersistentVolumeClaim[];
  enqueue?: V1PersistentVolumeClaim;
  queueStore?: boolean;
}

async function run(c: Case): Promise<Harness> {
  const harness = await startHarness(
    c.provisioner,
    { classes: c.classes ?? [], claims: c.claims ?? [], volumes: c.volumes ?? [], deleting: c.deleting ?? [] },
    {
      ...c.options,
      ...(c.queueStore === true
        ? { createProvisionedPVLimiter: new ItemExponentialFailureRateLimiter<string>(1, 1_000_000) }
        : {}),
    },
    (kit) => {
      if (c.failClaimUpdate !== undefined) {
        kit.faults.add({
          verb: 'update',
          resource: 'persistentvolumeclaims',
          action: { type: 'error', code: c.failClaimUpdate },
        });
      }
      if (c.failPV !== undefined) {
        kit.faults.add({
          verb: c.failPV.verb,
          resource: 'persistentvolumes',
          action: { type: 'error', code: 500 },
          ...(c.failPV.count === undefined ? {} : { count: c.failPV.count }),
        });
      }
    },
    (controller) => {
      for (const claim of c.inProgress?.(c.claims ?? []) ?? [])
        internalsOf(controller).claimsInProgress.set(claim.metadata?.uid ?? '', claim);
      if (c.enqueue !== undefined) internalsOf(controller).enqueueClaim(c.enqueue);
    },
  );
  await harness.settle();
  return harness;
}

const names = (pvs: V1PersistentVolume[]): string[] => pvs.map((p) => p.metadata?.name ?? '');

describe('TestController', () => {
  it('provision for claim-1 but not claim-2', async () => {
    const cls = c1();
    const claims = [claim1(), newClaim('claim-2', 'uid-1-2', 'class-2', 'abc.def/ghi', '')];
    h = await run({
      classes: [cls, newStorageClass('class-2', 'abc.def/ghi')],
      claims,
      provisioner: testProvisioner(),
    });
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claims[0]!));
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual([]);
  });

  it("don't provision, volume already exists", async () => {
    const cls = c1();
    const claim = claim1();
    const provisioner = testProvisioner();
    h = await run({
      classes: [cls],
      claims: [claim],
      volumes: (claims) => [expectedProvisionedVolume(cls, claims[0]!)],
      provisioner,
    });
    expect(names(h.volumes())).toEqual([`pvc-${claim.metadata?.uid}`]);
    expect(provisioner.calls).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    expect(h.metrics.classes(PROVISION_OK)).toEqual([]);
  });

  it("don't provision, provisioner does not support raw block", async () => {
    h = await run({ classes: [c1()], claims: [claim1({}, 'Block')], provisioner: testProvisioner() });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    const events = h.kit.store.list('events', 'default');
    expect(events.map((e) => e.message)).toContain('foo.bar/baz does not support block volume provisioning');
  });

  it('provision for claim-1 but not claim-2, because the storage class provisioner name is distinct from the controller provisioner name', async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({
      classes: [cls],
      claims: [claim],
      provisioner: testProvisioner(),
      options: { provisionerName: 'csi.com/mock-csi', additionalProvisionerNames: ['foo.bar/baz', 'foo.xyz/baz'] },
    });
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim));
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
  });

  it('delete volume-1 but not volume-2', async () => {
    const provisioner = testProvisioner();
    h = await run({
      volumes: [
        newVolume('volume-1', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': 'foo.bar/baz' }),
        newVolume('volume-2', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': 'abc.def/ghi' }),
      ],
      provisioner,
    });
    expect(names(h.volumes())).toEqual(['volume-2']);
    expect(provisioner.deleted).toEqual(['volume-1']);
    expect(h.metrics.classes(DELETE_OK)).toEqual(['']);
  });

  it("don't provision for claim-1 because it's already bound", async () => {
    h = await run({
      claims: [newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, 'volume-1')],
      provisioner: testProvisioner(),
    });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.controllerSeries()).toBe(0);
  });

  it("don't provision for claim-1 because its class doesn't exist", async () => {
    h = await run({ claims: [claim1()], provisioner: testProvisioner(), options: { failedProvisionThreshold: 1 } });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
  });

  it("don't delete volume-1 because it's still bound", async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Bound', 'Delete', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })],
      provisioner: testProvisioner(),
    });
    expect(names(h.volumes())).toEqual(['volume-1']);
    expect(h.metrics.controllerSeries()).toBe(0);
  });

  it("don't delete volume-1 because its reclaim policy is not delete", async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Retain', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })],
      provisioner: testProvisioner(),
    });
    expect(names(h.volumes())).toEqual(['volume-1']);
    expect(h.metrics.controllerSeries()).toBe(0);
  });

  it('provisioner fails to provision for claim-1: no pv is created', async () => {
    h = await run({
      classes: [c1()],
      claims: [claim1()],
      provisioner: badProvisioner(),
      options: { failedProvisionThreshold: 1 },
    });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
  });

  it('provisioner fails to delete volume-1: pv is not deleted', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })],
      provisioner: badProvisioner(),
      options: { failedDeleteThreshold: 1 },
    });
    expect(names(h.volumes())).toEqual(['volume-1']);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual(['']);
    const events = h.kit.store.list('events', 'default');
    expect(events.find((e) => e.reason === 'VolumeFailedDelete')?.message).toBe('fake error');
  });

  it('try to provision for claim-1 but fail to save the pv object', async () => {
    const provisioner = testProvisioner();
    h = await run({
      classes: [c1()],
      claims: [claim1()],
      provisioner,
      failPV: { verb: 'create' },
      options: { failedProvisionThreshold: 0, createProvisionedPVRetryCount: 5 },
    });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    // The asset was deleted again: nothing is left behind.
    expect(provisioner.deleted.length).toBeGreaterThan(0);
    const messages = h.kit.store.list('events', 'default').map((e) => String(e.message));
    expect(
      messages.some((m) =>
        /^Error creating provisioned PV object for claim default\/claim-1: .*\. Deleting the volume\.$/.test(m),
      ),
    ).toBe(true);
  });

  it('try to delete volume-1 but fail to delete the pv object', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })],
      provisioner: testProvisioner(),
      failPV: { verb: 'delete' },
      options: { failedDeleteThreshold: 1 },
    });
    expect(names(h.volumes())).toEqual(['volume-1']);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual(['']);
  });

  it("don't provision, because it is ignored", async () => {
    h = await run({
      classes: [c1()],
      claims: [newClaim('claim-2', 'uid-1-1', 'class-1', PROVISIONER, '')],
      provisioner: ignoredProvisioner(),
    });
    expect(h.volumes()).toEqual([]);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    expect(h.kit.store.list('events', 'default').filter((e) => e.type === 'Warning')).toEqual([]);
  });

  it('provision for claim-1 but not claim-2, because it is ignored', async () => {
    const cls = c1();
    const claims = [claim1(), newClaim('claim-2', 'uid-1-2', 'class-1', PROVISIONER, '')];
    h = await run({ classes: [cls], claims, provisioner: ignoredProvisioner() });
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claims[0]!));
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
    expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
  });

  it('provision with Retain reclaim policy', async () => {
    const cls = newStorageClass('class-1', PROVISIONER, { reclaimPolicy: 'Retain' });
    const claim = claim1();
    h = await run({ classes: [cls], claims: [claim], provisioner: testProvisioner() });
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim, { policy: 'Retain' }));
  });

  it('provision for ext provisioner', async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({
      classes: [cls],
      claims: [claim],
      provisioner: extProvisioner(() => `pvc-${claim.metadata?.uid}`, ProvisioningState.Finished),
    });
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim));
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
  });

  const inProgressCases: [string, ProvisioningState, boolean, string[]][] = [
    ['ext provisioner: final error does not mark claim as in progress', ProvisioningState.Finished, false, []],
    [
      'ext provisioner: provisional error marks claim as in progress',
      ProvisioningState.InBackground,
      false,
      ['claim-1'],
    ],
    ['ext provisioner: NoChange error does not mark claim as in progress', ProvisioningState.NoChange, false, []],
    ['ext provisioner: final error removes claim from in progress', ProvisioningState.Finished, true, []],
    [
      'ext provisioner: provisional error does not remove claim from in progress',
      ProvisioningState.InBackground,
      true,
      ['claim-1'],
    ],
    [
      'ext provisioner: NoChange error does not remove claim from in progress',
      ProvisioningState.NoChange,
      true,
      ['claim-1'],
    ],
  ];
  for (const [name, state, pre, expected] of inProgressCases) {
    it(name, async () => {
      const claim = claim1();
      h = await run({
        classes: [c1()],
        claims: [claim],
        provisioner: stateProvisioner(state, 'mock error'),
        ...(pre ? { inProgress: (claims) => claims } : {}),
        options: { failedProvisionThreshold: 1 },
      });
      expect([...internalsOf(h.controller).claimsInProgress.values()].map((c) => c.metadata?.name)).toEqual(expected);
      expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    });
  }

  it('ext provisioner: claimsInProgress is used for deleted PVCs', async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({
      classes: [cls],
      provisioner: extProvisioner('pvc-uid-1-1', ProvisioningState.Finished),
      inProgress: () => [claim],
      enqueue: claim,
    });
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim));
    expect(internalsOf(h.controller).claimsInProgress.size).toBe(0);
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
  });

  it("PV save backoff: provision a PV and fail to save it -> it's in the queue", async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({
      classes: [cls],
      claims: [claim],
      provisioner: testProvisioner(),
      failPV: { verb: 'create' },
      queueStore: true,
    });
    expect(h.volumes()).toEqual([]);
    const store = internalsOf(h.controller).volumeStore as QueueVolumeStore;
    expect([...store.pending().keys()]).toEqual([`pvc-${claim.metadata?.uid}`]);
    expect(store.queue.numRequeues(`pvc-${claim.metadata?.uid}`)).toBeGreaterThan(0);
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
  });

  it("PV save backoff: provision a PV and fail to save it two times -> it's removed from the queue", async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({
      classes: [cls],
      claims: [claim],
      provisioner: testProvisioner(),
      failPV: { verb: 'create', count: 2 },
      queueStore: true,
    });
    await expect.poll(() => h?.volumes().length, WAIT).toBe(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim));
    expect((internalsOf(h.controller).volumeStore as QueueVolumeStore).pending().size).toBe(0);
    expect(h.metrics.classes(PROVISION_OK)).toEqual(['class-1']);
  });

  const selected = {
    'volume.beta.kubernetes.io/storage-provisioner': PROVISIONER,
    'volume.kubernetes.io/selected-node': 'node-1',
  };
  const rescheduleCases: [string, Provisioner, boolean, string[]][] = [
    [
      'remove selectedNode and claim on reschedule',
      stateProvisioner(ProvisioningState.Reschedule, 'fake error, reschedule'),
      true,
      [],
    ],
    ['do not remove selectedNode after final error, only the claim', badProvisioner(), false, []],
    [
      'do not remove selectedNode if nothing changes',
      stateProvisioner(ProvisioningState.NoChange, 'fake error, no change'),
      false,
      [],
    ],
    [
      'do not remove selectedNode while in progress',
      stateProvisioner(ProvisioningState.InBackground, 'fake error, in progress'),
      false,
      ['claim-1'],
    ],
  ];
  for (const [name, provisioner, removed, inProgress] of rescheduleCases) {
    it(name, async () => {
      h = await run({
        classes: [newStorageClass('class-1', PROVISIONER, WFFC)],
        claims: [newClaim('claim-1', 'uid-1-1', 'class-1', '', '', selected)],
        provisioner,
        options: { failedProvisionThreshold: 1 },
      });
      const ann = h.claims()[0]?.metadata?.annotations ?? {};
      expect('volume.kubernetes.io/selected-node' in ann).toBe(!removed);
      expect(ann['volume.beta.kubernetes.io/storage-provisioner']).toBe(PROVISIONER);
      expect([...internalsOf(h.controller).claimsInProgress.values()].map((c) => c.metadata?.name)).toEqual(inProgress);
      expect(h.metrics.classes(PROVISION_FAILED)).toEqual(['class-1']);
    });
  }

  it('reports a reschedule the API server refused as a ReschedulingFailed Warning naming the missing verb', async () => {
    h = await run({
      classes: [newStorageClass('class-1', PROVISIONER, WFFC)],
      claims: [newClaim('claim-1', 'uid-1-1', 'class-1', '', '', selected)],
      provisioner: stateProvisioner(ProvisioningState.Reschedule, 'fake error, reschedule'),
      options: { failedProvisionThreshold: 1 },
      failClaimUpdate: 403,
    });
    expect('volume.kubernetes.io/selected-node' in (h.claims()[0]?.metadata?.annotations ?? {})).toBe(true);
    const events = h.kit.store.list('events', 'default') as { reason?: string; message?: string }[];
    expect(events.find((e) => e.reason === 'ReschedulingFailed')?.message).toMatch(
      /could not remove annotation volume\.kubernetes\.io\/selected-node .*needs the "update" verb on persistentvolumeclaims/,
    );
  });

  it('provision for ext provisioner with finalizer', async () => {
    const cls = c1();
    const claim = claim1();
    h = await run({ classes: [cls], claims: [claim], provisioner: testProvisioner(), options: { addFinalizer: true } });
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim, { finalizers: [FINALIZER] }));
  });

  const owned = { 'pv.kubernetes.io/provisioned-by': PROVISIONER };
  it('ensure finalizer is removed if the addFinalizer config option is false', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Bound', 'Delete', owned, [FINALIZER])],
      provisioner: testProvisioner(),
    });
    expect(h.volumes()[0]?.metadata?.finalizers).toBeUndefined();
    expect(h.metrics.controllerSeries()).toBe(0);
  });

  it('ensure finalizer is removed if the reclaim policy is Retain or Recycle with addFinalizer enabled', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Bound', 'Retain', owned, [FINALIZER])],
      provisioner: testProvisioner(),
      options: { addFinalizer: true },
    });
    expect(h.volumes()[0]?.metadata?.finalizers).toBeUndefined();
  });

  it('ensure finalizer is not added if the volume is under deletion, also ensures that volume is not deleted', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', owned)],
      deleting: ['volume-1'],
      provisioner: testProvisioner(),
      options: { addFinalizer: true },
    });
    expect(names(h.volumes())).toEqual(['volume-1']);
    expect(h.volumes()[0]?.metadata?.finalizers).toEqual(['kubernetes.io/pv-protection']);
    expect(h.metrics.controllerSeries()).toBe(0);
  });

  it('ensure volume with finalizer is deleted if it is in a Released state and reclaim policy is Delete', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER])],
      provisioner: testProvisioner(),
      options: { addFinalizer: true },
    });
    await expect.poll(() => h?.volumes().length, WAIT).toBe(0);
    expect(h.metrics.classes(DELETE_OK)).toEqual(['']);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual([]);
  });

  it('ensure volume with finalizer is deleted if it is in a Released state and reclaim policy is Delete and already under deletion', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER])],
      deleting: ['volume-1'],
      provisioner: testProvisioner(),
      options: { addFinalizer: true },
    });
    await expect.poll(() => h?.volumes().length, WAIT).toBe(0);
    expect(h.metrics.classes(DELETE_OK)).toEqual(['']);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual([]);
  });

  it('provisioner fails to delete the volume with finalizer, the pv is not deleted', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER])],
      provisioner: badProvisioner(),
      options: { addFinalizer: true, failedDeleteThreshold: 1 },
    });
    expect(h.volumes()[0]?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual(['']);
  });

  it('volume deletion succeeds but the pv deletion fails, the pv still exists', async () => {
    h = await run({
      volumes: [newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER])],
      provisioner: testProvisioner(),
      failPV: { verb: 'delete' },
      options: { addFinalizer: true, failedDeleteThreshold: 1 },
    });
    expect(h.volumes()[0]?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(h.metrics.classes(DELETE_FAILED)).toEqual(['']);
  });

  for (const name of [
    'ensure finalizer is added on statically provisioned, migrated, in-tree volumes',
    'ensure finalizer is added on statically provisioned, migrated, in-tree volumes if it is in a Bound state',
  ]) {
    it(name, async () => {
      h = await run({
        volumes: [newVolume('volume-1', 'Bound', 'Delete', { 'pv.kubernetes.io/migrated-to': PROVISIONER })],
        provisioner: testProvisioner(),
        options: { addFinalizer: true },
      });
      expect(h.volumes()[0]?.metadata?.finalizers).toEqual([FINALIZER]);
      expect(h.metrics.controllerSeries()).toBe(0);
    });
  }

  it('ensure finalizer is added on statically provisioned CSI volumes if it is in a Bound state', async () => {
    // The Go fixture's driver "foo.bar/baz" is not a valid CSI driver name for a real API server; a CSI-style
    // provisioner name stands in for it.
    h = await run({
      volumes: [newCSIVolume('volume-1', 'Bound', 'Delete', 'baz.foo.bar')],
      provisioner: testProvisioner(),
      options: { provisionerName: 'baz.foo.bar', addFinalizer: true },
    });
    expect(h.volumes()[0]?.metadata?.finalizers).toEqual([FINALIZER]);
  });
});
