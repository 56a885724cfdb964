/**
 * Two replicas of a provisioner on one API server, with Lease leader election: only the leader provisions, and when
 * it crashes the other takes over after the lease expires and provisions what is left, each claim once. The lease
 * expires after the duration the holder wrote into it, whatever the other replica's own configuration.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import { captureLogger, type LogLine } from '../events/capture-logger.js';
import { ChangeStream, createClaims, createClass, listClaims, unbound, WAIT } from '../support/cluster.js';
import { controllerHealthChecks } from '../../src/controller/health.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import { startHttpEndpoint } from '../../src/metrics/http.js';
import { type RunningController, type Scene, startController, startScene } from '../support/scene.js';

const PROVISIONER = 'example.com/resilience';
const LEASE = 'example.com-resilience';
const CLASS = 'fast';
/**
 * Real time: the real tier's API server knows no fake clock. A 4 s renew deadline, which a busy machine does not miss
 * (a leader that missed it would rightly be replaced, and the order of leaderships these tests check would not hold),
 * and so a 5 s lease; attempts every 200 ms.
 */
const TIMINGS = { leaseDurationMs: 5000, renewDeadlineMs: 4000, retryPeriodMs: 200 };
/** client-go's jitter factor: a candidate sleeps retryPeriod × (1 + random × 1.2) between attempts. */
const JITTER = 1.2;

/** The Lease's election fields, as stored by the API server. */
interface LeaseRecord {
  holder: string;
  durationSeconds: number | undefined;
  transitions: number;
}

