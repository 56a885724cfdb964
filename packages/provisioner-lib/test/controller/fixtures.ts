/**
 * Fixtures of the Go library's controller_test.go, in the same shapes: classes, claims, volumes, the expected
 * provisioned volume, and the test provisioners.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1TopologySelectorTerm,
} from '@kubernetes/client-node';
import {
  IgnoredError,
  ProvisioningError,
  ProvisioningState,
  type ProvisionOptions,
  type Provisioner,
} from '../../src/controller/provisioner.js';

export const PROVISIONER = 'foo.bar/baz';
export const FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';

export function newStorageClass(
  name: string,
  provisioner: string,
  extra: Partial<V1StorageClass> = {},
): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner,
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

export function newStorageClassWithAllowedTopologies(
  name: string,
  provisioner: string,
  terms: V1TopologySelectorTerm[],
): V1StorageClass {
  return newStorageClass(name, provisioner, { allowedTopologies: terms });
}

export function newClaim(
  name: string,
  uid: string,
  className: string,
  provisioner: string,
  volumeName: string,
  annotations: Record<string, string> = {},
  volumeMode?: 'Block' | 'Filesystem',
): V1PersistentVolumeClaim {
  const ann: Record<string, string> = {};
  if (provisioner !== '') ann['volume.beta.kubernetes.io/storage-provisioner'] = provisioner;
  Object.assign(ann, annotations);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', uid, ...(Object.keys(ann).length > 0 ? { annotations: ann } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      resources: { requests: { storage: '1Mi' } },
      storageClassName: className,
      ...(volumeName === '' ? {} : { volumeName }),
      ...(volumeMode === undefined ? {} : { volumeMode }),
    },
  };
}

export function newVolume(
  name: string,
  phase: string,
  policy: string,
  annotations: Record<string, string> = {},
  finalizers?: string[],
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(finalizers === undefined ? {} : { finalizers }),
    },
    spec: {
      persistentVolumeReclaimPolicy: policy,
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      capacity: { storage: '1Mi' },
      nfs: { server: 'foo', path: '/bar' },
    },
    status: { phase },
  };
}

export function newCSIVolume(
  name: string,
  phase: string,
  policy: string,
  driver: string,
  annotations: Record<string, string> = {},
): V1PersistentVolume {
  const pv = newVolume(name, phase, policy, annotations);
  pv.spec = {
    persistentVolumeReclaimPolicy: policy,
    accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
    capacity: { storage: '1Mi' },
    csi: { driver, volumeHandle: 'test-volume-id-1', fsType: 'ext4' },
  };
  return pv;
}

/** The PV the test provisioner returns for a claim (before the controller adds claimRef and annotations). */
export function provisionedTemplate(
  cls: V1StorageClass,
  claim: V1PersistentVolumeClaim,
  policy = 'Delete',
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pvc-${claim.metadata?.uid ?? ''}` },
    spec: {
      persistentVolumeReclaimPolicy: policy === 'class' ? (cls.reclaimPolicy ?? 'Delete') : policy,
      accessModes: claim.spec?.accessModes ?? [],
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? '' },
      nfs: { server: 'foo', path: '/bar' },
    },
  };
}

/** What a provisioned PV looks like in the API after the controller saved it (Go `newProvisionedVolume`). */
export function expectedProvisionedVolume(
  cls: V1StorageClass,
  claim: V1PersistentVolumeClaim,
  options: { finalizers?: string[]; policy?: string } = {},
): Record<string, unknown> {
  return {
    metadata: {
      name: `pvc-${claim.metadata?.uid ?? ''}`,
      annotations: { 'pv.kubernetes.io/provisioned-by': cls.provisioner },
      ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
    },
    spec: {
      persistentVolumeReclaimPolicy: options.policy ?? 'Delete',
      accessModes: claim.spec?.accessModes,
      capacity: { storage: claim.spec?.resources?.requests?.storage },
      nfs: { server: 'foo', path: '/bar' },
      storageClassName: cls.metadata?.name,
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: 'default',
        name: claim.metadata?.name,
        uid: claim.metadata?.uid,
      },
    },
  };
}

/** Records every provision call's topology inputs, like the Go test provisioner's channel. */
export interface ProvisionCall {
  selectedNodeName: string;
  allowedTopologies: V1TopologySelectorTerm[] | undefined;
  pvName: string;
}

/** Go `newTestProvisioner`: returns the PV after a short pause; reclaim policy from the class. */
export function testProvisioner(returnError?: Error): Provisioner & { calls: ProvisionCall[]; deleted: string[] } {
  const calls: ProvisionCall[] = [];
  const deleted: string[] = [];
  return {
    calls,
    deleted,
    async provision(o: ProvisionOptions) {
      calls.push({
        selectedNodeName: o.selectedNodeName,
        allowedTopologies: o.storageClass.allowedTopologies,
        pvName: o.pvName,
      });
      if (returnError !== undefined) throw returnError;
      await new Promise((r) => setTimeout(r, 50));
      return { volume: provisionedTemplate(o.storageClass, o.pvc, 'class') };
    },
    async delete(pv) {
      deleted.push(pv.metadata?.name ?? '');
    },
  };
}

/** Go `badTestProvisioner`. */
export function badProvisioner(): Provisioner {
  return {
    provision: async () => {
      throw new Error('fake final error');
    },
    delete: async () => {
      throw new Error('fake error');
    },
  };
}

/** Go `temporaryTestProvisioner`, `rescheduleTestProvisioner`, `noChangeTestProvisioner`. */
export function stateProvisioner(state: ProvisioningState, message: string): Provisioner {
  return {
    provision: async () => {
      throw new ProvisioningError(message, { state });
    },
    delete: async () => undefined,
  };
}

/** Go `ignoredProvisioner`: ignores claim-2, provisions claim-1. */
export function ignoredProvisioner(): Provisioner {
  return {
    async provision(o) {
      if (o.pvc.metadata?.name === 'claim-2') throw new IgnoredError('Ignored');
      return { volume: provisionedTemplate(o.storageClass, o.pvc) };
    },
    delete: async () => undefined,
  };
}

/** Go `extProvisioner`: checks the PV name, returns a PV or fails with the given state. */
export function extProvisioner(pvName: string | (() => string), state: ProvisioningState, error?: Error): Provisioner {
  return {
    async provision(o) {
      const want = typeof pvName === 'string' ? pvName : pvName();
      if (o.pvName !== want) throw new Error(`expected PV name ${want}, got ${o.pvName}`);
      if (error !== undefined) throw new ProvisioningError(error.message, { state });
      return { volume: provisionedTemplate(o.storageClass, o.pvc) };
    },
    delete: async () => {
      throw new Error('Not implemented');
    },
  };
}

/** Go `qualifiedTestProvisioner` and `blockTestProvisioner`. */
export function qualifiedProvisioner(answer: boolean): Provisioner {
  return { ...testProvisioner(), shouldProvision: () => answer };
}

export function blockProvisioner(answer: boolean): Provisioner {
  return { ...testProvisioner(), supportsBlock: () => answer };
}

export { ProvisioningState };
