/**
 * StorageClass rules after `pkg/apis/storage/validation` (ValidateStorageClass, ValidateStorageClassUpdate), Kubernetes 1.32.
 */

import { duplicate, forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateObjectMeta } from './meta.js';
import { isQualifiedName, nameIsDNSSubdomain } from './names.js';
import { asArr, asObj, asStr, byteLen, index, semanticEqual, tooLong } from './util.js';
import type { Obj } from './util.js';

const SC_RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];

function validateTopologies(topologies: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen: Obj[] = [];
  asArr(topologies).forEach((t, i) => {
    const exprs: Obj = {};
    asArr(asObj(t)?.matchLabelExpressions).forEach((e, j) => {
      const req = asObj(e) ?? {};
      const p = index(`${index(path, i)}.matchLabelExpressions`, j);
      const values = asArr(req.values).map(asStr);
      const k = asStr(req.key);
      if (values.length === 0) errs.push(required(`${p}.values`));
      values.forEach((v, n) => {
        if (values.indexOf(v) !== n) errs.push(duplicate(index(`${p}.values`, n), v));
      });
      for (const m of isQualifiedName(k)) errs.push(invalidValue(`${p}.key`, k, m));
      if (k in exprs) errs.push(duplicate(`${p}.key`, k));
      exprs[k] = [...new Set(values)].sort();
    });
    if (seen.some((s) => semanticEqual(s, exprs))) errs.push(duplicate(`${index(path, i)}.matchLabelExpressions`, ''));
    seen.push(exprs);
  });
  return errs;
}

/** Validates a StorageClass on create. */
export function validateStorageClass(obj: Obj): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, {
    nameFn: nameIsDNSSubdomain,
    namespaced: false,
    kubeFinalizers: true,
  });
  const provisioner = asStr(obj.provisioner);
  if (provisioner === '') errs.push(required('provisioner'));
  else
    for (const m of isQualifiedName(provisioner.toLowerCase())) errs.push(invalidValue('provisioner', provisioner, m));
  const params = Object.entries(asObj(obj.parameters) ?? {});
  if (params.length > 512) {
    errs.push(tooLong('parameters', 512));
  } else {
    let size = 0;
    for (const [k, v] of params) {
      if (k.length < 1) errs.push(invalidValue('parameters', k, 'field can not be empty.'));
      size += byteLen(k) + byteLen(asStr(v));
    }
    if (size > 256 * 1024) errs.push(tooLong('parameters', 256 * 1024));
  }
  const reclaim = asStr(obj.reclaimPolicy);
  if (reclaim !== '' && !SC_RECLAIM_POLICIES.includes(reclaim))
    errs.push(notSupported('reclaimPolicy', reclaim, SC_RECLAIM_POLICIES));
  if (obj.volumeBindingMode === undefined || obj.volumeBindingMode === null) errs.push(required('volumeBindingMode'));
  else if (!BINDING_MODES.includes(asStr(obj.volumeBindingMode))) {
    errs.push(notSupported('volumeBindingMode', obj.volumeBindingMode, BINDING_MODES));
  }
  errs.push(...validateTopologies(obj.allowedTopologies, 'allowedTopologies'));
  return errs;
}

/** Validates a StorageClass update: parameters, provisioner, reclaimPolicy and volumeBindingMode are frozen. */
export function validateStorageClassUpdate(obj: Obj, old: Obj): FieldError[] {
  const errs = validateStorageClass(obj);
  if (!semanticEqual(obj.parameters, old.parameters))
    errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (asStr(obj.provisioner) !== asStr(old.provisioner))
    errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (asStr(obj.reclaimPolicy) !== asStr(old.reclaimPolicy))
    errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (!semanticEqual(obj.volumeBindingMode, old.volumeBindingMode)) {
    errs.push(invalidValue('volumeBindingMode', obj.volumeBindingMode, 'field is immutable'));
  }
  return errs;
}
