/**
 * kube-controller-manager's Job controller (`pkg/controller/job`) for NonIndexed Jobs, as a level-based loop over the
 * store. For each Job:
 *
 * - its pods are those whose controller reference names it. It creates them from `spec.template` (`<job>-<random>`,
 *   the template's labels and annotations, the controller reference with `blockOwnerDeletion`, and the
 *   `batch.kubernetes.io/job-tracking` finalizer) until `min(parallelism, completions - succeeded)` are active;
 * - a pod that finished (or is being deleted) is counted in `status.succeeded` or `status.failed`, then loses the
 *   tracking finalizer; a pod that failed is replaced after a backoff that doubles per failure (`podFailureBackoffMs`,
 *   short here; 10 s up to 6 min in the real controller);
 * - once `succeeded` reaches `completions`: conditions `SuccessCriteriaMet` and `Complete` (reason
 *   `CompletionsReached`), `completionTime`, Event `Completed`;
 * - once `failed` exceeds `backoffLimit` (`restartPolicy: Never`), or the active pods' container restarts reach it
 *   (`OnFailure`), or `activeDeadlineSeconds` passed: conditions `FailureTarget` and `Failed` (reasons
 *   `BackoffLimitExceeded`, `DeadlineExceeded`), the active pods deleted, Warning Event of that reason;
 * - `spec.suspend`: active pods deleted (not counted as failed), condition `Suspended` (`JobSuspended`), no start
 *   time; resumed: the condition False (`JobResumed`) and a new start time;
 * - status `active`, `ready`, `terminating`, `startTime` and `uncountedTerminatedPods` as the real controller writes
 *   them, with its Events (`SuccessfulCreate`, `SuccessfulDelete`, ...; source `job-controller`).
 *
 * A Job being deleted gets no new pods, and its pods lose the tracking finalizer so that the garbage collector can
 * delete them (`startGarbageCollector` carries out the propagation policy); so does a pod whose Job is gone.
 *
 * Not simulated: Indexed completion (run as NonIndexed, without completion indexes), `podFailurePolicy`,
 * `successPolicy`, `backoffLimitPerIndex`, `ttlSecondsAfterFinished` (the TTL controller), `managedBy`, and the
 * intermediate `uncountedTerminatedPods` bookkeeping (a finished pod is counted and released in one step).
 */
import type { KubeObject, OwnerReference } from '../api/objects.js';
import { StatusError } from '../api/status.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../selectors/labels.js';
import { timestamp, type ObjectStore } from '../store/store.js';
import { EventRecorder } from './events.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from './queue.js';
import { view, viewOpt, type Condition, type Pod, type PodSpec } from './types.js';

/** The component the Job controller records its Events under. */
export const JOB_CONTROLLER = 'job-controller';
/** The finalizer that keeps a Job's pod until the controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** Options of {@link startJobController}. */
export interface JobControllerOptions extends LoopOptions {
  /** Wait before a failed pod is replaced, in ms, doubling per failure of the Job. Default 100 (the real controller: 10 s). */
  podFailureBackoffMs?: number;
  /** Cap of that wait, in ms. Default 2000 (the real controller: 6 min). */
  maxPodFailureBackoffMs?: number;
}

/** `batch/v1` Job, the fields the controller reads and writes. */
interface Job extends KubeObject {
  spec?: {
    parallelism?: number;
    completions?: number | null;
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
    suspend?: boolean;
    selector?: LabelSelectorObject;
    template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: PodSpec };
  };
  status?: {
    conditions?: Condition[];
    startTime?: string;
    completionTime?: string;
    active?: number;
    succeeded?: number;
    failed?: number;
    ready?: number;
    terminating?: number;
    uncountedTerminatedPods?: Record<string, unknown>;
    [key: string]: unknown;
  };
}

const JOBS = 'batch/jobs';

const isTerminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const isDeleting = (o: KubeObject): boolean => o.metadata.deletionTimestamp !== undefined;
const isTracked = (p: Pod): boolean => (p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const controllerOf = (o: KubeObject): OwnerReference | undefined =>
  (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);
const isJobRef = (r: OwnerReference | undefined): r is OwnerReference =>
  r !== undefined && r.kind === 'Job' && r.apiVersion === 'batch/v1';

/** The True condition of `type`, if the Job has one. */
function condition(job: Job, type: string): Condition | undefined {
  return (job.status?.conditions ?? []).find((c) => c.type === type && c.status === 'True');
}

const finished = (job: Job): boolean =>
  condition(job, 'Complete') !== undefined || condition(job, 'Failed') !== undefined;

/** Starts the simulated Job controller; see the module comment. */
export function startJobController(store: ObjectStore, options: JobControllerOptions = {}): Stoppable {
  const recorder = new EventRecorder(store, JOB_CONTROLLER);
  /** When each Job (by uid) last counted a failed pod, for the replacement backoff. */
  const lastFailure = new Map<string, number>();
  const queue: WorkQueue = new WorkQueue(
    (key) => reconcile({ store, recorder, queue, options, lastFailure }, key),
    options,
  );
  const unsubscribe = store.subscribe((c) => {
    if (c.resource === JOBS) queue.add(nsKey(c.object.metadata.namespace, c.object.metadata.name));
    else if (c.resource === 'pods') {
      const ref = controllerOf(c.object) ?? (c.previous === undefined ? undefined : controllerOf(c.previous));
      if (isJobRef(ref)) queue.add(nsKey(c.object.metadata.namespace, ref.name));
    }
  });
  queue.add(RESYNC_KEY);
  return {
    async stop() {
      unsubscribe();
      await queue.stop();
    },
  };
}

interface Context {
  store: ObjectStore;
  recorder: EventRecorder;
  queue: WorkQueue;
  options: JobControllerOptions;
  lastFailure: Map<string, number>;
}

function reconcile(ctx: Context, key: string): void {
  const { store, queue } = ctx;
  if (key === RESYNC_KEY) {
    for (const o of store.peek(JOBS))
      if (!finished(view<Job>(o))) queue.add(nsKey(o.metadata.namespace, o.metadata.name));
    for (const o of store.peek('pods')) {
      const ref = controllerOf(o);
      if (isJobRef(ref) && isTracked(view<Pod>(o))) queue.add(nsKey(o.metadata.namespace, ref.name));
    }
    return;
  }
  const [namespace, name] = splitKey(key);
  const job = viewOpt<Job>(store.peekObject(JOBS, namespace, name));
  releaseOrphans(ctx, namespace, name, job);
  if (job === undefined) return;
  syncJob(ctx, job);
}

/** Pods whose controller is a Job of that name that is gone (or is another one now) lose the tracking finalizer. */
function releaseOrphans(ctx: Context, namespace: string, name: string, job: Job | undefined): void {
  for (const o of ctx.store.peek('pods')) {
    if (o.metadata.namespace !== namespace) continue;
    const ref = controllerOf(o);
    if (!isJobRef(ref) || ref.name !== name || (job !== undefined && ref.uid === job.metadata.uid)) continue;
    release(ctx.store, view<Pod>(o));
  }
}

/** Removes the tracking finalizer from a pod. */
function release(store: ObjectStore, pod: Pod): void {
  if (!isTracked(pod)) return;
  store.modify('pods', pod.metadata.namespace, pod.metadata.name ?? '', (o) => {
    if (o.metadata.uid !== pod.metadata.uid) return false;
    const finalizers = o.metadata.finalizers ?? [];
    if (!finalizers.includes(JOB_TRACKING_FINALIZER)) return false;
    o.metadata.finalizers = finalizers.filter((f) => f !== JOB_TRACKING_FINALIZER);
  });
}

function deletePod(ctx: Context, job: Job, pod: Pod): void {
  if (isDeleting(pod)) return;
  try {
    ctx.store.delete('pods', pod.metadata.namespace, pod.metadata.name ?? '', { uid: pod.metadata.uid ?? '' });
    ctx.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name ?? ''}`);
  } catch (e) {
    if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
  }
}

function newCondition(type: string, status: 'True' | 'False', reason: string, message: string): Condition {
  const now = timestamp();
  return { type, status, lastProbeTime: now, lastTransitionTime: now, reason, message };
}

/** Sets condition `c` (replacing one of its type when the status or reason differs). */
function setCondition(conditions: Condition[], c: Condition): Condition[] {
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i < 0) return [...conditions, c];
  const old = conditions[i]!;
  if (old.status === c.status && old.reason === c.reason) return conditions;
  return conditions.map((x, j) => (j === i ? c : x));
}

/** Container restarts of the pods still running or pending (`pastBackoffLimitOnFailure`). */
function restarts(pods: Pod[]): number {
  let n = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    const status = p.status as {
      containerStatuses?: { restartCount?: number }[];
      initContainerStatuses?: { restartCount?: number }[];
    };
    for (const cs of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])])
      n += cs.restartCount ?? 0;
  }
  return n;
}

function syncJob(ctx: Context, job: Job): void {
  const { store } = ctx;
  const uid = job.metadata.uid ?? '';
  const namespace = job.metadata.namespace ?? '';
  const jobKey = nsKey(namespace, job.metadata.name);
  const selector = labelSelectorFromObject(job.spec?.selector);
  const pods = store
    .peek('pods')
    .filter((o) => o.metadata.namespace === namespace && controllerOf(o)?.uid === uid)
    .map((o) => view<Pod>(o))
    .filter((p) => matchesLabels(selector, p.metadata.labels));
  const suspended = job.spec?.suspend === true;
  let conditions = [...(job.status?.conditions ?? [])];
  let succeeded = job.status?.succeeded ?? 0;
  let failed = job.status?.failed ?? 0;
  let startTime = job.status?.startTime;
  let completionTime = job.status?.completionTime;

  // Finished pods (and deleted ones) are counted once, then released.
  const done = pods.filter((p) => isTracked(p) && (isTerminal(p) || isDeleting(p)));
  for (const p of done) {
    if (p.status?.phase === 'Succeeded') succeeded++;
    // Pods deleted because the Job is suspended are not failures.
    else if (!(suspended && isDeleting(p))) {
      failed++;
      ctx.lastFailure.set(uid, Date.now());
    }
  }
  const active = (): Pod[] => pods.filter((p) => !isTerminal(p) && !isDeleting(p));

  if (isDeleting(job)) {
    ctx.lastFailure.delete(uid);
    writeStatus(ctx, job, { conditions, succeeded, failed, startTime, completionTime, pods: [] });
    for (const p of pods) release(store, p);
    return;
  }
  if (!finished(job)) {
    if (suspended) {
      for (const p of active()) deletePod(ctx, job, p);
      if (condition(job, 'Suspended') === undefined) {
        conditions = setCondition(conditions, newCondition('Suspended', 'True', 'JobSuspended', 'Job suspended'));
        ctx.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
      }
      startTime = undefined;
    } else {
      if (condition(job, 'Suspended') !== undefined) {
        conditions = setCondition(conditions, newCondition('Suspended', 'False', 'JobResumed', 'Job resumed'));
        ctx.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
        startTime = undefined;
      }
      startTime ??= timestamp();
      const failure = failureOf(job, failed, active(), startTime);
      const completions = job.spec?.completions;
      if (failure !== undefined) {
        conditions = setCondition(conditions, newCondition('FailureTarget', 'True', failure.reason, failure.message));
        // Counted as failed once they are gone (the next pass).
        for (const p of active()) deletePod(ctx, job, p);
        conditions = setCondition(conditions, newCondition('Failed', 'True', failure.reason, failure.message));
        ctx.recorder.event(job, 'Warning', failure.reason, failure.message);
      } else if (typeof completions === 'number' ? succeeded >= completions : succeeded > 0 && active().length === 0) {
        const message = 'Reached expected number of succeeded pods';
        conditions = setCondition(
          conditions,
          newCondition('SuccessCriteriaMet', 'True', 'CompletionsReached', message),
        );
        for (const p of active()) deletePod(ctx, job, p);
        conditions = setCondition(conditions, newCondition('Complete', 'True', 'CompletionsReached', message));
        completionTime = timestamp();
        ctx.recorder.event(job, 'Normal', 'Completed', 'Job completed');
      } else {
        createPods(ctx, job, jobKey, active().length, succeeded, failed);
        const deadline = job.spec?.activeDeadlineSeconds;
        if (typeof deadline === 'number')
          ctx.queue.addAfter(jobKey, Math.max(0, Date.parse(startTime) + deadline * 1000 - Date.now()));
      }
    }
  } else {
    ctx.lastFailure.delete(uid);
    for (const p of active()) deletePod(ctx, job, p);
  }
  const current = store
    .peek('pods')
    .filter((o) => o.metadata.namespace === namespace && controllerOf(o)?.uid === uid)
    .map((o) => view<Pod>(o));
  writeStatus(ctx, job, { conditions, succeeded, failed, startTime, completionTime, pods: current });
  for (const p of done) release(store, p);
}

/** Why the Job fails now, if it does: too many failures, or past its deadline. */
function failureOf(
  job: Job,
  failed: number,
  active: Pod[],
  startTime: string,
): { reason: string; message: string } | undefined {
  const limit = job.spec?.backoffLimit ?? 6;
  const onFailure = job.spec?.template?.spec?.restartPolicy === 'OnFailure';
  const restarted = onFailure ? restarts(active) : 0;
  if (failed > limit || (onFailure && (limit === 0 ? restarted > 0 : restarted >= limit)))
    return { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
  const deadline = job.spec?.activeDeadlineSeconds;
  if (typeof deadline === 'number' && Date.now() - Date.parse(startTime) >= deadline * 1000)
    return { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
  return undefined;
}

/** Creates the pods that are missing, after the backoff of the last failure. */
function createPods(ctx: Context, job: Job, jobKey: string, active: number, succeeded: number, failed: number): void {
  const parallelism = job.spec?.parallelism ?? 1;
  const completions = job.spec?.completions;
  const wanted = typeof completions === 'number' ? Math.min(parallelism, completions - succeeded) : parallelism;
  if (active >= wanted) return;
  const uid = job.metadata.uid ?? '';
  if (failed > 0) {
    const base = ctx.options.podFailureBackoffMs ?? 100;
    const delay = Math.min(base * 2 ** (failed - 1), ctx.options.maxPodFailureBackoffMs ?? 2000);
    const left = (ctx.lastFailure.get(uid) ?? 0) + delay - Date.now();
    if (left > 0) {
      ctx.queue.addAfter(jobKey, left);
      return;
    }
  }
  const template = job.spec?.template ?? {};
  for (let i = active; i < wanted; i++) {
    const pod = ctx.store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${job.metadata.name ?? ''}-`,
        namespace: job.metadata.namespace ?? '',
        ...(template.metadata?.labels === undefined ? {} : { labels: { ...template.metadata.labels } }),
        ...(template.metadata?.annotations === undefined ? {} : { annotations: { ...template.metadata.annotations } }),
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: job.metadata.name ?? '',
            uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        finalizers: [JOB_TRACKING_FINALIZER],
      },
      spec: structuredClone(template.spec ?? {}),
    });
    ctx.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name ?? ''}`);
  }
}

function writeStatus(
  ctx: Context,
  job: Job,
  s: {
    conditions: Condition[];
    succeeded: number;
    failed: number;
    startTime: string | undefined;
    completionTime: string | undefined;
    pods: Pod[];
  },
): void {
  const active = s.pods.filter((p) => !isTerminal(p) && !isDeleting(p));
  const ready = active.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  const terminating = s.pods.filter((p) => isDeleting(p) && !isTerminal(p));
  ctx.store.modify(
    JOBS,
    job.metadata.namespace,
    job.metadata.name ?? '',
    (o) => {
      if (o.metadata.uid !== job.metadata.uid) return false;
      const status: Job['status'] = {
        ...(s.conditions.length === 0 ? {} : { conditions: s.conditions }),
        ...(s.startTime === undefined ? {} : { startTime: s.startTime }),
        ...(s.completionTime === undefined ? {} : { completionTime: s.completionTime }),
        ...(active.length === 0 ? {} : { active: active.length }),
        ...(s.succeeded === 0 ? {} : { succeeded: s.succeeded }),
        ...(s.failed === 0 ? {} : { failed: s.failed }),
        terminating: terminating.length,
        uncountedTerminatedPods: {},
        ready: ready.length,
      };
      o.status = status;
    },
    { subresource: 'status' },
  );
}
