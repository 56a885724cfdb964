/**
 * batch/v1 Jobs on both tiers: the testkit's Job controller and garbage collector against kube-controller-manager's,
 * through the same API calls and the same expectations (the kubelet is the simulated one on both). A Job's pod made
 * from its template, its status and conditions when it succeeds, fails (new pods under `restartPolicy: Never`,
 * restarts under `OnFailure`) or is suspended, and what each propagation policy does to its pods when it is deleted.
 */
import { BatchV1Api, CoreV1Api, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { ObjectReader } from '../../src/tiers/objects.js';
import { describeTiers } from '../../src/vitest.js';

/** Generous: the real controller replaces a failed pod after 10 s, and the machine is busy. */
const WAIT = { timeout: 60_000, interval: 100 };
const NS = 'default';

function job(name: string, command: string, spec: Partial<V1Job['spec']> = {}, restartPolicy = 'Never'): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      ...spec,
      template: {
        spec: { restartPolicy, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', command] }] },
      },
    },
  };
}

describeTiers('Jobs', (tier) => {
  async function start(): Promise<{ batch: BatchV1Api; core: CoreV1Api; read: ObjectReader }> {
    const cluster = await tier.start({ nodes: [{ name: 'node-1' }] });
    return {
      batch: cluster.kubeConfig.makeApiClient(BatchV1Api),
      core: cluster.kubeConfig.makeApiClient(CoreV1Api),
      read: new ObjectReader(cluster.kubeConfig),
    };
  }

  async function podsOf(core: CoreV1Api, name: string): Promise<V1Pod[]> {
    return (await core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${name}` }))
      .items;
  }

  /** Waits until the Job has a True condition of `type`; returns it. */
  async function waitCondition(batch: BatchV1Api, name: string, type: string): Promise<V1Job> {
    return vi.waitFor(async () => {
      const j = await batch.readNamespacedJob({ name, namespace: NS });
      const types = (j.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
      if (!types.includes(type))
        throw new Error(`Job ${name} has conditions [${types.join(', ')}], waiting for ${type}`);
      return j;
    }, WAIT);
  }

  it('runs the pod of a Job from its template, counts it and completes the Job', async () => {
    const { batch, core, read } = await start();
    const created = await batch.createNamespacedJob({ namespace: NS, body: job('once', 'echo done') });
    const uid = created.metadata!.uid!;
    expect(created.spec).toMatchObject({
      backoffLimit: 6,
      completions: 1,
      parallelism: 1,
      completionMode: 'NonIndexed',
      suspend: false,
      manualSelector: false,
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
    });
    expect(created.metadata?.labels).toEqual({
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'once',
      'controller-uid': uid,
      'job-name': 'once',
    });
    expect(created.metadata?.generation).toBe(1);

    const done = await waitCondition(batch, 'once', 'Complete');
    expect(done.status).toMatchObject({ succeeded: 1, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(done.status?.active).toBeUndefined();
    expect(done.status?.completionTime).toBeDefined();
    expect(done.status?.startTime).toBeDefined();
    expect(done.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
      ['Complete', 'True', 'CompletionsReached'],
    ]);

    const [pod, ...others] = await podsOf(core, 'once');
    expect(others).toEqual([]);
    expect(pod?.metadata?.generateName).toBe('once-');
    expect(pod?.metadata?.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'Job', name: 'once', uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(pod?.status?.phase).toBe('Succeeded');
    // Counted, so no longer held by the tracking finalizer.
    expect(pod?.metadata?.finalizers).toBeUndefined();
    await vi.waitFor(async () => {
      const events = await read.events({ kind: 'Job', name: 'once' });
      expect(events.map((e) => [e.reason, e.message, e.source?.component])).toEqual(
        expect.arrayContaining([
          ['SuccessfulCreate', `Created pod: ${pod?.metadata?.name ?? ''}`, 'job-controller'],
          ['Completed', 'Job completed', 'job-controller'],
        ]),
      );
    }, WAIT);
  });

  it('replaces a failed pod until the failures pass backoffLimit, then fails the Job', async () => {
    const { batch, core } = await start();
    await batch.createNamespacedJob({ namespace: NS, body: job('never', 'exit 3', { backoffLimit: 1 }) });
    const failed = await waitCondition(batch, 'never', 'Failed');
    expect(failed.status?.failed).toBe(2);
    expect(failed.status?.succeeded).toBeUndefined();
    expect(failed.status?.conditions?.map((c) => [c.type, c.reason, c.message])).toEqual([
      ['FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      ['Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
    ]);
    const pods = await podsOf(core, 'never');
    expect(pods.map((p) => p.status?.phase)).toEqual(['Failed', 'Failed']);
  });

  it('counts the restarts of an OnFailure pod against backoffLimit, and deletes the pod when the Job fails', async () => {
    const { batch, core } = await start();
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('restarts', 'exit 1', { backoffLimit: 2 }, 'OnFailure'),
    });
    const failed = await waitCondition(batch, 'restarts', 'Failed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('BackoffLimitExceeded');
    await vi.waitFor(async () => {
      expect(await podsOf(core, 'restarts')).toEqual([]);
      expect((await batch.readNamespacedJob({ name: 'restarts', namespace: NS })).status?.failed).toBe(1);
    }, WAIT);
  });

  it('runs no pod for a suspended Job, and runs it once resumed', async () => {
    const { batch, core } = await start();
    await batch.createNamespacedJob({ namespace: NS, body: job('later', 'true', { suspend: true }) });
    const suspended = await waitCondition(batch, 'later', 'Suspended');
    expect(suspended.status?.conditions?.[0]).toMatchObject({ reason: 'JobSuspended', message: 'Job suspended' });
    expect(suspended.status?.startTime).toBeUndefined();
    expect(await podsOf(core, 'later')).toEqual([]);
    await batch.patchNamespacedJob({
      name: 'later',
      namespace: NS,
      body: [{ op: 'replace', path: '/spec/suspend', value: false }],
    });
    const done = await waitCondition(batch, 'later', 'Complete');
    expect(done.status?.conditions?.find((c) => c.type === 'Suspended')).toMatchObject({
      status: 'False',
      reason: 'JobResumed',
      message: 'Job resumed',
    });
    expect(done.metadata?.generation).toBe(2);
  });

  it('deletes the pods of a Job deleted in the foreground before the Job, orphans them by default, and deletes them after it in the background', async () => {
    const { batch, core } = await start();
    for (const name of ['fg', 'orphaned', 'bg']) {
      await batch.createNamespacedJob({ namespace: NS, body: job(name, 'true') });
      await waitCondition(batch, name, 'Complete');
    }

    // Foreground: the Job waits, with the collector's finalizer, until its pods are gone.
    const fgPod = (await podsOf(core, 'fg'))[0]!;
    await batch.deleteNamespacedJob({ name: 'fg', namespace: NS, propagationPolicy: 'Foreground' });
    const deleting = await batch.readNamespacedJob({ name: 'fg', namespace: NS }).catch(() => undefined);
    if (deleting !== undefined) {
      expect(deleting.metadata?.deletionTimestamp).toBeDefined();
      expect(deleting.metadata?.finalizers).toEqual(['foregroundDeletion']);
    }
    await vi.waitFor(async () => {
      await expect(batch.readNamespacedJob({ name: 'fg', namespace: NS })).rejects.toThrow();
      expect(await podsOf(core, 'fg')).toEqual([]);
    }, WAIT);
    await expect(core.readNamespacedPod({ name: fgPod.metadata!.name!, namespace: NS })).rejects.toThrow();

    // No policy: batch/v1 orphans the pods, which lose their owner reference.
    await batch.deleteNamespacedJob({ name: 'orphaned', namespace: NS });
    await vi.waitFor(async () => {
      await expect(batch.readNamespacedJob({ name: 'orphaned', namespace: NS })).rejects.toThrow();
      const pods = await podsOf(core, 'orphaned');
      expect(pods).toHaveLength(1);
      expect(pods[0]?.metadata?.ownerReferences).toBeUndefined();
    }, WAIT);

    // Background: the Job goes at once, its pods after it.
    await batch.deleteNamespacedJob({ name: 'bg', namespace: NS, propagationPolicy: 'Background' });
    await expect(batch.readNamespacedJob({ name: 'bg', namespace: NS })).rejects.toThrow();
    await vi.waitFor(async () => expect(await podsOf(core, 'bg')).toEqual([]), WAIT);
  });
});
