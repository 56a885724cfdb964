/**
 * ObjectMeta validation: apimachinery's `ValidateObjectMeta` / `ValidateObjectMetaUpdate` (generateName, name,
 * namespace, generation, labels, annotations, ownerReferences, finalizers) plus the core group's extra finalizer rule.
 */

import { forbidden, invalidValue, required } from '../status.js';
import type { FieldError } from '../status.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from './names.js';
import type { NameFn } from './names.js';
import {
  asArr,
  asNum,
  asObj,
  asStr,
  asStringMap,
  byteLen,
  goStringSlice,
  goTime,
  index,
  invalidRaw,
  semanticEqual,
  tooLong,
} from './util.js';
import type { Obj } from './util.js';

/** How a kind's metadata is checked. */
export interface MetaRules {
  /** The kind's name rule. */
  nameFn: NameFn;
  /** Namespaced kinds need a namespace that is a DNS label. */
  namespaced: boolean;
  /** Core-group validation (`pkg/apis/core/validation.ValidateObjectMeta`) adds the legacy finalizer-name rule. */
  kubeFinalizers: boolean;
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** `ValidateLabels`: each key a qualified name, each value a label value. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of asStringMap(labels)) {
    for (const m of isQualifiedName(k)) errs.push(invalidValue(path, k, m));
    for (const m of isValidLabelValue(v)) errs.push(invalidValue(path, v, m));
  }
  return errs;
}

