/**
 * Restarts, on both tiers. A provisioner process stops in the middle of a burst of claims and a new process (new
 * identity) takes over: no claim is lost and none is provisioned twice. The API server stops and starts again with
 * its data kept and its history compacted: the controller lists again and carries on.
 *
 * Leader election is on, as in a real Deployment where the replacement pod starts while the old one may still be
 * terminating: the new instance must wait for the old instance's Lease to expire (the old one does not release it,
 * as in the Go library), which is what keeps the two from provisioning at the same time. With leader election off
 * nothing would order them, and the test could only pass by waiting for the old run to end first.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { afterEach, expect, it, vi } from 'vitest';
import { captureLogger } from '../events/capture-logger.js';
import { createClaims, createClass, deleteClaims, getVolume, listClaims, unbound, WAIT } from '../support/cluster.js';
import { type RunningController, type Scene, started, startController, startScene } from '../support/scene.js';

const PROVISIONER = 'example.com/restart';
const CLASS = 'standard';
const CLAIMS = 40;
/** The old process is stopped when it has saved this many PVs. */
const STOP_AFTER = 12;
/** The controller's default number of claim workers. */
const THREADINESS = 4;
/**
 * The Lease's timings, on real time (the real tier's API server knows no fake clock): the old process must keep
 * leading until the test stops it, so its renew deadline is one a busy machine does not miss; the new process waits
 * out the lease the old one leaves behind.
 */
const LEASE_TIMINGS = { leaseDurationMs: 8_000, renewDeadlineMs: 6_000, retryPeriodMs: 500 };

