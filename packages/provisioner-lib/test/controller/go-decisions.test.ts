/**
 * The Go library's table tests of the controller's pure decisions (controller_test.go, v13): TestShouldProvision,
 * TestShouldDelete, TestIsProvisionerForVolume, TestShouldDeleteWithFinalizer, TestRemoveFinalizer,
 * TestAddFinalizer and TestCanProvision. Names are kept so each case can be traced to its Go original.
 *
 * The Go tests build a whole controller to call these methods; here they are plain functions of what the controller
 * would pass them (its provisioner, its known names, its class cache, its AddFinalizer option), so no API server is
 * needed and the Go fixtures are used as they are (NFS path and CSI driver names the real server would reject are
 * harmless here, nothing is sent to a server).
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { canProvision, shouldProvision, type ClaimContext } from '../../src/controller/claims.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { addFinalizer, isProvisionerForVolume, removeFinalizer, shouldDelete } from '../../src/controller/volumes.js';
import {
  FINALIZER,
  PROVISIONER,
  blockProvisioner,
  newCSIVolume,
  newClaim,
  newStorageClass,
  newVolume,
  qualifiedProvisioner,
  testProvisioner,
} from './fixtures.js';

const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const WFFC: Partial<V1StorageClass> = { volumeBindingMode: 'WaitForFirstConsumer' };

const signal = new AbortController().signal;

/** Go `newVolume(..., deletionTimestamp)`: the TS fixture has no deletionTimestamp parameter. */
function withDeletionTimestamp(pv: V1PersistentVolume, deleting: boolean): V1PersistentVolume {
  if (deleting && pv.metadata !== undefined) pv.metadata.deletionTimestamp = new Date();
  return pv;
}

describe('TestShouldProvision', () => {
  interface Case {
    name: string;
    provisionerName: string;
    additionalProvisionerNames?: string[];
    /** Go leaves it nil in one case; the TS controller always has one, so the plain test provisioner stands in. */
    provisioner: Provisioner;
    class: V1StorageClass;
    claim: V1PersistentVolumeClaim;
    expectedShould: boolean;
  }
  const cases: Case[] = [
    {
      name: 'should provision based on provisionerName',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', PROVISIONER, ''),
      expectedShould: true,
    },
    {
      name: 'should provision based on additionalProvisionerNames',
      provisionerName: 'csi.com/mock-csi',
      additionalProvisionerNames: [PROVISIONER, 'foo.xyz/baz'],
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', PROVISIONER, ''),
      expectedShould: true,
    },
    {
      name: 'claim already bound',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', PROVISIONER, 'foo'),
      expectedShould: false,
    },
    {
      name: 'no such class',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-2', '', ''),
      expectedShould: false,
    },
    {
      name: "not this provisioner's job",
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', 'abc.def/ghi'),
      claim: newClaim('claim-1', '1-1', 'class-1', 'abc.def/ghi', ''),
      expectedShould: false,
    },
    // Kubernetes 1.5 provisioning: only the beta annotation is set and evaluated.
    {
      name: 'unknown provisioner annotation 1.5',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', '', '', { [ANN_BETA_STORAGE_PROVISIONER]: 'abc.def/ghi' }),
      expectedShould: false,
    },
    // Kubernetes 1.5 provisioning: the beta annotation is not set.
    {
      name: 'no provisioner annotation 1.5',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', '', ''),
      expectedShould: false,
    },
    // Kubernetes 1.23 provisioning: the GA annotation is set.
    {
      name: 'unknown provisioner annotation 1.23',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', '', '', { [ANN_STORAGE_PROVISIONER]: 'abc.def/ghi' }),
      expectedShould: false,
    },
    {
      name: 'qualifier says no',
      provisionerName: PROVISIONER,
      provisioner: qualifiedProvisioner(false),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', PROVISIONER, ''),
      expectedShould: false,
    },
    {
      name: 'qualifier says yes, should provision',
      provisionerName: PROVISIONER,
      provisioner: qualifiedProvisioner(true),
      class: newStorageClass('class-1', PROVISIONER),
      claim: newClaim('claim-1', '1-1', 'class-1', PROVISIONER, ''),
      expectedShould: true,
    },
    {
      name: 'if PVC is in delay binding mode, should not provision if annSelectedNode is not set',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER, WFFC),
      claim: newClaim('claim-1', '1-1', 'class-1', '', '', { [ANN_BETA_STORAGE_PROVISIONER]: PROVISIONER }),
      expectedShould: false,
    },
    {
      name: 'if PVC is in delay binding mode, should provision if annSelectedNode is set',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER, WFFC),
      claim: newClaim('claim-1', '1-1', 'class-1', '', '', {
        [ANN_BETA_STORAGE_PROVISIONER]: PROVISIONER,
        [ANN_SELECTED_NODE]: 'node1',
      }),
      expectedShould: true,
    },
    {
      name: 'if PVC is in delay binding mode, should provision if annSelectedNode is set with annStorageProvisioner',
      provisionerName: PROVISIONER,
      provisioner: testProvisioner(),
      class: newStorageClass('class-1', PROVISIONER, WFFC),
      claim: newClaim('claim-1', '1-1', 'class-1', '', '', {
        [ANN_STORAGE_PROVISIONER]: PROVISIONER,
        [ANN_SELECTED_NODE]: 'node1',
      }),
      expectedShould: true,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      // The class is "added to the class cache", as the Go test does with ctrl.classes.Add.
      const cache = new Map([[c.class.metadata?.name ?? '', c.class]]);
      const ctx: ClaimContext = {
        provisioner: c.provisioner,
        knownNames: new Set([c.provisionerName, ...(c.additionalProvisionerNames ?? [])]),
        getClass: (name) => cache.get(name),
      };
      // No Go case expects an error: a rejection fails the test.
      await expect(shouldProvision(ctx, c.claim, signal)).resolves.toBe(c.expectedShould);
    });
  }
});