describeTiers('two replicas with leader election', (tier) => {
  let scene: Scene | undefined;
  let replicas: RunningController[] = [];
  let leases: ChangeStream<V1Lease> | undefined;
  // Each replica's log: a candidate logs every attempt to acquire the Lease that failed (one Lease GET each).
  const logs = new Map<string, LogLine[]>();
  afterEach(async () => {
    for (const r of replicas) r.abort.abort();
    await Promise.all(replicas.map((r) => r.running));
    replicas = [];
    leases?.stop();
    leases = undefined;
    scene?.history.stop();
    scene = undefined;
    logs.clear();
  });

  /** Starts a replica with the test's timings unless `options` says otherwise; it is stopped after the test. */
  function startReplica(
    s: Scene,
    identity: string,
    options: Partial<ProvisionControllerOptions> = {},
  ): RunningController {
    const logger = captureLogger();
    logs.set(identity, logger.lines);
    const replica = startController(s.api.kubeConfig, s.timeline, identity, {
      provisionerName: PROVISIONER,
      provisioner: s.backend.provisioner(identity),
      ...TIMINGS,
      resyncPeriodMs: 60_000,
      createProvisionedPVIntervalMs: 20,
      logger,
      ...options,
    });
    replicas.push(replica);
    return replica;
  }

  function failedAttempts(identity: string): number {
    return (logs.get(identity) ?? []).filter((l) => l.message === 'Failed to acquire lease').length;
  }

  /**
   * Every distinct state of the Lease's election fields, in the order the API server stored them; `onRecord` is
   * called with each as it arrives.
   */
  async function recordLease(
    s: Scene,
    onRecord: (record: LeaseRecord) => void = () => undefined,
  ): Promise<LeaseRecord[]> {
    const records: LeaseRecord[] = [];
    leases = await ChangeStream.start<V1Lease>(
      s.api.kubeConfig,
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      () => s.api.kubeConfig.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'default' }),
      (type, lease) => {
        if (type === 'DELETED' || lease.metadata?.name !== LEASE) return;
        const record = {
          holder: lease.spec?.holderIdentity ?? '',
          durationSeconds: lease.spec?.leaseDurationSeconds,
          transitions: lease.spec?.leaseTransitions ?? 0,
        };
        const last = records.at(-1);
        if (
          last?.holder === record.holder &&
          last.durationSeconds === record.durationSeconds &&
          last.transitions === record.transitions
        )
          return;
        records.push(record);
        onRecord(record);
      },
    );
    return records;
  }

  /**
   * The most attempts a candidate needs to take over from a holder that stopped renewing a Lease of `leaseMs`,
   * counted on the candidate's own retry loop instead of a clock: it reads the Lease once per attempt, attempts at
   * least a retry period apart, and may take the Lease once the record has not changed for the recorded duration
   * since it last saw a change (at most one jittered retry period before the stop), so at most one more jittered
   * period passes before the attempt that takes it. A slow machine stretches attempts apart, which only lowers the
   * count.
   */
  function maxTakeoverAttempts(leaseMs: number): number {
    const maxAttempt = TIMINGS.retryPeriodMs * (1 + JITTER);
    return Math.ceil((leaseMs + 2 * maxAttempt) / TIMINGS.retryPeriodMs) + 1;
  }

  it('only the leader provisions; after it crashes the other replica takes over and every claim gets exactly one PV', async () => {
    scene = await startScene(tier);
    const s = scene;
    const { api, timeline, backend, history } = scene;
    const records = await recordLease(scene);
    await createClass(api, CLASS, PROVISIONER);

    // Both start together and race for the Lease.
    startReplica(s, 'replica-a');
    startReplica(s, 'replica-b');
    await vi.waitFor(() => expect(timeline.find({ what: 'startedLeading' })).toHaveLength(1), WAIT);
    const leaderId = timeline.first({ what: 'startedLeading' }).who;
    const leader = replicas.find((r) => r.identity === leaderId) as RunningController;
    const follower = replicas.find((r) => r.identity !== leaderId) as RunningController;
    let takeoverAttempts: number | undefined;
    follower.controller.once('startedLeading', () => {
      takeoverAttempts = failedAttempts(follower.identity) + 1;
    });

    // Phase 1: claims while the leader is alive.
    const first = Array.from({ length: 8 }, (_, i) => `first-${i}`);
    const firstUids = await createClaims(api, 'first', first.length, CLASS);
    await vi.waitFor(async () => expect(await unbound(api, first)).toEqual([]), WAIT);
    // The follower is a candidate that saw the leader, and its provisioner was never called.
    await vi.waitFor(
      () =>
        expect(
          timeline.find({ who: follower.identity, what: 'newLeader', key: leader.identity }).length,
        ).toBeGreaterThan(0),
      WAIT,
    );
    expect(backend.provisions.filter((p) => p.who === follower.identity)).toEqual([]);
    expect(new Set(backend.provisions.map((p) => p.claimUid))).toEqual(new Set(firstUids));

    // Crash the leader: abort its run; it does not release the Lease (the library's behaviour).
    leader.abort.abort();
    await leader.running;
    expect(leader.stopped()).toBe(true);
    const crash = timeline.mark('test', 'leaderCrashed');
    const attemptsAtCrash = failedAttempts(follower.identity);

    // Phase 2: claims created while nobody leads.
    const second = Array.from({ length: 8 }, (_, i) => `second-${i}`);
    const secondUids = await createClaims(api, 'second', second.length, CLASS);
    await vi.waitFor(
      () => expect(timeline.find({ who: follower.identity, what: 'startedLeading' })).toHaveLength(1),
      WAIT,
    );
    await vi.waitFor(async () => expect(await unbound(api, [...first, ...second])).toEqual([]), WAIT);

    // Order, from the timeline: the leader led, provisioned and stopped before the follower started leading; every
    // provision call of a replica lies inside its own leadership.
    const leaderStart = timeline.first({ who: leader.identity, what: 'startedLeading' }).seq;
    const leaderEnd = timeline.first({ who: leader.identity, what: 'runResolved' }).seq;
    const followerStart = timeline.first({ who: follower.identity, what: 'startedLeading' }).seq;
    expect(followerStart).toBeGreaterThan(crash.seq);
    for (const p of backend.provisions) {
      if (p.who === leader.identity) {
        expect(p.start).toBeGreaterThan(leaderStart);
        expect(p.start).toBeLessThan(leaderEnd);
      } else {
        expect(p.start).toBeGreaterThan(followerStart);
      }
    }
    // Phase 1 claims were the leader's, phase 2 claims the follower's, and each got one backing volume. A claim can
    // be synced twice in a row (see FakeBackend.creators): the second provision call reuses the volume.
    expect(firstUids.map((uid) => backend.creators(uid))).toEqual(firstUids.map(() => [leader.identity]));
    expect(secondUids.map((uid) => backend.creators(uid))).toEqual(secondUids.map(() => [follower.identity]));
    for (const uid of [...firstUids, ...secondUids]) {
      expect(
        new Set(
          backend
            .provisionsByClaim()
            .get(uid)
            ?.map((p) => p.who),
        ),
      ).toEqual(new Set(backend.creators(uid)));
    }

    // Takeover within the lease duration and two retry periods, counted on the follower's attempts.
    expect(takeoverAttempts).toBeDefined();
    const attempts = (takeoverAttempts ?? 0) - attemptsAtCrash;
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThanOrEqual(maxTakeoverAttempts(TIMINGS.leaseDurationMs));
    // The Lease changed hands exactly once: the leader, then the follower, one transition more.
    await vi.waitFor(() => expect(records.map((r) => r.holder)).toEqual([leader.identity, follower.identity]), WAIT);
    expect((records[1]?.transitions ?? 0) - (records[0]?.transitions ?? 0)).toBe(1);
    const lease = await api.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: 'default', name: LEASE });
    expect(lease.spec?.holderIdentity).toBe(follower.identity);

    // What the user sees: every claim Bound to its own PV, and no claim ever got a second PV.
    expect(history.duplicates()).toEqual([]);
    const claims = await listClaims(api);
    expect(claims).toHaveLength(first.length + second.length);
    for (const c of claims) {
      expect(c.status?.phase).toBe('Bound');
      expect(c.spec?.volumeName).toBe(`pvc-${c.metadata?.uid ?? ''}`);
      expect(history.createdByClaim.get(c.metadata?.uid ?? '')).toEqual([c.spec?.volumeName]);
    }
    expect(backend.backing).toEqual(new Set(claims.map((c) => c.spec?.volumeName)));
  });
  it("judges a holder's expiry by the duration it recorded: a candidate configured with a longer lease takes over after the holder's", async () => {
    scene = await startScene(tier);
    const s = scene;
    const records = await recordLease(scene);
    // The holder writes leaseDurationSeconds 5; the candidate would write 20 (and waited 20 s before the fix).
    const holder = startReplica(s, 'short-lease');
    await vi.waitFor(
      () => expect(s.timeline.find({ who: holder.identity, what: 'startedLeading' })).toHaveLength(1),
      WAIT,
    );
    const candidate = startReplica(s, 'long-lease', { leaseDurationMs: 20_000 });
    await vi.waitFor(
      () =>
        expect(s.timeline.find({ who: candidate.identity, what: 'newLeader', key: holder.identity })).toHaveLength(1),
      WAIT,
    );
    let takeoverAttempts: number | undefined;
    candidate.controller.once('startedLeading', () => {
      takeoverAttempts = failedAttempts(candidate.identity) + 1;
    });

    // Stopped without releasing the Lease (the library's default).
    holder.abort.abort();
    await holder.running;
    const attemptsAtStop = failedAttempts(candidate.identity);
    await vi.waitFor(
      () => expect(s.timeline.find({ who: candidate.identity, what: 'startedLeading' })).toHaveLength(1),
      WAIT,
    );

    // Within the holder's 5 s and two retry periods: at most 31 attempts, where its own 20 s take at least 44.
    expect(takeoverAttempts).toBeDefined();
    const attempts = (takeoverAttempts ?? 0) - attemptsAtStop;
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThanOrEqual(maxTakeoverAttempts(TIMINGS.leaseDurationMs));
    // The watch that records the Lease may deliver the new holder's write a moment after it started leading.
    await vi.waitFor(
      () =>
        expect(records.map((r) => [r.holder, r.durationSeconds])).toEqual([
          [holder.identity, 5],
          [candidate.identity, 20],
        ]),
      WAIT,
    );
  });
  it('with releaseOnCancel a stopped leader releases the Lease once its in-flight provisioning returned, and the standby takes over at once', async () => {
    scene = await startScene(tier);
    const s = scene;
    const { api, timeline, backend } = scene;
    // The moment the API server stored the released record, on the timeline.
    let standbyAttemptsAtRelease: number | undefined;
    const records = await recordLease(scene, (record) => {
      if (record.holder !== '') return;
      timeline.mark('lease', 'released');
      standbyAttemptsAtRelease = failedAttempts('standby');
    });
    await createClass(api, CLASS, PROVISIONER);
    // An 8 s lease: without the release, the standby would wait 8 s (at least 17 attempts) after the leader stopped.
    const slow = backend.provisioner('leader', { delayMs: 1500 });
    const leader = startReplica(s, 'leader', {
      leaseDurationMs: 8000,
      releaseOnCancel: true,
      provisioner: {
        ...slow,
        provision: async (options, signal) => {
          try {
            return await slow.provision(options, signal);
          } finally {
            timeline.mark('leader', 'provisionReturned', options.pvc.metadata?.uid ?? '');
          }
        },
      },
    });
    await vi.waitFor(() => expect(timeline.find({ who: 'leader', what: 'startedLeading' })).toHaveLength(1), WAIT);
    const standby = startReplica(s, 'standby');
    await vi.waitFor(
      () => expect(timeline.find({ who: 'standby', what: 'newLeader', key: 'leader' })).toHaveLength(1),
      WAIT,
    );
    let takeoverAttempts: number | undefined;
    standby.controller.once('startedLeading', () => {
      takeoverAttempts = failedAttempts('standby') + 1;
    });

    // Stop the leader while it provisions a claim.
    const [uid] = await createClaims(api, 'inflight', 1, CLASS);
    await vi.waitFor(() => expect(backend.active).toBe(1), WAIT);
    const stop = timeline.mark('test', 'stopLeader');
    leader.abort.abort();
    await leader.running;
    expect(timeline.find({ who: 'leader', what: 'runRejected' })).toEqual([]);
    await vi.waitFor(() => expect(timeline.find({ who: 'standby', what: 'startedLeading' })).toHaveLength(1), WAIT);

    // Order: the stop, the provision call returning, the release, the standby leading.
    const returned = timeline.first({ who: 'leader', what: 'provisionReturned', key: uid });
    const released = timeline.first({ who: 'lease', what: 'released' });
    expect(returned.seq).toBeGreaterThan(stop.seq);
    expect(released.seq).toBeGreaterThan(returned.seq);
    expect(timeline.first({ who: 'standby', what: 'startedLeading' }).seq).toBeGreaterThan(released.seq);
    // At once: the attempt that first reads the released record takes it (one read before it may still see the leader).
    expect(standbyAttemptsAtRelease).toBeDefined();
    expect((takeoverAttempts ?? 0) - (standbyAttemptsAtRelease ?? 0)).toBeLessThanOrEqual(2);
    // client-go's release: empty holder, leaseDurationSeconds 1, transitions kept; the standby's acquire adds one.
    await vi.waitFor(
      () =>
        expect(records).toEqual([
          { holder: 'leader', durationSeconds: 8, transitions: 0 },
          { holder: '', durationSeconds: 1, transitions: 0 },
          { holder: 'standby', durationSeconds: 5, transitions: 1 },
        ]),
      WAIT,
    );
  });
  it('a standby is ready: /readyz passes on both replicas, and /healthz/leader-election too', async () => {
    scene = await startScene(tier);
    const s = scene;
    const leader = startReplica(s, 'leader');
    await vi.waitFor(() => expect(s.timeline.find({ who: 'leader', what: 'startedLeading' })).toHaveLength(1), WAIT);
    const standby = startReplica(s, 'standby');
    await vi.waitFor(
      () => expect(s.timeline.find({ who: 'standby', what: 'newLeader', key: 'leader' })).toHaveLength(1),
      WAIT,
    );
    const serve = async (r: RunningController): Promise<string> => {
      const endpoint = await startHttpEndpoint({
        host: '127.0.0.1',
        port: 0,
        ...controllerHealthChecks(r.controller, true),
      });
      tier.defer(() => endpoint.close());
      return endpoint.url;
    };
    const get = async (url: string): Promise<{ status: number; body: string }> => {
      const res = await fetch(url);
      return { status: res.status, body: await res.text() };
    };
    const leaderUrl = await serve(leader);
    const standbyUrl = await serve(standby);

    await vi.waitFor(async () => expect(await get(`${leaderUrl}/readyz`)).toEqual({ status: 200, body: 'ok' }), WAIT);
    expect(standby.controller.hasSynced()).toBe(false);
    expect(await get(`${standbyUrl}/readyz`)).toEqual({ status: 200, body: 'ok' });
    expect((await get(`${standbyUrl}/readyz?verbose`)).body).toBe('[+]informers ok\nreadyz check passed\n');
    for (const url of [leaderUrl, standbyUrl]) {
      expect(await get(`${url}/healthz/leader-election`)).toMatchObject({ status: 200 });
      expect(await get(`${url}/healthz`)).toMatchObject({ status: 200 });
    }
  });
});