/** `ValidateAnnotations`: keys are qualified names (case-insensitively); the total size is at most 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of asStringMap(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalidValue(path, k, m));
    size += byteLen(k) + byteLen(v);
  }
  if (size > 256 * 1024) errs.push(tooLong(path, 256 * 1024));
  return errs;
}

function versionOf(apiVersion: string): string {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return apiVersion;
  return parts.length === 2 ? (parts[1] ?? '') : '';
}

/** `ValidateOwnerReferences` (note the unindexed field paths, as in the real server). */
export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const item of asArr(refs)) {
    const ref = asObj(item) ?? {};
    const apiVersion = asStr(ref.apiVersion);
    const kind = asStr(ref.kind);
    if (versionOf(apiVersion) === '')
      errs.push(invalidValue(`${path}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(invalidValue(`${path}.kind`, kind, 'must not be empty'));
    if (asStr(ref.name) === '') errs.push(invalidValue(`${path}.name`, asStr(ref.name), 'must not be empty'));
    if (asStr(ref.uid) === '') errs.push(invalidValue(`${path}.uid`, asStr(ref.uid), 'must not be empty'));
    if (apiVersion === 'v1' && kind === 'Event')
      errs.push(invalidValue(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    if (ref.controller === true) {
      const current = `${kind}/${asStr(ref.name)}`;
      if (firstController !== '') {
        errs.push(
          invalidValue(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/** apimachinery `ValidateFinalizers`: qualified names (reported on the unindexed path), not both orphan modes. */
function validateFinalizers(finalizers: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers) for (const m of isQualifiedName(f)) errs.push(invalidValue(path, f, m));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(
      invalidRaw(path, goStringSlice(finalizers), 'finalizer orphan and foregroundDeletion cannot be both set'),
    );
  }
  return errs;
}

/** The core group's `validateKubeFinalizerName`: an unprefixed finalizer must be a standard one. */
export function validateKubeFinalizerName(value: string, path: string): FieldError[] {
  if (value.split('/').length === 1 && !STANDARD_FINALIZERS.has(value)) {
    return [invalidValue(path, value, 'name is neither a standard finalizer name nor is it fully qualified')];
  }
  return [];
}

function finalizersOf(meta: Obj): string[] {
  return asArr(meta.finalizers).map(asStr);
}

/** `ValidateObjectMeta` on create; expects name generation to have happened already. */
export function validateObjectMeta(metadata: unknown, rules: MetaRules, path = 'metadata'): FieldError[] {
  const meta = asObj(metadata) ?? {};
  const errs: FieldError[] = [];
  const generateName = asStr(meta.generateName);
  const name = asStr(meta.name);
  if (generateName !== '') {
    for (const m of rules.nameFn(generateName, true)) errs.push(invalidValue(`${path}.generateName`, generateName, m));
  }
  if (name === '') errs.push(required(`${path}.name`, 'name or generateName is required'));
  else for (const m of rules.nameFn(name, false)) errs.push(invalidValue(`${path}.name`, name, m));
  // Cluster-scoped kinds: the server clears metadata.namespace before validating, so it is never reported.
  if (rules.namespaced) {
    const ns = asStr(meta.namespace);
    if (ns === '') errs.push(required(`${path}.namespace`));
    else for (const m of isDNS1123Label(ns)) errs.push(invalidValue(`${path}.namespace`, ns, m));
  }
  const generation = asNum(meta.generation);
  if (generation !== undefined && generation < 0) {
    errs.push(invalidValue(`${path}.generation`, generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  const finalizers = finalizersOf(meta);
  errs.push(...validateFinalizers(finalizers, `${path}.finalizers`));
  if (rules.kubeFinalizers) {
    finalizers.forEach((f, i) => errs.push(...validateKubeFinalizerName(f, index(`${path}.finalizers`, i))));
  }
  return errs;
}

function immutable(field: string, newValue: unknown, oldValue: unknown, render: (v: unknown) => string): FieldError[] {
  if (semanticEqual(newValue, oldValue)) return [];
  return [invalidRaw(field, render(newValue), 'field is immutable')];
}

const quoted = (v: unknown): string => JSON.stringify(asStr(v));
const numberOrNull = (v: unknown): string => (typeof v === 'number' ? String(v) : 'null');

/**
 * `ValidateObjectMetaUpdate`. The resourceVersion and generation rules are left out: the store fills both in
 * from the stored object before validating, as `rest.BeforeUpdate` does, so a client never sees them fail.
 */
export function validateObjectMetaUpdate(
  newMetadata: unknown,
  oldMetadata: unknown,
  kubeFinalizers: boolean,
  path = 'metadata',
): FieldError[] {
  const meta = asObj(newMetadata) ?? {};
  const old = asObj(oldMetadata) ?? {};
  const errs: FieldError[] = [];
  if (asStr(old.deletionTimestamp) !== '') {
    const before = new Set(finalizersOf(old));
    const extra = [...new Set(finalizersOf(meta).filter((f) => !before.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        forbidden(
          `${path}.finalizers`,
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
        ),
      );
    }
  }
  errs.push(...immutable(`${path}.name`, asStr(meta.name), asStr(old.name), quoted));
  errs.push(...immutable(`${path}.namespace`, asStr(meta.namespace), asStr(old.namespace), quoted));
  errs.push(...immutable(`${path}.uid`, asStr(meta.uid), asStr(old.uid), quoted));
  errs.push(
    ...immutable(`${path}.creationTimestamp`, meta.creationTimestamp, old.creationTimestamp, (v) =>
      goTime(v).replace(/^null$/, '0001-01-01 00:00:00 +0000 UTC'),
    ),
  );
  errs.push(...immutable(`${path}.deletionTimestamp`, meta.deletionTimestamp, old.deletionTimestamp, goTime));
  errs.push(
    ...immutable(
      `${path}.deletionGracePeriodSeconds`,
      meta.deletionGracePeriodSeconds,
      old.deletionGracePeriodSeconds,
      numberOrNull,
    ),
  );
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  if (kubeFinalizers) {
    finalizersOf(meta).forEach((f, i) => errs.push(...validateKubeFinalizerName(f, index(`${path}.finalizers`, i))));
  }
  return errs;
}

/** `ValidateLabelSelector` (matchLabels and matchExpressions). */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  const sel = asObj(selector);
  if (sel === undefined) return [];
  const errs = validateLabels(sel.matchLabels, `${path}.matchLabels`);
  asArr(sel.matchExpressions).forEach((item, i) => {
    const req = asObj(item) ?? {};
    const p = index(`${path}.matchExpressions`, i);
    const values = asArr(req.values).map(asStr);
    const op = asStr(req.operator);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        errs.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0)
        errs.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(invalidValue(`${p}.operator`, op, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(asStr(req.key))) errs.push(invalidValue(`${p}.key`, asStr(req.key), m));
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(v)) errs.push(invalidValue(index(`${p}.values`, j), v, m));
    });
  });
  return errs;
}
