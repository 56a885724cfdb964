/**
 * Pieces shared by the PV, PVC and pod volume rules (`pkg/apis/core/validation`, Kubernetes 1.32): volume-source
 * checks, node selectors, access modes and quantities.
 */

import { forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';
import { asArr, asObj, asStr, byteLen, index, parseQuantity, tooLong } from './util.js';
import type { Obj } from './util.js';

/** Supported access modes, sorted as `sets.List` prints them. */
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
/** Supported volume modes. */
export const VOLUME_MODES = ['Block', 'Filesystem'];
const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/** `validatePathNoBacksteps`. */
export function validatePathNoBacksteps(p: string, path: string): FieldError[] {
  return p.split('/').includes('..') ? [invalidValue(path, p, "must not contain '..'")] : [];
}

/** `validateHostPathVolumeSource`, shared with pod volumes. */
export function validateHostPath(source: Obj, path: string): FieldError[] {
  const p = asStr(source.path);
  if (p === '') return [required(`${path}.path`)];
  const errs = validatePathNoBacksteps(p, `${path}.path`);
  if (typeof source.type === 'string' && !HOST_PATH_TYPES.includes(source.type)) {
    errs.push(notSupported(`${path}.type`, source.type, HOST_PATH_TYPES));
  }
  return errs;
}

/** `validateNFSVolumeSource`, shared with pod volumes. */
export function validateNFS(source: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const p = asStr(source.path);
  if (asStr(source.server) === '') errs.push(required(`${path}.server`));
  if (p === '') errs.push(required(`${path}.path`));
  if (!p.startsWith('/')) errs.push(invalidValue(`${path}.path`, p, 'must be an absolute path'));
  return errs;
}

/** `ValidateCSIDriverName`. */
export function validateCSIDriverName(driver: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (driver === '') errs.push(required(path));
  if (byteLen(driver) > 63) errs.push(tooLong(path, 63));
  for (const m of isDNS1123Subdomain(driver.toLowerCase())) errs.push(invalidValue(path, driver, m));
  return errs;
}

/** `validatePVSecretReference`. */
export function validateSecretRef(ref: unknown, path: string): FieldError[] {
  const r = asObj(ref);
  if (r === undefined) return [];
  const errs: FieldError[] = [];
  const name = asStr(r.name);
  const ns = asStr(r.namespace);
  if (name === '') errs.push(required(`${path}.name`));
  else for (const m of isDNS1123Subdomain(name)) errs.push(invalidValue(`${path}.name`, name, m));
  if (ns === '') errs.push(required(`${path}.namespace`));
  else for (const m of isDNS1123Label(ns)) errs.push(invalidValue(`${path}.namespace`, ns, m));
  return errs;
}

/** `ValidateNodeSelector` (as used by PV node affinity): terms required, requirement operators, keys and values. */
export function validateNodeSelector(selector: Obj, path: string): FieldError[] {
  const termsPath = `${path}.nodeSelectorTerms`;
  const terms = asArr(selector.nodeSelectorTerms);
  if (terms.length === 0) return [required(termsPath, 'must have at least one node selector term')];
  const errs: FieldError[] = [];
  terms.forEach((t, i) => {
    const term = asObj(t) ?? {};
    asArr(term.matchExpressions).forEach((r, j) => {
      const req = asObj(r) ?? {};
      const p = index(`${index(termsPath, i)}.matchExpressions`, j);
      const values = asArr(req.values).map(asStr);
      const op = asStr(req.operator);
      if (op === 'In' || op === 'NotIn') {
        if (values.length === 0)
          errs.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      } else if (op === 'Exists' || op === 'DoesNotExist') {
        if (values.length > 0)
          errs.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      } else if (op === 'Gt' || op === 'Lt') {
        if (values.length !== 1)
          errs.push(required(`${p}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      } else {
        errs.push(invalidValue(`${p}.operator`, op, 'not a valid selector operator'));
      }
      for (const m of isQualifiedName(asStr(req.key))) errs.push(invalidValue(`${p}.key`, asStr(req.key), m));
      values.forEach((v, k) => {
        for (const m of isValidLabelValue(v)) errs.push(invalidValue(index(`${p}.values`, k), v, m));
      });
    });
    asArr(term.matchFields).forEach((r, j) => {
      const req = asObj(r) ?? {};
      const p = index(`${index(termsPath, i)}.matchFields`, j);
      const values = asArr(req.values).map(asStr);
      const op = asStr(req.operator);
      if (op === 'In' || op === 'NotIn') {
        if (values.length !== 1) {
          errs.push(
            required(
              `${p}.values`,
              "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            ),
          );
        }
      } else {
        errs.push(invalidValue(`${p}.operator`, op, 'not a valid selector operator'));
      }
      if (asStr(req.key) !== 'metadata.name')
        errs.push(invalidValue(`${p}.key`, asStr(req.key), 'not a valid field selector key'));
      else
        values.forEach((v, k) =>
          isDNS1123Subdomain(v).forEach((m) => errs.push(invalidValue(index(`${p}.values`, k), v, m))),
        );
    });
  });
  return errs;
}

/** The per-value access-mode rules (the "required" rule differs between PV and PVC and is applied by the callers). */
export function validateAccessModeValues(modes: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let rwop = false;
  let other = false;
  for (const m of asArr(modes).map(asStr)) {
    if (!ACCESS_MODES.includes(m)) errs.push(notSupported(path, m, ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (ACCESS_MODES.includes(m)) other = true;
  }
  if (rwop && other) errs.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** `ValidatePositiveQuantityValue` for a quantity given as JSON. */
export function positiveQuantity(value: unknown, path: string): FieldError[] {
  const q = parseQuantity(value);
  if (q !== undefined && q <= 0)
    return [invalidValue(path, typeof value === 'number' ? String(value) : asStr(value), 'must be greater than zero')];
  return [];
}
