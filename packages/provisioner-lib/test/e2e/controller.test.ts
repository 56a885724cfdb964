/**
 * The ProvisionController end to end, on the testkit and on a real control plane: a user creates a StorageClass
 * and a claim, the controller provisions a volume and saves its PV, the cluster's PV controller binds them, and
 * deleting the claim deletes the volume. Everything is observed as a user would, through the API: claims, volumes
 * and the Events `kubectl describe` shows, plus what the storage backend was asked to do.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import { FINALIZER_PV } from '../../src/controller/annotations.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import {
  CONTROLLER_REASONS,
  controllerRules,
  createClaim,
  createClass,
  deleteClaims,
  eventSummary,
  getVolume,
  grant,
  setRules,
  settle,
  WAIT,
  waitBound,
} from '../support/cluster.js';
import { startController, startScene, type RunningController, type Scene } from '../support/scene.js';

const PROVISIONER = 'example.com/e2e';
const CLASS = 'fast';
/** The longest a failed claim or volume waits before its retry (the rate limiter below). */
const MAX_RETRY_DELAY_MS = 100;

describeTiers('ProvisionController end to end', (tier) => {
  let scene: Scene | undefined;
  let controllers: RunningController[] = [];
  afterEach(async () => {
    for (const r of controllers) r.abort.abort();
    await Promise.all(controllers.map((r) => r.running));
    controllers = [];
    scene?.history.stop();
    scene = undefined;
  });

  const start = async (): Promise<Scene> => {
    scene = await startScene(tier);
    await createClass(scene.api, CLASS, PROVISIONER);
    return scene;
  };

  /** One controller without leader election, retrying failures within {@link MAX_RETRY_DELAY_MS}. */
  const run = (
    s: Scene,
    provisioner: Provisioner,
    options: Partial<Omit<ProvisionControllerOptions, 'kubeConfig' | 'provisioner'>> = {},
    kubeConfig: KubeConfig = s.cluster.kubeConfig,
  ): RunningController => {
    const rc = startController(kubeConfig, s.timeline, 'e2e', {
      provisionerName: PROVISIONER,
      provisioner,
      leaderElection: false,
      resyncPeriodMs: 60_000,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(10, MAX_RETRY_DELAY_MS),
      createProvisionedPVIntervalMs: 20,
      ...options,
    });
    controllers.push(rc);
    return rc;
  };

  /** The controller's Events about a claim of `default` (or a volume, whose Events are in `default` too). */
  const events = (s: Scene, uid: string): Promise<Record<string, { count: number; message: string }>> =>
    eventSummary(s.api, 'default', uid, CONTROLLER_REASONS);

  /** Waits long enough for several retries to have happened, had the controller not given up. */
  const severalRetryPeriods = (): Promise<void> => new Promise((r) => setTimeout(r, 10 * MAX_RETRY_DELAY_MS));

  it('provisions a claim, the cluster binds it to the PV, and deleting the claim deletes the volume', async () => {
    const s = await start();
    run(s, s.backend.provisioner('e2e'));
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;

    const claim = await waitBound(s.api, 'data');
    expect(claim.spec?.volumeName).toBe(pvName);
    expect(await getVolume(s.api, pvName)).toMatchObject({
      metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
      spec: {
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid },
        storageClassName: CLASS,
        persistentVolumeReclaimPolicy: 'Delete',
        capacity: { storage: '1Mi' },
        accessModes: ['ReadWriteOnce'],
        nfs: { server: 'backend.example', path: `/exports/${pvName}` },
      },
      status: { phase: 'Bound' },
    });
    expect(s.backend.creators(uid)).toEqual(['e2e']);
    // What `kubectl describe pvc data` shows (counts: see the next test).
    await vi.waitFor(
      async () =>
        expect(await events(s, uid)).toEqual({
          Provisioning: {
            count: expect.any(Number),
            message: 'External provisioner is provisioning volume for claim "default/data"',
          },
          ProvisioningSucceeded: { count: expect.any(Number), message: `Successfully provisioned volume ${pvName}` },
        }),
      WAIT,
    );

    await deleteClaims(s.api, ['data']);
    await vi.waitFor(async () => expect(await getVolume(s.api, pvName)).toBeUndefined(), WAIT);
    expect(s.backend.deletes.map((d) => [d.pvName, d.removed])).toEqual([[pvName, true]]);
    expect([...s.backend.backing]).toEqual([]);
    expect(s.history.createdByClaim.get(uid)).toEqual([pvName]);
    // The history follows a watch, which may hear of the deletion after the read above saw the PV gone.
    await vi.waitFor(() => expect(s.history.deleted.get(pvName)).toBe(1), WAIT);
  });

  it('records each failed attempt on the claim as one ProvisioningFailed Event whose count goes up, then ProvisioningSucceeded', async () => {
    const s = await start();
    // The claim is there before the controller starts: its first sync is certain to be one (see FakeBackend.creators).
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    run(
      s,
      s.backend.provisioner('e2e', { failProvision: (call) => (call <= 2 ? 'backend busy, try again' : undefined) }),
    );

    await waitBound(s.api, 'data');
    expect(s.backend.provisions.map((p) => p.outcome)).toEqual(['failed', 'failed', 'ok']);
    await vi.waitFor(
      async () =>
        expect(await events(s, uid)).toEqual({
          Provisioning: { count: 3, message: 'External provisioner is provisioning volume for claim "default/data"' },
          ProvisioningFailed: { count: 2, message: 'backend busy, try again' },
          ProvisioningSucceeded: { count: 1, message: `Successfully provisioned volume pvc-${uid}` },
        }),
      WAIT,
    );
  });

  it('gives up on a claim after failedProvisionThreshold retries', async () => {
    const s = await start();
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const rc = run(s, s.backend.provisioner('e2e', { failProvision: () => 'quota exceeded' }), {
      failedProvisionThreshold: 2,
    });
    const gaveUp: string[] = [];
    rc.controller.on('gaveUp', (kind, key) => gaveUp.push(`${kind} ${key}`));

    // The first attempt and 2 retries, each a ProvisioningFailed the user sees counted on one Event.
    await vi.waitFor(() => expect(gaveUp).toEqual([`claim ${uid}`]), WAIT);
    await vi.waitFor(
      async () => expect((await events(s, uid)).ProvisioningFailed).toEqual({ count: 3, message: 'quota exceeded' }),
      WAIT,
    );
    await severalRetryPeriods();
    expect(s.backend.provisions).toHaveLength(3);
    expect(await events(s, uid)).toEqual({
      Provisioning: { count: 3, message: 'External provisioner is provisioning volume for claim "default/data"' },
      ProvisioningFailed: { count: 3, message: 'quota exceeded' },
    });
    const claim = await s.api.core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' });
    expect(claim.status?.phase).toBe('Pending');
  });

  it('gives up on a volume after failedDeleteThreshold retries, leaving the PV Released', async () => {
    const s = await start();
    const rc = run(s, s.backend.provisioner('e2e', { failDelete: () => 'backend offline' }), {
      failedDeleteThreshold: 1,
    });
    const gaveUp: string[] = [];
    rc.controller.on('gaveUp', (kind, key) => gaveUp.push(`${kind} ${key}`));
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    await waitBound(s.api, 'data');
    const pvUid = (await getVolume(s.api, pvName))?.metadata?.uid ?? '';

    await deleteClaims(s.api, ['data']);
    await vi.waitFor(() => expect(gaveUp).toEqual([`volume ${pvName}`]), WAIT);
    // Events about a PersistentVolume go to namespace default.
    await vi.waitFor(
      async () =>
        expect(await events(s, pvUid)).toEqual({ VolumeFailedDelete: { count: 2, message: 'backend offline' } }),
      WAIT,
    );
    await severalRetryPeriods();
    expect(s.backend.deletes.map((d) => d.failed)).toEqual([true, true]);
    expect((await getVolume(s.api, pvName))?.status?.phase).toBe('Released');
    expect([...s.backend.backing]).toEqual([pvName]);
  });

  it('reports a provision and a deletion that outlive their timeouts as failures the user sees', async () => {
    const s = await start();
    const backend = s.backend.provisioner('e2e');
    const timeoutMs = 3000;
    // The first call of each waits until its signal aborts, and fails with the reason.
    const firstCall = async (calls: number, signal: AbortSignal, what: string): Promise<void> => {
      if (calls > 1) return;
      const reason = await new Promise<unknown>((resolve) =>
        signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
      );
      throw new Error(`${what}: ${(reason as Error).message}`);
    };
    let provisions = 0;
    let deletes = 0;
    const provisioner: Provisioner = {
      provision: async (o, signal) => {
        await firstCall(++provisions, signal, 'the backend is still creating the volume');
        return backend.provision(o, signal);
      },
      delete: async (pv, signal) => {
        await firstCall(++deletes, signal, 'the backend did not answer');
        return backend.delete(pv, signal);
      },
    };
    run(s, provisioner, { provisionTimeoutMs: timeoutMs, deletionTimeoutMs: timeoutMs });
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    await waitBound(s.api, 'data');
    const timedOut = `the operation did not finish within its timeout of ${timeoutMs} ms`;
    await vi.waitFor(
      async () =>
        expect((await events(s, uid)).ProvisioningFailed).toEqual({
          count: 1,
          message: `the backend is still creating the volume: ${timedOut}`,
        }),
      WAIT,
    );

    const pvUid = (await getVolume(s.api, pvName))?.metadata?.uid ?? '';
    await deleteClaims(s.api, ['data']);
    await vi.waitFor(async () => expect(await getVolume(s.api, pvName)).toBeUndefined(), WAIT);
    await vi.waitFor(
      async () =>
        expect((await events(s, pvUid)).VolumeFailedDelete).toEqual({
          count: 1,
          message: `the backend did not answer: ${timedOut}`,
        }),
      WAIT,
    );
    expect([...s.backend.backing]).toEqual([]);
  });

  it('with addFinalizer, guards a provisioned volume with its finalizer until the volume is deleted', async () => {
    const s = await start();
    const rc = run(s, s.backend.provisioner('e2e'), { addFinalizer: true });
    const deleteFailures: string[] = [];
    rc.controller.on('deleteFailed', (pv, err) => deleteFailures.push(`${pv.metadata?.name}: ${err.message}`));
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    await waitBound(s.api, 'data');
    expect((await getVolume(s.api, pvName))?.metadata?.finalizers).toContain(FINALIZER_PV);

    await deleteClaims(s.api, ['data']);
    await vi.waitFor(async () => expect(await getVolume(s.api, pvName)).toBeUndefined(), WAIT);
    // The backend was asked once: the pass the PV's own deletion queued, reading a cached copy that may not show the
    // finalizer's removal yet, did not delete it again; and taking the finalizer off did not fail (neither that
    // stale copy nor kube-controller-manager taking its pv-protection finalizer off meanwhile is a conflict).
    expect(s.backend.deletes.map((d) => [d.pvName, d.removed])).toEqual([[pvName, true]]);
    expect(deleteFailures).toEqual([]);
    expect([...s.backend.backing]).toEqual([]);
  });

  it('with addFinalizer, keeps a Retain volume (without the finalizer) after its claim is deleted', async () => {
    const s = await start();
    await createClass(s.api, 'keep', PROVISIONER, { reclaimPolicy: 'Retain' });
    const looked: string[] = [];
    // The controller asks shouldDelete about each volume it considers deleting: tells when it has seen it Released.
    const provisioner: Provisioner = {
      ...s.backend.provisioner('e2e'),
      shouldDelete: async (pv) => {
        looked.push(pv.status?.phase ?? '');
        return true;
      },
    };
    const rc = run(s, provisioner, { addFinalizer: true });
    const uid = (await createClaim(s.api, 'data', 'keep')).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    await waitBound(s.api, 'data');
    await vi.waitFor(
      async () => expect((await getVolume(s.api, pvName))?.metadata?.finalizers ?? []).not.toContain(FINALIZER_PV),
      WAIT,
    );

    await deleteClaims(s.api, ['data']);
    await vi.waitFor(() => expect(looked).toContain('Released'), WAIT);
    await settle(rc.controller, { timeoutMs: WAIT.timeout });
    const pv = await getVolume(s.api, pvName);
    expect(pv?.status?.phase).toBe('Released');
    expect(pv?.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv?.metadata?.finalizers ?? []).not.toContain(FINALIZER_PV);
    expect(s.backend.deletes).toEqual([]);
    expect([...s.backend.backing]).toEqual([pvName]);
  });

  it('deletes the volume again when its PV cannot be saved, and binds the claim once it can', async () => {
    const s = await start();
    let kubeConfig = s.cluster.kubeConfig;
    let allowCreate: () => Promise<void>;
    const kit = s.cluster.testkit;
    if (kit !== undefined) {
      // Answer PV creations as RBAC would deny them.
      const remove = kit.faults.add({
        verb: 'create',
        resource: 'persistentvolumes',
        action: { type: 'error', code: 403 },
      });
      allowCreate = async () => remove();
    } else {
      // The controller runs as a user with every permission it needs except creating PVs.
      await grant(s.api, 'e2e-provisioner', 'e2e-provisioner', controllerRules({ persistentvolumes: ['create'] }));
      kubeConfig = await (s.cluster.controlPlane?.kubeConfigFor({ user: 'e2e-provisioner' }) as Promise<KubeConfig>);
      allowCreate = () => setRules(s.api, 'e2e-provisioner', controllerRules());
    }
    run(s, s.backend.provisioner('e2e'), { createProvisionedPVRetryCount: 2, failedProvisionThreshold: 0 }, kubeConfig);
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    const cleanups = (): number => s.backend.deletes.filter((d) => d.pvName === pvName && d.removed).length;

    await vi.waitFor(() => expect(cleanups()).toBeGreaterThanOrEqual(2), WAIT);
    expect(s.history.createdByClaim.get(uid)).toBeUndefined();
    const failed = (await events(s, uid)).ProvisioningFailed;
    expect(failed?.count).toBeGreaterThanOrEqual(1);
    // kube-apiserver ends the denial of a cluster-scoped resource with "at the cluster scope"; the testkit's
    // injected 403 does not.
    expect(failed?.message).toMatch(
      /^Error creating provisioned PV object for claim default\/data: persistentvolumes is forbidden: User "[^"]+" cannot create resource "persistentvolumes" in API group ""( at the cluster scope)?\. Deleting the volume\.$/,
    );

    await allowCreate();
    const claim = await waitBound(s.api, 'data');
    expect(claim.spec?.volumeName).toBe(pvName);
    expect(s.history.createdByClaim.get(uid)).toEqual([pvName]);
    // The backend's view: provision, clean-up, provision, clean-up, …, provision: every attempt before the PV could
    // be saved found the previous attempt's volume gone again, so nothing was left behind.
    const calls = s.timeline.marks
      .filter((m) => (m.what === 'provision' && m.key === uid) || (m.what === 'delete' && m.key === pvName))
      .map((m) => m.what);
    const saved = calls.lastIndexOf('delete') + 1;
    expect(calls.slice(0, saved)).toEqual(calls.slice(0, saved).map((_, i) => (i % 2 === 0 ? 'provision' : 'delete')));
    expect(calls.slice(saved)).toEqual(['provision']);
    expect(s.backend.provisions.slice(0, saved / 2 + 1).map((p) => p.reused)).toEqual(
      Array.from({ length: saved / 2 + 1 }, () => false),
    );
    expect([...s.backend.backing]).toEqual([pvName]);
    await vi.waitFor(
      async () =>
        expect((await events(s, uid)).ProvisioningSucceeded).toEqual({
          count: 1,
          message: `Successfully provisioned volume ${pvName}`,
        }),
      WAIT,
    );
  });
});
