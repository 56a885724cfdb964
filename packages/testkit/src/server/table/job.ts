/** The printer of Jobs (`printJob`). */

import type { KubeObject } from '../../api/objects.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../../selectors/labels.js';
import { AGE_COLUMN, NAME_COLUMN, age, arr, column, humanDuration, int, parseTime, rec, str } from './common.js';
import type { Printer } from './types.js';

/** Whether the Job has a condition of `type` (the first one) with status True (`hasJobCondition`). */
function hasCondition(job: KubeObject, type: string): boolean {
  const found = arr(rec(job.status).conditions)
    .map(rec)
    .find((c) => c.type === type);
  return found?.status === 'True';
}

/** `Complete`, `Failed`, `Terminating`, `Suspended`, `FailureTarget`, `SuccessCriteriaMet` or `Running`. */
function jobStatus(job: KubeObject): string {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp !== undefined && job.metadata.deletionTimestamp !== null) return 'Terminating';
  if (hasCondition(job, 'Suspended')) return 'Suspended';
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

/** `succeeded/completions`, or for a Job without completions `succeeded/1` (`of <parallelism>` when above 1). */
function completions(job: KubeObject): string {
  const spec = rec(job.spec);
  const succeeded = int(rec(job.status).succeeded);
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  const parallelism = int(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** From start to completion, or to now while it runs; empty before it started. */
function duration(job: KubeObject, now: number): string {
  const status = rec(job.status);
  const start = parseTime(status.startTime);
  if (start === undefined) return '';
  const end = parseTime(status.completionTime);
  return humanDuration((end ?? now) - start);
}

/** `metav1.FormatLabelSelector`: the selector's requirements, sorted by key, as the string syntax writes them. */
function formatSelector(selector: unknown): string {
  let parsed;
  try {
    parsed = labelSelectorFromObject(selector as LabelSelectorObject | null | undefined);
  } catch {
    return '<error>';
  }
  const text = parsed.requirements
    .map((r) => {
      const values = [...r.values].sort();
      switch (r.operator) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.operator} (${values.join(',')})`;
        case 'gt':
          return `${r.key}>${values.join(',')}`;
        case 'lt':
          return `${r.key}<${values.join(',')}`;
        case '=':
        case '==':
        case '!=':
          return `${r.key}${r.operator}${values.join(',')}`;
      }
    })
    .join(',');
  return text === '' ? '<none>' : text;
}

/** Jobs: NAME, STATUS, COMPLETIONS, DURATION, AGE; wide CONTAINERS, IMAGES, SELECTOR. */
export const JOB_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Status of the job.'),
    column(
      'Completions',
      'string',
      'The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.',
    ),
    column('Duration', 'string', 'Time required to complete the job.'),
    AGE_COLUMN,
    column('Containers', 'string', 'Names of each container in the template.', { priority: 1 }),
    column('Images', 'string', 'Images referenced by each container in the template.', { priority: 1 }),
    column(
      'Selector',
      'string',
      'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
      { priority: 1 },
    ),
  ],
  print: (job, now) => {
    const containers = arr(rec(rec(rec(job.spec).template).spec).containers).map(rec);
    return {
      cells: [
        str(job.metadata.name),
        jobStatus(job),
        completions(job),
        duration(job, now),
        age(job.metadata, now),
        containers.map((c) => str(c.name)).join(','),
        containers.map((c) => str(c.image)).join(','),
        formatSelector(rec(job.spec).selector),
      ],
    };
  },
};