describe('TestShouldDelete', () => {
  const owned = { [ANN_PROVISIONED_BY]: PROVISIONER };
  const cases: {
    name: string;
    provisionerName: string;
    volume: V1PersistentVolume;
    deletionTimestamp?: boolean;
    expectedShould: boolean;
  }[] = [
    {
      name: 'should delete',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Released', 'Delete', owned),
      expectedShould: true,
    },
    {
      name: "failed: shouldn't delete",
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Failed', 'Delete', owned),
      expectedShould: false,
    },
    {
      name: 'volume still bound',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Bound', 'Delete', owned),
      expectedShould: false,
    },
    {
      name: 'non-delete reclaim policy',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Released', 'Retain', owned),
      expectedShould: false,
    },
    {
      name: 'non-nil deletion timestamp',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Released', 'Delete', owned),
      deletionTimestamp: true,
      expectedShould: false,
    },
    {
      name: 'nil deletion timestamp',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Released', 'Delete', owned),
      expectedShould: true,
    },
    {
      name: 'migrated to',
      provisionerName: 'csi.driver',
      volume: newVolume('volume-1', 'Released', 'Delete', {
        [ANN_PROVISIONED_BY]: PROVISIONER,
        [ANN_MIGRATED_TO]: 'csi.driver',
      }),
      expectedShould: true,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const pv = withDeletionTimestamp(c.volume, c.deletionTimestamp === true);
      // AddFinalizer false, as the Go test's controller. shouldDelete no longer looks at the provisioner name (the
      // controller checks ownership first, with isProvisionerForVolume); the name only matters for that check.
      await expect(shouldDelete(testProvisioner(), false, pv, signal)).resolves.toBe(c.expectedShould);
      if (c.name === 'migrated to') {
        // The Go case is named for the ownership the controller checks before: a controller named like the
        // migrated-to annotation owns the volume.
        expect(isProvisionerForVolume(new Set([c.provisionerName]), pv)).toBe(true);
      }
    });
  }
});

