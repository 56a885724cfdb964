/**
 * One provisioner under a misbehaving API server: about 20 % of all requests fail (500, 503, 429), every watch is
 * cut every two seconds, and for one phase no PV can be saved at all. Claims still end up Bound to exactly one PV
 * each, released volumes are deleted in the backend and in the API, and a volume whose PV could not be saved is
 * removed from the backend again.
 *
 * Testkit only: a real API server cannot be made to fail a fifth of its requests or cut every watch on demand. The
 * real tier's share of this (the API server going away and coming back with its history compacted, a PV that
 * cannot be saved) is in restart.test.ts and ../e2e/controller.test.ts.
 *
 * Time is a fake clock that runs on its own, about ten times faster than real time (support/clock-driver.ts): the
 * controllers' timers (leader election, retries, watch back-off, the event recorder) and the test's own (the pauses
 * between waves, the watch drops) all run on it.
 */
import type { Testkit } from '@kprov/testkit';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { sleep } from '../../src/clock/clock.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { LeaderElectionLostError } from '../../src/controller/controller.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from '../../src/workqueue/rate-limiters.js';
import { driveClock } from '../support/clock-driver.js';
import { createClass, type VolumeHistory } from '../support/cluster.js';
import { type RunningController, type Scene, startController, startScene } from '../support/scene.js';

const PROVISIONER = 'example.com/chaos';
const CLASS = 'flaky';
const CLAIMS = 30;
const WAVE = 5;
/** Between waves of claim creations and deletions, on the fake clock: six waves span about three watch drops. */
const WAVE_PAUSE_MS = 1000;
/** Every watch is cut this often, on the fake clock. */
const DROP_EVERY_MS = 2000;

/**
 * Runs the controller as a Deployment would: when it stops because it lost the Lease (its renewals failed too
 * often), a new process with a new identity starts. Counts those restarts.
 */
class Supervisor {
  current: RunningController;
  restarts = 0;
  private stopping = false;

  constructor(private readonly launch: (generation: number) => RunningController) {
    this.current = this.spawn();
  }

  private spawn(): RunningController {
    const rc = this.launch(this.restarts);
    void rc.running.then((result) => {
      if (this.stopping || rc !== this.current) return;
      // Anything else is a bug; the unhandled rejection fails the test run.
      if (!(result instanceof LeaderElectionLostError))
        throw new Error(`controller stopped unexpectedly: ${String(result)}`);
      this.restarts += 1;
      this.current = this.spawn();
    });
    return rc;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.current.abort.abort();
    await this.current.running;
  }
}

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

/*
 * The user's side (claims created, deleted and looked at) goes to the store directly: the injected faults are
 * meant for the controller, not for the test.
 */

function createClaims(kit: Testkit, prefix: string, n: number, className: string): string[] {
  const uids: string[] = [];
  for (let i = 0; i < n; i++) {
    const claim: V1PersistentVolumeClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `${prefix}-${i}`, namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Mi' } },
        storageClassName: className,
      },
    };
    uids.push(String(kit.store.create('persistentvolumeclaims', claim as unknown as Obj).metadata.uid));
  }
  return uids;
}

function deleteClaims(kit: Testkit, names: readonly string[]): void {
  for (const name of names) kit.store.delete('persistentvolumeclaims', 'default', name);
}

function claimsInStore(kit: Testkit): V1PersistentVolumeClaim[] {
  return kit.store.list('persistentvolumeclaims') as unknown as V1PersistentVolumeClaim[];
}

function volumesInStore(kit: Testkit): V1PersistentVolume[] {
  return kit.store.list('persistentvolumes') as unknown as V1PersistentVolume[];
}

/**
 * Waits until the history (a watch of PVs, cut by the watch drops like every other) has seen what the store holds: a
 * creation for every PV there, and a deletion for each of `deleted`.
 */
async function historyCaughtUp(kit: Testkit, history: VolumeHistory, deleted: readonly string[] = []): Promise<void> {
  await vi.waitFor(() => {
    for (const pv of volumesInStore(kit))
      expect(history.createdByClaim.get(pv.spec?.claimRef?.uid ?? '') ?? []).toContain(pv.metadata?.name);
    for (const pv of deleted) expect(history.deleted.has(pv), pv).toBe(true);
  }, WAIT);
}

function unbound(kit: Testkit, names: readonly string[]): string[] {
  const phase = new Map(claimsInStore(kit).map((c) => [c.metadata?.name ?? '', c.status?.phase]));
  return names.filter((n) => phase.get(n) !== 'Bound');
}

let scene: Scene | undefined;
let supervisor: Supervisor | undefined;
let stopClock: (() => void) | undefined;

