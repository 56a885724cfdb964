/**
 * Pod rules after `pkg/apis/core/validation` (ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate) as of
 * Kubernetes 1.32; the spec rules themselves are in `podspec.ts`.
 */

import { forbidden, invalidValue, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { inclusiveRangeError, isQualifiedName, nameIsDNSSubdomain } from './names.js';
import { MAX_INT32, imageWhitespace, validatePodSpec, validateTolerations } from './podspec.js';
import { asArr, asNum, asObj, asStr, diffLines, index, semanticEqual } from './util.js';
import type { Obj } from './util.js';

/** The pod fields a client may change on update, as the real message lists them. */
const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

function validatePodMetadataAndSpec(pod: Obj): FieldError[] {
  const meta = asObj(pod.metadata) ?? {};
  const spec = asObj(pod.spec) ?? {};
  return [
    ...validateObjectMeta(meta, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: true }),
    ...validatePodSpec(spec, asStr(meta.name)),
    ...imageWhitespace(spec.containers, 'spec.containers'),
    ...imageWhitespace(spec.initContainers, 'spec.initContainers'),
  ];
}

/** Validates a Pod on create (`ValidatePodCreate`). */
export function validatePod(pod: Obj): FieldError[] {
  const errs = validatePodMetadataAndSpec(pod);
  const spec = asObj(pod.spec) ?? {};
  if (asArr(spec.ephemeralContainers).length > 0)
    errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  if (asStr(spec.nodeName) !== '' && asArr(spec.schedulingGates).length > 0) {
    errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  }
  return errs;
}

function containerUpdates(newList: unknown, oldList: unknown, path: string): { errs: FieldError[]; stop: boolean } {
  const next = asArr(newList);
  if (next.length !== asArr(oldList).length)
    return { errs: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: FieldError[] = [];
  next.forEach((c, i) => {
    const image = asStr(asObj(c)?.image);
    if (image === '') errs.push(required(`${index(path, i)}.image`));
    if (image.trim() !== image)
      errs.push(invalidValue(`${index(path, i)}.image`, image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

/** Validates a Pod update (`ValidatePodUpdate`): only images, activeDeadlineSeconds, tolerations and gates may change. */
export function validatePodUpdate(pod: Obj, old: Obj): FieldError[] {
  const errs = [...validateObjectMetaUpdate(pod.metadata, old.metadata, true), ...validatePodMetadataAndSpec(pod)];
  const spec = asObj(pod.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  for (const field of ['containers', 'initContainers']) {
    const r = containerUpdates(spec[field], oldSpec[field], `spec.${field}`);
    errs.push(...r.errs);
    if (r.stop) return errs;
  }
  const ads = asNum(spec.activeDeadlineSeconds);
  const oldAds = asNum(oldSpec.activeDeadlineSeconds);
  if (ads !== undefined) {
    if (ads < 0 || ads > MAX_INT32)
      return [...errs, invalidValue('spec.activeDeadlineSeconds', ads, inclusiveRangeError(0, MAX_INT32))];
    if (oldAds !== undefined && oldAds < ads)
      return [...errs, invalidValue('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value')];
  } else if (oldAds !== undefined) {
    errs.push(
      invalidValue('spec.activeDeadlineSeconds', undefined, 'must not update from a positive integer to nil value'),
    );
  }
  const tolerations = asArr(spec.tolerations).map((t) => asObj(t) ?? {});
  const changed = asArr(oldSpec.tolerations).some((t) => {
    const o = asObj(t) ?? {};
    return !tolerations.some((n) => semanticEqual({ ...o, tolerationSeconds: n.tolerationSeconds }, n));
  });
  if (changed)
    errs.push(forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
  else errs.push(...validateTolerations(spec.tolerations, 'spec.tolerations'));
  const oldGates = new Set(asArr(oldSpec.schedulingGates).map((g) => asStr(asObj(g)?.name)));
  asArr(spec.schedulingGates).forEach((g, i) => {
    const name = asStr(asObj(g)?.name);
    if (!oldGates.has(name))
      errs.push(
        forbidden(
          `${index('spec.schedulingGates', i)}.name`,
          `only deletion is allowed, but found new scheduling gate '${name}'`,
        ),
      );
  });
  if (semanticEqual(spec, oldSpec)) return errs;
  const munged: Obj = structuredClone(spec);
  for (const field of ['containers', 'initContainers']) {
    const oldList = asArr(oldSpec[field]);
    munged[field] = asArr(munged[field]).map((c, i) => ({ ...(asObj(c) ?? {}), image: asObj(oldList[i])?.image }));
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.schedulingGates = oldSpec.schedulingGates;
  munged.tolerations = oldSpec.tolerations;
  const oldGrace = asNum(oldSpec.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = oldGrace;
  if (!semanticEqual(munged, oldSpec)) {
    errs.push(
      forbidden(
        'spec',
        `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}\n${diffLines('core.PodSpec', oldSpec, munged)}`,
      ),
    );
  }
  return errs;
}

const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** Validates a pods/status update (`ValidatePodStatusUpdate`, light: conditions, nodeName and qosClass). */
export function validatePodStatus(pod: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(pod.metadata, old.metadata, true);
  const status = asObj(pod.status) ?? {};
  const oldStatus = asObj(old.status) ?? {};
  asArr(status.conditions).forEach((c, i) => {
    const type = asStr(asObj(c)?.type);
    if (SYSTEM_CONDITIONS.has(type)) return;
    // The real server reports these under metadata.conditions (sic).
    for (const m of isQualifiedName(type)) errs.push(invalidValue(`${index('metadata.conditions', i)}.Type`, type, m));
  });
  if (asStr(asObj(pod.spec)?.nodeName) !== asStr(asObj(old.spec)?.nodeName))
    errs.push(forbidden('status.nodeName', 'may not be changed directly'));
  const qos = asStr(status.qosClass);
  if (qos !== asStr(oldStatus.qosClass)) errs.push(invalidValue('status.qosClass', qos, 'field is immutable'));
  return errs;
}
