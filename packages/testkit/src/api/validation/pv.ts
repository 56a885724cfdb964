/**
 * PersistentVolume rules after `pkg/apis/core/validation` (ValidatePersistentVolume, ValidatePersistentVolumeUpdate)
 * and `pkg/volume/validation`, Kubernetes 1.32.
 */

import { forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateObjectMeta } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';
import {
  VOLUME_MODES,
  positiveQuantity,
  validateAccessModeValues,
  validateCSIDriverName,
  validateHostPath,
  validateNFS,
  validateNodeSelector,
  validatePathNoBacksteps,
  validateSecretRef,
} from './sources.js';
import { asArr, asObj, asStr, diffLines, key, notSupportedRaw, parseQuantity, semanticEqual } from './util.js';
import type { Obj } from './util.js';

const PV_RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];

/**
 * PersistentVolumeSource members in the order ValidatePersistentVolumeSpec visits them, with the path segment it
 * reports "more than 1 volume type" under (`cephfs` is reported as `cephFS`, as upstream does).
 */
const PV_SOURCES: readonly (readonly [string, string])[] = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['nfs', 'nfs'],
  ['rbd', 'rbd'],
  ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'],
  ['iscsi', 'iscsi'],
  ['cinder', 'cinder'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO'],
  ['local', 'local'],
  ['storageos', 'storageos'],
  ['csi', 'csi'],
];

/** Sources that accept the legacy mount-options annotation (`pkg/volume/validation`). */
const MOUNT_OPTION_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
];

function validatePVSource(name: string, source: Obj, path: string): FieldError[] {
  switch (name) {
    case 'hostPath':
      return validateHostPath(source, path);
    case 'nfs':
      return validateNFS(source, path);
    case 'local': {
      const p = asStr(source.path);
      return p === '' ? [required(`${path}.path`)] : validatePathNoBacksteps(p, `${path}.path`);
    }
    case 'csi': {
      const errs = validateCSIDriverName(asStr(source.driver), `${path}.driver`);
      if (asStr(source.volumeHandle) === '') errs.push(required(`${path}.volumeHandle`));
      for (const ref of [
        'controllerPublishSecretRef',
        'controllerExpandSecretRef',
        'nodePublishSecretRef',
        'nodeExpandSecretRef',
      ]) {
        errs.push(...validateSecretRef(source[ref], `${path}.${ref}`));
      }
      return errs;
    }
    default:
      return [];
  }
}