// Testkit only: a real server cannot fail a share of its requests or cut every watch on demand (the restart suite
// has the real tier's version: an API server stopped, started and compacted).
describeTiers(
  'chaos',
  (tier) => {
    it('under ~20% failing requests and dropped watches every claim gets one PV, every released volume is deleted, nothing leaks', async () => {
      const clock = new FakeClock();
      let dropping = true;
      tier.defer(async () => {
        dropping = false;
        await supervisor?.stop();
        supervisor = undefined;
        scene?.history.stop();
        scene = undefined;
        stopClock?.();
        stopClock = undefined;
      });
      stopClock = driveClock(clock);
      const pause = (ms: number): Promise<void> => sleep(clock, ms);
      scene = await startScene(tier);
      const { api, timeline, backend, history } = scene;
      const k = scene.cluster.testkit as Testkit;
      await createClass(api, CLASS, PROVISIONER);

      // ~20 % of every request (lists, watches, gets, creates, deletes, Lease and Event writes): 1 − 0.93³ ≈ 19.6 %.
      k.faults.add({ action: { type: 'error', code: 500 }, rate: 0.07 });
      k.faults.add({ action: { type: 'error', code: 503 }, rate: 0.07 });
      k.faults.add({ action: { type: 'error', code: 429, retryAfterSeconds: 0 }, rate: 0.07 });
      let drops = 0;
      const drop = (): void => {
        if (!dropping) return;
        drops += k.server.dropWatches() > 0 ? 1 : 0;
        clock.setTimeout(drop, DROP_EVERY_MS);
      };
      clock.setTimeout(drop, DROP_EVERY_MS);

      const options: Omit<ProvisionControllerOptions, 'kubeConfig' | 'identity'> = {
        provisionerName: PROVISIONER,
        provisioner: backend.provisioner('chaos'),
        clock,
        resyncPeriodMs: 60_000,
        createProvisionedPVIntervalMs: 20,
        rateLimiter: new MaxOfRateLimiter<string>(
          new ItemExponentialFailureRateLimiter<string>(5, 500),
          new BucketRateLimiter<string>(100, 200),
        ),
        failedProvisionThreshold: 0,
        failedDeleteThreshold: 0,
        // Leader election on: its Lease requests fail like every other request.
        leaseDurationMs: 1500,
        renewDeadlineMs: 1000,
        retryPeriodMs: 200,
      };
      supervisor = new Supervisor((generation) =>
        startController(api.kubeConfig, timeline, `chaos-${generation}`, options),
      );

      // Phase durations, for the summary line only (nothing is asserted on time).
      const phases: string[] = [];
      let phaseStart = performance.now();
      const phaseDone = (name: string): void => {
        phases.push(`${name} ${((performance.now() - phaseStart) / 1000).toFixed(1)}s`);
        phaseStart = performance.now();
      };

      // Phase 1: the PV of a claim cannot be saved at all (every PV create fails). Each attempt's backing volume is
      // deleted again before the claim is retried; once PVs can be saved the claim is Bound to one PV backed by one
      // volume. This phase runs first, while the controller's watches are fresh: a watch that is cut before it delivered
      // anything reconnects after a back-off that doubles each time (0.8 s up to 30 s, plus jitter; src/watch), so an
      // informer left idle through several drops notices the next change only tens of seconds later.
      const stopFailingCreates = k.faults.add({
        verb: 'create',
        resource: 'persistentvolumes',
        action: { type: 'error', code: 500 },
      });
      const [poisonUid = ''] = createClaims(k, 'unsaveable', 1, CLASS);
      const poisonPV = `pvc-${poisonUid}`;
      const cleanups = (): number => backend.deletes.filter((d) => d.pvName === poisonPV && d.removed).length;
      await vi.waitFor(() => expect(cleanups()).toBeGreaterThanOrEqual(2), WAIT);
      expect(history.createdByClaim.get(poisonUid)).toBeUndefined();
      stopFailingCreates();
      await vi.waitFor(() => expect(unbound(k, ['unsaveable-0'])).toEqual([]), WAIT);
      await historyCaughtUp(k, history);
      expect(history.createdByClaim.get(poisonUid)).toEqual([poisonPV]);
      // The backend's view of that volume: provision, cleanup, provision, cleanup, ..., provision: every attempt before
      // the PV could be saved found the previous attempt's volume gone again, so nothing was left behind. Once the PV was
      // saved, the claim may still be looked at again before the PV reaches the controller's cache (a delayed retry, an
      // informer lagging behind a dropped watch; Go behaves the same): provision is then called again, reuses the
      // volume (it is idempotent) and the PV already exists, so nothing new is created.
      const calls = timeline.marks.filter(
        (m) => (m.what === 'provision' && m.key === poisonUid) || (m.what === 'delete' && m.key === poisonPV),
      );
      const kinds = calls.map((m) => m.what);
      const lastCleanup = kinds.lastIndexOf('delete');
      expect(lastCleanup).toBeGreaterThanOrEqual(3);
      expect(kinds.slice(0, lastCleanup + 1)).toEqual(
        kinds.slice(0, lastCleanup + 1).map((_, i) => (i % 2 === 0 ? 'provision' : 'delete')),
      );
      expect(kinds.slice(lastCleanup + 1).length).toBeGreaterThan(0);
      expect(kinds.slice(lastCleanup + 1).every((w) => w === 'provision')).toBe(true);
      const cleanupCount = (lastCleanup + 1) / 2;
      const attempts = backend.provisionsByClaim().get(poisonUid) ?? [];
      const fresh = cleanupCount + 1;
      expect(attempts.slice(0, fresh).map((p) => p.reused)).toEqual(Array.from({ length: fresh }, () => false));
      expect(attempts.slice(fresh).every((p) => p.reused)).toBe(true);
      expect(backend.backing).toEqual(new Set([poisonPV]));

      phaseDone('unsaveable');

      // Phase 2: claims, created in waves so that the work spans several watch drops; all end up Bound.
      const names: string[] = [];
      const uids: string[] = [];
      for (let wave = 0; wave < CLAIMS / WAVE; wave++) {
        uids.push(...createClaims(k, `claim-${wave}`, WAVE, CLASS));
        names.push(...Array.from({ length: WAVE }, (_, i) => `claim-${wave}-${i}`));
        await pause(WAVE_PAUSE_MS);
      }
      await vi.waitFor(() => expect(unbound(k, names)).toEqual([]), WAIT);
      await historyCaughtUp(k, history);
      const claims = claimsInStore(k);
      expect(claims).toHaveLength(CLAIMS + 1);
      for (const c of claims) expect(c.spec?.volumeName).toBe(`pvc-${c.metadata?.uid ?? ''}`);
      // Exactly one PV was ever created per claim (retries and repeated provision calls reuse the PV name).
      expect(history.duplicates()).toEqual([]);
      for (const uid of uids) expect(history.createdByClaim.get(uid)).toHaveLength(1);
      for (const uid of uids) expect(backend.provisionsByClaim().get(uid)?.length ?? 0).toBeGreaterThan(0);
      const pvNames = claims.map((c) => c.spec?.volumeName ?? '');
      expect(backend.backing).toEqual(new Set(pvNames));

      phaseDone('create');

      // Volumes removed before any claim is deleted: the unsaveable claim's cleanups, and any claim whose PV create
      // failed every attempt (about 0.2⁵ per claim), whose volume was then deleted and provisioned again.
      const removedBefore = new Map(
        pvNames.map((pv) => [
          pv,
          backend
            .deletesByVolume()
            .get(pv)
            ?.filter((d) => d.removed).length ?? 0,
        ]),
      );
      expect(removedBefore.get(poisonPV)).toBe(cleanupCount);

      // Phase 3: delete every claim, in waves; the released volumes go, in the backend and in the API.
      const all = ['unsaveable-0', ...names];
      for (let i = 0; i < all.length; i += WAVE) {
        deleteClaims(k, all.slice(i, i + WAVE));
        await pause(WAVE_PAUSE_MS);
      }
      await vi.waitFor(() => {
        expect(volumesInStore(k).map((v) => v.metadata?.name)).toEqual([]);
        expect([...backend.backing]).toEqual([]);
      }, WAIT);
      await historyCaughtUp(k, history, pvNames);
      const deletes = backend.deletesByVolume();
      for (const pv of pvNames) {
        // Deleting the claims removed each volume exactly once more. Delete may be called again (it must be
        // idempotent) when the PV object's deletion failed after the backend delete succeeded, or a stale cache showed
        // the PV Released again; those calls find nothing to remove.
        const removals = deletes.get(pv)?.filter((d) => d.removed).length;
        expect(removals).toBe((removedBefore.get(pv) ?? 0) + 1);
        expect(history.deleted.get(pv)).toBe(1);
      }
      expect(history.duplicates()).toEqual([]);
      history.stop();
      phaseDone('delete');

      // Stopping (SIGTERM → abort) while the API server still fails requests: `run` settles once the in-flight work is
      // done; it does not sit out the event recorder's retry sleeps (10 s each, 12 tries per queued event).
      const last = supervisor.current;
      const s = supervisor;
      void s.stop();
      await vi.waitFor(() => expect(last.stopped()).toBe(true), WAIT);

      // Leadership losses are possible under these faults but should be rare; each one restarts the process.
      expect(supervisor.restarts).toBeLessThanOrEqual(2);
      // The chaos really happened: a fifth of the requests failed, and watches were cut several times.
      const requests = Object.values(k.server.requestCounts()).reduce((a, b) => a + b, 0);
      const failed = k.faults
        .hits()
        .slice(0, 3)
        .reduce((a, b) => a + b, 0);
      expect(failed / requests).toBeGreaterThan(0.1);
      expect(drops).toBeGreaterThanOrEqual(3);
      console.info(
        `chaos: phases ${phases.join(', ')}; ${requests} requests, ${failed} failed, ${drops} watch drops, ${supervisor.restarts} restarts after a lost lease; ` +
          `${backend.provisions.length} provision calls for ${CLAIMS + 1} claims, ${backend.deletes.length} delete calls for ${CLAIMS + 1} volumes`,
      );
    }, 90_000);
  },
  { tiers: ['testkit'] },
);
