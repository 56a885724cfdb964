import { isDeepStrictEqual } from 'node:util';
import { defaultJobLabels } from '../api/defaults.js';
import { isPlainObject, type KubeObject } from '../api/objects.js';
import { resourceKey, type ResourceType } from '../api/resources.js';

/** Kinds whose registry strategy resets `.status` on create (the status is the server's to set). */
const RESET_STATUS_ON_CREATE = new Set([
  'pods',
  'persistentvolumes',
  'persistentvolumeclaims',
  'namespaces',
  'batch/jobs',
]);

/** Kinds whose `metadata.generation` the registry keeps: 1 on create, one more on each change of `.spec`. */
const GENERATION = new Set(['batch/jobs']);

/** Label of a Job's pods (and selector) naming the Job's uid; the legacy unprefixed one is set too. */
export const JOB_CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
/** Label of a Job's pods naming the Job; the legacy unprefixed one is set too. */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

/**
 * The Job strategy's `generateSelector` (unless `spec.manualSelector`): the template gets the labels `job-name`,
 * `batch.kubernetes.io/job-name`, `controller-uid` and `batch.kubernetes.io/controller-uid` (those it lacks), and the
 * selector matches `batch.kubernetes.io/controller-uid`. Needs the uid.
 */
function generateJobSelector(job: KubeObject): void {
  const spec = isPlainObject(job.spec) ? job.spec : (job.spec = {});
  if (spec.manualSelector === true) return;
  const template = isPlainObject(spec.template) ? spec.template : (spec.template = {});
  const meta = isPlainObject(template.metadata) ? template.metadata : (template.metadata = {});
  const labels = isPlainObject(meta.labels) ? meta.labels : (meta.labels = {});
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const [key, value] of [
    ['job-name', name],
    [JOB_NAME_LABEL, name],
    ['controller-uid', uid],
    [JOB_CONTROLLER_UID_LABEL, uid],
  ] as const)
    if (!(key in labels)) labels[key] = value;
  const selector = isPlainObject(spec.selector) ? spec.selector : (spec.selector = {});
  const matchLabels = isPlainObject(selector.matchLabels) ? selector.matchLabels : (selector.matchLabels = {});
  if (!(JOB_CONTROLLER_UID_LABEL in matchLabels)) matchLabels[JOB_CONTROLLER_UID_LABEL] = uid;
}

/** The registry strategies' PrepareForCreate: what the server overrides before defaulting and validation. */
export function prepareForCreate(r: ResourceType, obj: KubeObject): void {
  const key = resourceKey(r);
  if (RESET_STATUS_ON_CREATE.has(key)) obj.status = {};
  if (GENERATION.has(key)) obj.metadata.generation = 1;
  if (key === 'batch/jobs') {
    generateJobSelector(obj);
    // Defaulted again as the Job is read back from storage: a Job without labels gets the generated ones too.
    defaultJobLabels(obj);
  }
}

/** The registry strategies' PrepareForUpdate beyond the status carry-over: the generation follows `.spec`. */
export function prepareForUpdate(r: ResourceType, next: KubeObject, old: KubeObject): void {
  if (!GENERATION.has(resourceKey(r))) return;
  const generation = old.metadata.generation ?? 0;
  next.metadata.generation = isDeepStrictEqual(next.spec, old.spec) ? generation : generation + 1;
}