/** `ValidatePersistentVolumeSpec` for a standalone (non-inline) PV. */
function validatePVSpec(spec: Obj, annotations: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (asArr(spec.accessModes).length === 0) errs.push(required('spec.accessModes'));
  errs.push(...validateAccessModeValues(spec.accessModes, 'spec.accessModes'));
  const capacity = asObj(spec.capacity) ?? {};
  const capKeys = Object.keys(capacity);
  if (capKeys.length === 0) errs.push(required('spec.capacity'));
  if (!('storage' in capacity) || capKeys.length > 1) {
    // Go prints the ResourceList with %#v; only the empty forms can be reproduced exactly.
    const empty = asObj(spec.capacity) === undefined ? 'core.ResourceList(nil)' : 'core.ResourceList{}';
    errs.push(
      capKeys.length === 0
        ? notSupportedRaw('spec.capacity', empty, ['storage'])
        : notSupported('spec.capacity', capacity, ['storage']),
    );
  }
  for (const k of capKeys) {
    const q = parseQuantity(capacity[k]);
    if (q !== undefined && q < 0)
      errs.push(invalidValue(key('spec.capacity', k), Math.ceil(q), 'must be a valid resource quantity'));
    errs.push(...positiveQuantity(capacity[k], key('spec.capacity', k)));
  }
  const reclaim = asStr(spec.persistentVolumeReclaimPolicy);
  if (reclaim !== '' && !PV_RECLAIM_POLICIES.includes(reclaim)) {
    errs.push(notSupported('spec.persistentVolumeReclaimPolicy', reclaim, PV_RECLAIM_POLICIES));
  }
  let nodeAffinitySpecified = false;
  const nodeAffinity = asObj(spec.nodeAffinity);
  if (nodeAffinity !== undefined) {
    nodeAffinitySpecified = true;
    const req = asObj(nodeAffinity.required);
    if (req === undefined) errs.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
    else errs.push(...validateNodeSelector(req, 'spec.nodeAffinity.required'));
  }
  let count = 0;
  for (const [name, segment] of PV_SOURCES) {
    const source = asObj(spec[name]);
    if (source === undefined) continue;
    if (count > 0 && name !== 'flexVolume') {
      errs.push(forbidden(`spec.${segment}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    errs.push(...validatePVSource(name, source, `spec.${name}`));
    if (name === 'local' && !nodeAffinitySpecified)
      errs.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (count === 0) errs.push(required('spec', 'must specify a volume type'));
  const hostPath = asObj(spec.hostPath);
  if (hostPath !== undefined && /^\/+$/.test(asStr(hostPath.path)) && reclaim === 'Recycle') {
    errs.push(forbidden('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'"));
  }
  const className = asStr(spec.storageClassName);
  if (className !== '')
    for (const m of nameIsDNSSubdomain(className, false))
      errs.push(invalidValue('spec.storageClassName', className, m));
  if (typeof spec.volumeMode === 'string' && !VOLUME_MODES.includes(spec.volumeMode)) {
    errs.push(notSupported('spec.volumeMode', spec.volumeMode, VOLUME_MODES));
  }
  if (
    'volume.beta.kubernetes.io/mount-options' in annotations &&
    !MOUNT_OPTION_SOURCES.some((s) => spec[s] !== undefined && spec[s] !== null)
  ) {
    errs.push(
      forbidden(
        'metadata.annotations.volume.beta.kubernetes.io/mount-options',
        'may not specify mount options for this volume type',
      ),
    );
  }
  return errs;
}

/** Validates a PersistentVolume on create (`ValidatePersistentVolume` plus the mount-options rule). */
export function validatePV(obj: Obj): FieldError[] {
  const meta = asObj(obj.metadata) ?? {};
  return [
    ...validateObjectMeta(meta, { nameFn: nameIsDNSSubdomain, namespaced: false, kubeFinalizers: true }),
    ...validatePVSpec(asObj(obj.spec) ?? {}, asObj(meta.annotations) ?? {}),
  ];
}

function pvSource(spec: Obj): Obj {
  const out: Obj = {};
  for (const [name] of PV_SOURCES) if (spec[name] !== undefined && spec[name] !== null) out[name] = spec[name];
  return out;
}

/** Validates a PersistentVolume update (the PV strategy's ValidateUpdate). */
export function validatePVUpdate(obj: Obj, old: Obj): FieldError[] {
  const errs = validatePV(obj);
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  const newSource = pvSource(spec);
  const oldSource = pvSource(oldSpec);
  const newCSI = asObj(newSource.csi);
  const oldCSI = asObj(oldSource.csi);
  if (newCSI !== undefined && oldCSI !== undefined && oldCSI.controllerExpandSecretRef === undefined) {
    // A controllerExpandSecretRef may be added to an existing CSI volume.
    const rest = { ...newCSI };
    delete rest.controllerExpandSecretRef;
    newSource.csi = rest;
  }
  if (!semanticEqual(newSource, oldSource)) {
    errs.push(
      forbidden(
        'spec.persistentvolumesource',
        `spec.persistentvolumesource is immutable after creation\n${diffLines('core.PersistentVolumeSource', oldSource, newSource)}`,
      ),
    );
  }
  if (!semanticEqual(spec.volumeMode, oldSpec.volumeMode))
    errs.push(invalidValue('volumeMode', spec.volumeMode, 'field is immutable'));
  if (
    oldSpec.nodeAffinity !== undefined &&
    oldSpec.nodeAffinity !== null &&
    !semanticEqual(spec.nodeAffinity, oldSpec.nodeAffinity)
  ) {
    errs.push(
      invalidValue('nodeAffinity', spec.nodeAffinity, 'field is immutable, except for updating from beta label to GA'),
    );
  }
  return errs;
}