describeTiers('restarts', (tier) => {
  let scene: Scene | undefined;
  let running: RunningController[] = [];
  afterEach(async () => {
    for (const r of running) r.abort.abort();
    await Promise.all(running.map((r) => r.running));
    running = [];
    scene?.history.stop();
    scene = undefined;
  });

  it('a controller stopped midway through a burst is replaced by a new one: every claim Bound, none provisioned twice', async () => {
    scene = await startScene(tier);
    const { api, timeline, backend, history } = scene;
    await createClass(api, CLASS, PROVISIONER);
    const start = (identity: string): RunningController =>
      startController(api.kubeConfig, timeline, identity, {
        provisionerName: PROVISIONER,
        // Each call creates the backing volume, then takes 60 ms; stopping the controller aborts calls in that window,
        // which leaves the volume behind without a PV, as a real half-finished backend operation would.
        provisioner: backend.provisioner(identity, { delayMs: 60, honourAbort: true }),
        ...LEASE_TIMINGS,
        resyncPeriodMs: 60_000,
        createProvisionedPVIntervalMs: 20,
      });

    const old = start('old-process');
    running.push(old);
    await started(old.controller, old.running);
    let saved = 0;
    let successor: RunningController | undefined;
    // When the new process starts leading, the old one's work has ended: no provision call still under way, and every
    // successful one saved. Listened for as the new process starts: it may lead before the test looks again.
    let oldWorkAtTakeover: { pending: number; ok: number; saved: number } | undefined;
    old.controller.on('provisioned', () => {
      saved += 1;
      if (saved !== STOP_AFTER) return;
      // Stop the old process (its other workers are in the middle of provisioning) and start the new one at once.
      old.abort.abort();
      timeline.mark('test', 'oldStopped');
      successor = start('new-process');
      running.push(successor);
      successor.controller.once('startedLeading', () => {
        const mine = backend.provisions.filter((p) => p.who === old.identity);
        oldWorkAtTakeover = {
          pending: mine.filter((p) => p.outcome === 'pending').length,
          ok: mine.filter((p) => p.outcome === 'ok').length,
          saved: timeline.find({ who: old.identity, what: 'provisioned' }).length,
        };
      });
    });
    const uids = await createClaims(api, 'burst', CLAIMS, CLASS);
    const names = Array.from({ length: CLAIMS }, (_, i) => `burst-${i}`);

    await vi.waitFor(() => expect(successor).toBeDefined(), WAIT);
    const next = successor as RunningController;
    await old.running;
    expect(old.stopped()).toBe(true);
    await vi.waitFor(async () => expect(await unbound(api, names)).toEqual([]), WAIT);

    // The old process provisioned some but not all; the new one did the rest, after the old Lease expired.
    const byOld = backend.provisions.filter((p) => p.who === old.identity);
    const byNew = backend.provisions.filter((p) => p.who === next.identity);
    const inFlight = byOld.filter((p) => p.outcome === 'aborted');
    expect(timeline.find({ who: old.identity, what: 'provisioned' }).length).toBeGreaterThanOrEqual(STOP_AFTER);
    expect(timeline.find({ who: old.identity, what: 'provisioned' }).length).toBeLessThan(CLAIMS);
    expect(byNew.length).toBeGreaterThan(0);
    const stopped = timeline.first({ what: 'oldStopped' }).seq;
    const takeover = timeline.first({ who: next.identity, what: 'startedLeading' }).seq;
    // Once stopped, the old process started nothing new: only calls already under way (at most one per claim worker)
    // were cut short; the claims still queued were left alone for the new process.
    for (const p of byOld) expect(p.start).toBeLessThan(stopped);
    expect(inFlight.length).toBeLessThan(THREADINESS);
    expect(takeover).toBeGreaterThan(stopped);
    // It saw the old holder first, i.e. it waited for the Lease instead of finding it free.
    expect(timeline.find({ who: next.identity, what: 'newLeader', key: old.identity }).length).toBeGreaterThan(0);
    expect(oldWorkAtTakeover).toEqual({ pending: 0, ok: oldWorkAtTakeover?.saved, saved: oldWorkAtTakeover?.saved });
    for (const p of byOld) expect(p.start).toBeLessThan(takeover);
    for (const p of byNew) expect(p.start).toBeGreaterThan(takeover);

    // Nothing twice: one PV per claim ever, and one backing volume. The provisioner was called once per claim, except
    // for claims whose call was in flight when the old process stopped: the new process called again, the call reused
    // the volume the aborted one had created (idempotent), and still only one PV exists. (A claim synced twice in a
    // row may also see a second, reusing call; see FakeBackend.creators.)
    expect(history.duplicates()).toEqual([]);
    const calls = backend.provisionsByClaim();
    const interrupted = new Set(inFlight.map((p) => p.claimUid));
    for (const uid of uids) {
      expect(history.createdByClaim.get(uid)).toEqual([`pvc-${uid}`]);
      const [first, ...again] = calls.get(uid) ?? [];
      if (interrupted.has(uid)) {
        expect([first?.who, first?.outcome, first?.reused]).toEqual([old.identity, 'aborted', false]);
        expect(again.length).toBeGreaterThan(0);
        for (const p of again) expect([p.who, p.outcome, p.reused]).toEqual([next.identity, 'ok', true]);
      } else {
        expect([first?.outcome, first?.reused]).toEqual(['ok', false]);
        for (const p of again) expect([p.who, p.outcome, p.reused]).toEqual([first?.who, 'ok', true]);
      }
    }
    // Nothing lost: every claim Bound to its own PV, and the backend holds exactly those volumes.
    const claims = await listClaims(api);
    expect(claims).toHaveLength(CLAIMS);
    for (const c of claims) expect(c.spec?.volumeName).toBe(`pvc-${c.metadata?.uid ?? ''}`);
    expect(backend.backing).toEqual(new Set(claims.map((c) => c.spec?.volumeName)));
    console.info(
      `restart: old process saved ${timeline.find({ who: old.identity, what: 'provisioned' }).length}, ` +
        `${inFlight.length} calls in flight at the stop (at most ${backend.maxActive} at once), new process made ${byNew.length} calls`,
    );
  });

  it('the API server goes away and comes back with its history compacted: the controller lists again and carries on', async () => {
    scene = await startScene(tier);
    const { cluster, api, timeline, backend, history } = scene;
    await createClass(api, CLASS, PROVISIONER);
    const logger = captureLogger();
    // Leader election off: on, the run would end once the outage outlasts the renew deadline (the Go library exits
    // the process then; chaos.test.ts restarts such a process).
    const survivor = startController(api.kubeConfig, timeline, 'survivor', {
      provisionerName: PROVISIONER,
      provisioner: backend.provisioner('survivor'),
      leaderElection: false,
      resyncPeriodMs: 60_000,
      createProvisionedPVIntervalMs: 20,
      logger,
    });
    running.push(survivor);
    await started(survivor.controller, survivor.running);
    const before = ['before-0', 'before-1', 'before-2'];
    const beforeUids = await createClaims(api, 'before', before.length, CLASS);
    await vi.waitFor(async () => expect(await unbound(api, before)).toEqual([]), WAIT);

    // The API server goes away: the controller's watches fail, and it backs off before trying again.
    const stopped = logger.lines.length;
    await cluster.stopApiServer();
    await vi.waitFor(
      () =>
        expect(
          logger.lines.slice(stopped).some((l) => l.message === 'Restarting watch' && Number(l.fields.delayMs) > 0),
        ).toBe(true),
      WAIT,
    );
    // It comes back with the data kept. A claim is deleted and new ones are created, then the history is compacted:
    // the controller cannot resume its watches from where it was.
    await cluster.startApiServer();
    await vi.waitFor(() => expect(history.connected()).toBe(true), WAIT);
    await deleteClaims(api, ['before-0']);
    const after = ['after-0', 'after-1', 'after-2'];
    const afterUids = await createClaims(api, 'after', after.length, CLASS);
    await cluster.compact();

    await vi.waitFor(async () => expect(await unbound(api, after)).toEqual([]), WAIT);
    const released = `pvc-${beforeUids[0] ?? ''}`;
    await vi.waitFor(async () => expect(await getVolume(api, released)).toBeUndefined(), WAIT);
    // It noticed that it had missed changes (410 Gone) and listed again, instead of trusting its caches.
    expect(
      logger.lines.filter((l) => l.message === 'Relisting' && l.fields.reason === 'expired').length,
    ).toBeGreaterThan(0);
    // One PV and one backing volume per claim; the deleted claim's volume is gone from both.
    expect(history.duplicates()).toEqual([]);
    for (const uid of [...beforeUids, ...afterUids]) expect(backend.creators(uid)).toEqual([survivor.identity]);
    const claims = await listClaims(api);
    expect(claims.map((c) => c.metadata?.name).sort()).toEqual([...before.slice(1), ...after].sort());
    expect(backend.backing).toEqual(new Set(claims.map((c) => c.spec?.volumeName)));
    expect(backend.deletes.filter((d) => d.removed).map((d) => d.pvName)).toEqual([released]);
    // The history follows a watch, which may hear of the deletion after the read above saw the volume gone.
    await vi.waitFor(() => expect(history.deleted.get(released)).toBe(1), WAIT);
  });
});