describe('TestIsProvisionerForVolume', () => {
  const dyn = { [ANN_PROVISIONED_BY]: PROVISIONER };
  const dynMigrated = { [ANN_PROVISIONED_BY]: PROVISIONER, [ANN_MIGRATED_TO]: PROVISIONER };
  const migrated = { [ANN_MIGRATED_TO]: PROVISIONER };
  const cases: { name: string; provisionerName: string; volume: V1PersistentVolume; expectedShould: boolean }[] = [
    {
      name: 'known dynamically provisioned in-tree volume',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Available', 'Delete', dyn),
      expectedShould: true,
    },
    {
      name: 'known dynamically provisioned in-tree migrated volume',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Available', 'Delete', dynMigrated),
      expectedShould: true,
    },
    {
      name: 'unknown dynamically provisioned in-tree volume',
      provisionerName: 'foo.bar1/baz1',
      volume: newVolume('volume-1', 'Available', 'Delete', dyn),
      expectedShould: false,
    },
    {
      name: 'unknown dynamically provisioned in-tree migrated volume',
      provisionerName: 'foo.bar1/baz1',
      volume: newVolume('volume-1', 'Available', 'Delete', dynMigrated),
      expectedShould: false,
    },
    {
      name: 'known dynamically provisioned csi volume',
      provisionerName: PROVISIONER,
      volume: newCSIVolume('volume-1', 'Bound', 'Delete', PROVISIONER, dyn),
      expectedShould: true,
    },
    {
      name: 'unknown dynamically provisioned csi volume',
      provisionerName: 'foo.bar1/baz1',
      volume: newCSIVolume('volume-1', 'Bound', 'Delete', PROVISIONER, dyn),
      expectedShould: false,
    },
    {
      name: 'known statically provisioned csi volume',
      provisionerName: PROVISIONER,
      volume: newCSIVolume('volume-1', 'Bound', 'Delete', PROVISIONER),
      expectedShould: true,
    },
    {
      name: 'unknown statically provisioned csi volume',
      provisionerName: 'foo.bar1/baz1',
      volume: newCSIVolume('volume-1', 'Bound', 'Delete', PROVISIONER),
      expectedShould: false,
    },
    // Always false for statically provisioned in-tree volumes.
    {
      name: 'statically provisioned in-tree volume always return false',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Available', 'Delete'),
      expectedShould: false,
    },
    {
      name: 'known statically provisioned in-tree migrate volume',
      provisionerName: PROVISIONER,
      volume: newVolume('volume-1', 'Available', 'Delete', migrated),
      expectedShould: true,
    },
    {
      name: 'unknown statically provisioned in-tree migrate volume',
      provisionerName: 'foo.bar1/baz1',
      volume: newVolume('volume-1', 'Available', 'Delete', migrated),
      expectedShould: false,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      expect(isProvisionerForVolume(new Set([c.provisionerName]), c.volume)).toBe(c.expectedShould);
    });
  }
});

describe('TestShouldDeleteWithFinalizer', () => {
  const owned = { [ANN_PROVISIONED_BY]: PROVISIONER };
  const cases: { name: string; volume: V1PersistentVolume; deletionTimestamp?: boolean; expectedShould: boolean }[] = [
    // A normal deletion: the PVC is deleted, the PV (Delete policy) is Released and carries the finalizer
    // syncVolume added earlier.
    {
      name: 'should delete with finalizer present and no deletionTimestamp',
      volume: newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER]),
      expectedShould: true,
    },
    // The PV was deleted first (finalizer already added), then the PVC: Released with a deletionTimestamp.
    {
      name: 'should delete with finalizer present and with deletionTimestamp',
      volume: newVolume('volume-1', 'Released', 'Delete', owned, [FINALIZER]),
      deletionTimestamp: true,
      expectedShould: true,
    },
    // Some other update of a bound PV that has the finalizer.
    {
      name: 'should not delete when volume still bound and the finalizer exists with no deletionTimestamp',
      volume: newVolume('volume-1', 'Bound', 'Delete', owned, [FINALIZER]),
      expectedShould: false,
    },
    // The reclaim policy was changed to Retain and syncVolume removed the finalizer.
    {
      name: 'should not delete for non-delete reclaim policy',
      volume: newVolume('volume-1', 'Released', 'Retain', owned, []),
      expectedShould: false,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const pv = withDeletionTimestamp(c.volume, c.deletionTimestamp === true);
      await expect(shouldDelete(testProvisioner(), true, pv, signal)).resolves.toBe(c.expectedShould);
    });
  }
});

describe('TestRemoveFinalizer', () => {
  const cases: {
    name: string;
    finalizers: string[] | undefined;
    expectedFinalizers: string[] | undefined;
    expectedModified: boolean;
  }[] = [
    {
      name: 'ensure the finalizer removal returns nil finalizers and modified',
      finalizers: [FINALIZER],
      expectedFinalizers: undefined,
      expectedModified: true,
    },
    {
      name: 'if finalizer does not exist then it should not be modified',
      finalizers: ['dummy'],
      expectedFinalizers: ['dummy'],
      expectedModified: false,
    },
    {
      name: 'remove only the finalizerToAdd from multiple finalizers',
      finalizers: ['dummy', FINALIZER],
      expectedFinalizers: ['dummy'],
      expectedModified: true,
    },
    {
      name: 'no modified if the original finalizer is empty',
      finalizers: [],
      expectedFinalizers: undefined,
      expectedModified: false,
    },
    {
      name: 'remove from nil finalizer',
      finalizers: undefined,
      expectedFinalizers: undefined,
      expectedModified: false,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const original = c.finalizers === undefined ? undefined : [...c.finalizers];
      const [finalizers, modified] = removeFinalizer(c.finalizers, FINALIZER);
      expect(modified).toBe(c.expectedModified);
      // Go nil is undefined here (the PATCH then sends null).
      expect(finalizers).toEqual(c.expectedFinalizers);
      // The input is not mutated.
      expect(c.finalizers).toEqual(original);
      if (finalizers !== undefined && c.finalizers !== undefined) expect(finalizers).not.toBe(c.finalizers);
    });
  }
});

