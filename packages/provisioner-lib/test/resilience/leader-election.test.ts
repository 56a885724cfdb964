/**
 * Two replicas of a provisioner on one API server, with Lease leader election: only the leader provisions, and when
 * it crashes the other takes over after the lease expires and provisions what is left, each claim once.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import { captureLogger, type LogLine } from '../events/capture-logger.js';
import { ChangeStream, createClaims, createClass, listClaims, unbound, WAIT } from '../support/cluster.js';
import { type RunningController, type Scene, startController, startScene } from '../support/scene.js';

const PROVISIONER = 'example.com/resilience';
const LEASE = 'example.com-resilience';
const CLASS = 'fast';
const TIMINGS = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 200 };
/** client-go's jitter factor: a candidate sleeps retryPeriod × (1 + random × 1.2) between attempts. */
const JITTER = 1.2;

describeTiers('two replicas with leader election', (tier) => {
  let scene: Scene | undefined;
  let replicas: RunningController[] = [];
  let leases: ChangeStream<V1Lease> | undefined;
  afterEach(async () => {
    for (const r of replicas) r.abort.abort();
    await Promise.all(replicas.map((r) => r.running));
    replicas = [];
    leases?.stop();
    leases = undefined;
    scene?.history.stop();
    scene = undefined;
  });

  it('only the leader provisions; after it crashes the other replica takes over and every claim gets exactly one PV', async () => {
    scene = await startScene(tier);
    const { api, timeline, backend, history } = scene;
    // Lease holders in the order the API server stored them.
    const holders: { holder: string; transitions: number }[] = [];
    leases = await ChangeStream.start<V1Lease>(
      api.kubeConfig,
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      () => api.kubeConfig.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'default' }),
      (type, lease) => {
        if (type === 'DELETED' || lease.metadata?.name !== LEASE) return;
        const holder = lease.spec?.holderIdentity ?? '';
        if (holders.at(-1)?.holder !== holder) holders.push({ holder, transitions: lease.spec?.leaseTransitions ?? 0 });
      },
    );
    await createClass(api, CLASS, PROVISIONER);

    // Each replica's log: a candidate logs every attempt to acquire the Lease that failed (one Lease GET each).
    const logs = new Map<string, LogLine[]>();
    const start = (identity: string): RunningController => {
      const logger = captureLogger();
      logs.set(identity, logger.lines);
      return startController(api.kubeConfig, timeline, identity, {
        provisionerName: PROVISIONER,
        provisioner: backend.provisioner(identity),
        ...TIMINGS,
        resyncPeriodMs: 60_000,
        createProvisionedPVIntervalMs: 20,
        logger,
      });
    };
    const failedAttempts = (identity: string): number => (logs.get(identity) ?? []).filter((l) => l.message === 'Failed to acquire lease').length;
    // Both start together and race for the Lease.
    replicas = [start('replica-a'), start('replica-b')];
    await vi.waitFor(() => expect(timeline.find({ what: 'startedLeading' })).toHaveLength(1), { timeout: 10_000, interval: 20 });
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
    await vi.waitFor(() => expect(timeline.find({ who: follower.identity, what: 'newLeader', key: leader.identity }).length).toBeGreaterThan(0), {
      timeout: 10_000,
      interval: 20,
    });
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
    await vi.waitFor(() => expect(timeline.find({ who: follower.identity, what: 'startedLeading' })).toHaveLength(1), {
      timeout: 20_000,
      interval: 20,
    });
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
      expect(new Set(backend.provisionsByClaim().get(uid)?.map((p) => p.who))).toEqual(new Set(backend.creators(uid)));
    }

    // Takeover within leaseDuration + retryPeriod, measured on the candidate's own retry loop instead of a clock: it
    // reads the Lease once per attempt, attempts at least retryPeriod apart, and may take the Lease once the record
    // has not changed for leaseDuration since it last saw a change (at most one jittered retry period before the
    // crash). A slow machine stretches the attempts apart, which only lowers the count.
    const maxAttempt = TIMINGS.retryPeriodMs * (1 + JITTER);
    const maxAttempts = Math.ceil((TIMINGS.leaseDurationMs + 2 * maxAttempt) / TIMINGS.retryPeriodMs) + 1;
    expect(takeoverAttempts).toBeDefined();
    const attempts = (takeoverAttempts ?? 0) - attemptsAtCrash;
    expect(attempts).toBeGreaterThan(0);
    expect(attempts).toBeLessThanOrEqual(maxAttempts);
    // The Lease changed hands exactly once: the leader, then the follower, one transition more.
    const changes = holders.filter((h) => h.holder !== '');
    expect(changes.map((h) => h.holder)).toEqual([leader.identity, follower.identity]);
    expect((changes[1]?.transitions ?? 0) - (changes[0]?.transitions ?? 0)).toBe(1);
    const lease = await api.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'default', name: LEASE });
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
});
