/**
 * Job rules after `pkg/apis/batch/validation` (ValidateJob, ValidateJobUpdate) as of Kubernetes 1.32, for the fields
 * the testkit's Job controller reads: counts and limits, the selector and its match with the template's labels, the
 * template's restart policy and pod spec, and what may not change afterwards.
 */

import { forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import {
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './meta.js';
import { nameIsDNSSubdomain } from './names.js';
import { imageWhitespace, validatePodSpec } from './podspec.js';
import { asNum, asObj, asStr, asStringMap, invalidRaw, semanticEqual } from './util.js';
import type { Obj } from './util.js';

const TEMPLATE_SPEC = 'spec.template.spec';

/** The pod spec rules, with their paths under the template. */
function templatePodSpec(spec: Obj, name: string): FieldError[] {
  return [
    ...validatePodSpec(spec, name),
    ...imageWhitespace(spec.containers, 'spec.containers'),
    ...imageWhitespace(spec.initContainers, 'spec.initContainers'),
  ].map((e) => ({ ...e, field: e.field.replace(/^spec\./, `${TEMPLATE_SPEC}.`) }));
}

/** Go's `%#v` of a `map[string]string`: `map[string]string(nil)`, or its entries sorted by key. */
function goStringMap(value: unknown): string {
  if (asObj(value) === undefined) return 'map[string]string(nil)';
  const entries = asStringMap(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[string]string{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;
}

function nonNegative(spec: Obj, field: string): FieldError[] {
  const v = asNum(spec[field]);
  return v !== undefined && v < 0 ? [invalidValue(`spec.${field}`, v, 'must be greater than or equal to 0')] : [];
}

/** Whether every `matchLabels` entry of `selector` is among `labels` (what the generated and usual selectors use). */
function selectorMatches(selector: Obj, labels: Obj): boolean {
  const matchLabels = asObj(selector.matchLabels) ?? {};
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}

function validateJobSpec(job: Obj): FieldError[] {
  const spec = asObj(job.spec) ?? {};
  const errs: FieldError[] = [];
  for (const field of ['parallelism', 'completions', 'backoffLimit', 'ttlSecondsAfterFinished'])
    errs.push(...nonNegative(spec, field));
  const deadline = asNum(spec.activeDeadlineSeconds);
  if (deadline !== undefined && deadline <= 0)
    errs.push(invalidValue('spec.activeDeadlineSeconds', deadline, 'must be greater than 0'));
  const mode = asStr(spec.completionMode);
  if (mode !== 'NonIndexed' && mode !== 'Indexed')
    errs.push(notSupported('spec.completionMode', mode, ['NonIndexed', 'Indexed']));
  const template = asObj(spec.template) ?? {};
  const templateMeta = asObj(template.metadata) ?? {};
  const labels = asObj(templateMeta.labels) ?? {};
  const selector = asObj(spec.selector);
  if (selector === undefined) errs.push(required('spec.selector'));
  else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (!selectorMatches(selector, labels))
      errs.push(
        invalidRaw(
          'spec.template.metadata.labels',
          goStringMap(templateMeta.labels),
          '`selector` does not match template `labels`',
        ),
      );
  }
  errs.push(...validateLabels(templateMeta.labels, 'spec.template.metadata.labels'));
  errs.push(...validateAnnotations(templateMeta.annotations, 'spec.template.metadata.annotations'));
  const podSpec = asObj(template.spec) ?? {};
  const restart = asStr(podSpec.restartPolicy);
  if (restart === 'Always' || restart === '')
    errs.push(required(`${TEMPLATE_SPEC}.restartPolicy`, 'valid values: "OnFailure", "Never"'));
  else if (restart !== 'OnFailure' && restart !== 'Never')
    errs.push(notSupported(`${TEMPLATE_SPEC}.restartPolicy`, restart, ['OnFailure', 'Never']));
  errs.push(...templatePodSpec(podSpec, asStr(asObj(job.metadata)?.name)));
  return errs;
}

/** Validates a Job on create (`ValidateJob`). */
export function validateJob(job: Obj): FieldError[] {
  return [
    ...validateObjectMeta(job.metadata, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: false }),
    ...validateJobSpec(job),
  ];
}

/** Validates a Job update (`ValidateJobUpdate`): the spec rules, and the fields fixed at creation. */
export function validateJobUpdate(job: Obj, old: Obj): FieldError[] {
  const errs = [...validateObjectMetaUpdate(job.metadata, old.metadata, true), ...validateJobSpec(job)];
  const spec = asObj(job.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  for (const field of ['selector', 'completionMode', 'podFailurePolicy', 'template'])
    if (!semanticEqual(spec[field], oldSpec[field]))
      errs.push(invalidValue(`spec.${field}`, spec[field], 'field is immutable'));
  if (!semanticEqual(spec.completions, oldSpec.completions) && spec.completionMode !== 'Indexed')
    errs.push(invalidValue('spec.completions', spec.completions, 'field is immutable'));
  return errs;
}

/** Validates a Job status update: the generic metadata rules and non-negative counts. */
export function validateJobStatus(job: Obj, old: Obj): FieldError[] {
  const status = asObj(job.status) ?? {};
  const errs = validateObjectMetaUpdate(job.metadata, old.metadata, true);
  for (const field of ['active', 'succeeded', 'failed', 'ready', 'terminating']) {
    const v = asNum(status[field]);
    if (v !== undefined && v < 0) errs.push(invalidValue(`status.${field}`, v, 'must be greater than or equal to 0'));
  }
  if (status.completionTime !== undefined && status.completionTime !== null && status.startTime === undefined)
    errs.push(forbidden('status.completionTime', 'completionTime cannot be set before startTime'));
  return errs;
}