describe('TestAddFinalizer', () => {
  const cases: {
    name: string;
    finalizers: string[] | undefined;
    expectedFinalizers: string[];
    expectedModified: boolean;
  }[] = [
    {
      name: 'if finalizer already exists then no modification needed',
      finalizers: [FINALIZER],
      expectedFinalizers: [FINALIZER],
      expectedModified: false,
    },
    {
      name: 'if original finalizer is nil then return with finalizer to add',
      finalizers: undefined,
      expectedFinalizers: [FINALIZER],
      expectedModified: true,
    },
    {
      name: 'if original finalizer is empty then return with finalizer to add',
      finalizers: [],
      expectedFinalizers: [FINALIZER],
      expectedModified: true,
    },
    {
      name: 'ensure finalizers are appended to existing finalizer',
      finalizers: ['dummy'],
      expectedFinalizers: ['dummy', FINALIZER],
      expectedModified: true,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const original = c.finalizers === undefined ? undefined : [...c.finalizers];
      const [finalizers, modified] = addFinalizer(c.finalizers, FINALIZER);
      expect(modified).toBe(c.expectedModified);
      expect(finalizers).toEqual(c.expectedFinalizers);
      // Not in the Go test (Go's append may alias), but the TS helper promises a new list: the input is not mutated.
      expect(c.finalizers).toEqual(original);
      if (c.finalizers !== undefined) expect(finalizers).not.toBe(c.finalizers);
    });
  }
});

describe('TestCanProvision', () => {
  const blockError = `${PROVISIONER} does not support block volume provisioning`;
  const claim = (mode?: 'Filesystem' | 'Block'): V1PersistentVolumeClaim =>
    newClaim('claim-1', '1-1', 'class-1', PROVISIONER, '', {}, mode);
  const cases: {
    name: string;
    provisioner: Provisioner;
    claim: V1PersistentVolumeClaim;
    expectedCan: string | undefined;
  }[] = [
    // volumeMode with a provisioner without the BlockProvisioner interface
    {
      name: 'Undefined volumeMode PV request to provisioner w/o BlockProvisoner I/F',
      provisioner: testProvisioner(),
      claim: claim(),
      expectedCan: undefined,
    },
    {
      name: 'FileSystem volumeMode PV request to provisioner w/o BlockProvisoner I/F',
      provisioner: testProvisioner(),
      claim: claim('Filesystem'),
      expectedCan: undefined,
    },
    {
      name: 'Block volumeMode PV request to provisioner w/o BlockProvisoner I/F',
      provisioner: testProvisioner(),
      claim: claim('Block'),
      expectedCan: blockError,
    },
    // volumeMode with a BlockProvisioner that answers false
    {
      name: 'Undefined volumeMode PV request to BlockProvisoner that returns false',
      provisioner: blockProvisioner(false),
      claim: claim(),
      expectedCan: undefined,
    },
    {
      name: 'FileSystem volumeMode PV request to BlockProvisoner that returns false',
      provisioner: blockProvisioner(false),
      claim: claim('Filesystem'),
      expectedCan: undefined,
    },
    {
      name: 'Block volumeMode PV request to BlockProvisoner that returns false',
      provisioner: blockProvisioner(false),
      claim: claim('Block'),
      expectedCan: blockError,
    },
    // volumeMode with a BlockProvisioner that answers true
    {
      name: 'Undefined volumeMode PV request to BlockProvisoner that returns true',
      provisioner: blockProvisioner(true),
      claim: claim(),
      expectedCan: undefined,
    },
    {
      name: 'FileSystem volumeMode PV request to BlockProvisoner that returns true',
      provisioner: blockProvisioner(true),
      claim: claim('Filesystem'),
      expectedCan: undefined,
    },
    {
      name: 'Block volumeMode PV request to BlockProvisioner that returns true',
      provisioner: blockProvisioner(true),
      claim: claim('Block'),
      expectedCan: undefined,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      // Go returns an error (nil when possible); the TS function returns its message (undefined when possible).
      await expect(canProvision(c.provisioner, PROVISIONER, c.claim, signal)).resolves.toBe(c.expectedCan);
    });
  }
});
