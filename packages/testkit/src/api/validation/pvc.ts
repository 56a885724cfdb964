/**
 * PersistentVolumeClaim rules after `pkg/apis/core/validation` (ValidatePersistentVolumeClaim*, Kubernetes 1.32).
 */

import { forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateLabelSelector, validateObjectMeta } from './meta.js';
import { isDNS1123Subdomain, nameIsDNSLabel, nameIsDNSSubdomain } from './names.js';
import { VOLUME_MODES, positiveQuantity, validateAccessModeValues } from './sources.js';
import { asArr, asObj, asStr, diffLines, key, parseQuantity, semanticEqual } from './util.js';
import type { Obj } from './util.js';

const STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

function validateTypedRef(ref: Obj, path: string, withNamespace: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const kind = asStr(ref.kind);
  const apiGroup = asStr(ref.apiGroup);
  if (asStr(ref.name) === '') errs.push(required(`${path}.name`));
  if (kind === '') errs.push(required(`${path}.kind`));
  if (apiGroup === '' && kind !== 'PersistentVolumeClaim') {
    errs.push(invalidValue(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  }
  if (apiGroup !== '')
    for (const m of isDNS1123Subdomain(apiGroup)) errs.push(invalidValue(`${path}.apiGroup`, apiGroup, m));
  const ns = asStr(ref.namespace);
  if (withNamespace && ns !== '')
    for (const m of nameIsDNSLabel(ns, false)) errs.push(invalidValue(`${path}.namespace`, ns, m));
  return errs;
}

/** `ValidatePersistentVolumeClaimSpec` (also used for ephemeral volume claim templates). */
export function validatePVCSpec(spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (asArr(spec.accessModes).length === 0)
    errs.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  errs.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  errs.push(...validateAccessModeValues(spec.accessModes, `${path}.accessModes`));
  const requests = asObj(asObj(spec.resources)?.requests) ?? {};
  const storagePath = key(`${path}.resources`, 'storage');
  if (!('storage' in requests)) errs.push(required(storagePath));
  else errs.push(...positiveQuantity(requests.storage, storagePath));
  const className = spec.storageClassName;
  if (typeof className === 'string' && className !== '') {
    for (const m of nameIsDNSSubdomain(className, false))
      errs.push(invalidValue(`${path}.storageClassName`, className, m));
  }
  if (typeof spec.volumeMode === 'string' && !VOLUME_MODES.includes(spec.volumeMode)) {
    errs.push(notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  }
  const ds = asObj(spec.dataSource);
  const dsRef = asObj(spec.dataSourceRef);
  if (ds !== undefined) errs.push(...validateTypedRef(ds, `${path}.dataSource`, false));
  if (dsRef !== undefined) errs.push(...validateTypedRef(dsRef, `${path}.dataSourceRef`, true));
  if (dsRef !== undefined && asStr(dsRef.namespace) !== '') {
    if (ds !== undefined)
      errs.push(
        invalidValue(path, `${path}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified'),
      );
  } else if (ds !== undefined && dsRef !== undefined) {
    if (
      asStr(ds.apiGroup) !== asStr(dsRef.apiGroup) ||
      asStr(ds.kind) !== asStr(dsRef.kind) ||
      asStr(ds.name) !== asStr(dsRef.name)
    ) {
      errs.push(invalidValue(path, `${path}.dataSource`, 'must match dataSourceRef'));
    }
  }
  return errs;
}

/** Validates a PersistentVolumeClaim on create. */
export function validatePVC(obj: Obj): FieldError[] {
  return [
    ...validateObjectMeta(obj.metadata, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: true }),
    ...validatePVCSpec(asObj(obj.spec) ?? {}, 'spec'),
  ];
}

/** Validates a PersistentVolumeClaim update: the spec is frozen except the documented exceptions. */
export function validatePVCUpdate(obj: Obj, old: Obj): FieldError[] {
  const errs = validatePVC(obj);
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  const newClone: Obj = structuredClone(spec);
  const oldClone: Obj = structuredClone(oldSpec);
  const newAnn = asObj(asObj(obj.metadata)?.annotations) ?? {};
  const oldAnn = asObj(asObj(old.metadata)?.annotations) ?? {};
  // The PV controller sets volumeName once.
  if (asStr(oldSpec.volumeName) === '') oldClone.volumeName = newClone.volumeName;
  const oldHasAnn = STORAGE_CLASS_ANNOTATION in oldAnn;
  const oldSc = oldSpec.storageClassName;
  const newSc = spec.storageClassName;
  const upgradeFromAnnotation =
    oldHasAnn &&
    (oldSc === undefined || oldSc === null) &&
    typeof newSc === 'string' &&
    newSc === asStr(oldAnn[STORAGE_CLASS_ANNOTATION]) &&
    (!(STORAGE_CLASS_ANNOTATION in newAnn) || newAnn[STORAGE_CLASS_ANNOTATION] === oldAnn[STORAGE_CLASS_ANNOTATION]);
  if (upgradeFromAnnotation) {
    delete newClone.storageClassName;
  } else {
    const newVal = asStr(newAnn[STORAGE_CLASS_ANNOTATION]);
    if (newVal !== asStr(oldAnn[STORAGE_CLASS_ANNOTATION])) {
      errs.push(invalidValue(`metadata.annotations.${STORAGE_CLASS_ANNOTATION}`, newVal, 'field is immutable'));
    }
    const fromNil =
      typeof newSc === 'string' &&
      (oldSc === undefined || oldSc === null) &&
      (!oldHasAnn || newSc === asStr(oldAnn[STORAGE_CLASS_ANNOTATION]));
    if (fromNil) delete newClone.storageClassName;
  }
  // The store keeps the stored status on a spec update, so the old phase is the claim's phase.
  const bound = asStr(asObj(old.status)?.phase) === 'Bound';
  const newRequests = asObj(asObj(newClone.resources)?.requests);
  if (bound && newRequests !== undefined) {
    const oldStorage = asObj(asObj(oldSpec.resources)?.requests)?.storage;
    if (oldStorage === undefined) delete newRequests.storage;
    else newRequests.storage = oldStorage;
  }
  if (bound && newClone.volumeAttributesClassName !== undefined)
    newClone.volumeAttributesClassName = oldClone.volumeAttributesClassName;
  if (!semanticEqual(newClone, oldClone)) {
    errs.push(
      forbidden(
        'spec',
        `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${diffLines('core.PersistentVolumeClaimSpec', oldClone, newClone)}`,
      ),
    );
  }
  const oldSize = parseQuantity(asObj(asObj(oldSpec.resources)?.requests)?.storage) ?? 0;
  const newSize = parseQuantity(asObj(asObj(spec.resources)?.requests)?.storage) ?? 0;
  const statusSize = parseQuantity(asObj(asObj(old.status)?.capacity)?.storage) ?? 0;
  // RecoverVolumeExpansionFailure is on by default in 1.32: shrinking is allowed down to above status.capacity.
  if (newSize < oldSize && newSize <= statusSize) {
    errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  }
  if (!semanticEqual(spec.volumeMode, oldSpec.volumeMode))
    errs.push(invalidValue('volumeMode', spec.volumeMode, 'field is immutable'));
  return errs;
}

/** Validates a PersistentVolumeClaim status update (`ValidatePersistentVolumeClaimStatusUpdate`, light). */
export function validatePVCStatus(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (asArr(asObj(obj.spec)?.accessModes).length === 0) errs.push(required('Spec.accessModes'));
  for (const [k, v] of Object.entries(asObj(asObj(obj.status)?.capacity) ?? {})) {
    const q = parseQuantity(v);
    if (q !== undefined && q < 0)
      errs.push(invalidValue(key('status.capacity', k), Math.ceil(q), 'must be a valid resource quantity'));
  }
  return errs;
}
