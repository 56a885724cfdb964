/**
 * Two replicas of a provisioner on one API server, with Lease leader election: only the leader provisions, and when
 * it crashes the other takes over after the lease expires and provisions what is left, each claim once.
 */
import type { Testkit } from '@kprov/testkit';
import type { V1Lease } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import {
  claimsInStore,
  createClaims,
  createClass,
  type RunningController,
  startController,
  startScene,
  unbound,
} from './support.js';

const PROVISIONER = 'example.com/resilience';
const LEASE = 'example.com-resilience';
const CLASS = 'fast';
const TIMINGS = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 200 };
/** client-go's jitter factor: a candidate sleeps retryPeriod × (1 + random × 1.2) between attempts. */
const JITTER = 1.2;

let kit: Testkit | undefined;
let replicas: RunningController[] = [];
afterEach(async () => {
  for (const r of replicas) r.abort.abort();
  await Promise.all(replicas.map((r) => r.running));
  replicas = [];
  await kit?.stop();
  kit = undefined;
});

it('only the leader provisions; after it crashes the other replica takes over and every claim gets exactly one PV', async () => {
  const { kit: k, timeline, backend, history } = await startScene();
  kit = k;
  // Lease holders in the order the API server stored them.
  const holders: { holder: string; transitions: number }[] = [];
  const unsubscribe = k.store.subscribe((c) => {
    if (c.resource !== 'coordination.k8s.io/leases' || c.type === 'DELETED') return;
    const spec = (c.object as unknown as V1Lease).spec;
    const holder = spec?.holderIdentity ?? '';
    if (holders.at(-1)?.holder !== holder) holders.push({ holder, transitions: spec?.leaseTransitions ?? 0 });
  });
  // Counts every Lease GET (a latency fault of 0 ms changes nothing but counts its hits): after the leader crashed,
  // only the candidate reads the Lease, once per acquire attempt.
  k.faults.add({ verb: 'get', resource: 'leases', action: { type: 'latency', ms: 0 } });
  const leaseGets = (): number => k.faults.hits()[0] ?? 0;
  createClass(k, CLASS, PROVISIONER);

  const start = (identity: string): RunningController =>
    startController(k, timeline, identity, {
      provisionerName: PROVISIONER,
      provisioner: backend.provisioner(identity),
      ...TIMINGS,
      resyncPeriodMs: 60_000,
      createProvisionedPVIntervalMs: 20,
    });
  // Both start together and race for the Lease.
  replicas = [start('replica-a'), start('replica-b')];
  await vi.waitFor(() => expect(timeline.find({ what: 'startedLeading' })).toHaveLength(1), { timeout: 10_000, interval: 20 });
  const leaderId = timeline.first({ what: 'startedLeading' }).who;
  const leader = replicas.find((r) => r.identity === leaderId) as RunningController;
  const follower = replicas.find((r) => r.identity !== leaderId) as RunningController;
  let takeoverGets: number | undefined;
  follower.controller.once('startedLeading', () => {
    takeoverGets = leaseGets();
  });

  // Phase 1: claims while the leader is alive.
  const first = Array.from({ length: 8 }, (_, i) => `first-${i}`);
  const firstUids = createClaims(k, 'first', first.length, CLASS);
  await vi.waitFor(() => expect(unbound(k, first)).toEqual([]), { timeout: 20_000, interval: 50 });
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
  const getsAtCrash = leaseGets();

  // Phase 2: claims created while nobody leads.
  const second = Array.from({ length: 8 }, (_, i) => `second-${i}`);
  const secondUids = createClaims(k, 'second', second.length, CLASS);
  await vi.waitFor(() => expect(timeline.find({ who: follower.identity, what: 'startedLeading' })).toHaveLength(1), {
    timeout: 20_000,
    interval: 20,
  });
  await vi.waitFor(() => expect(unbound(k, [...first, ...second])).toEqual([]), { timeout: 20_000, interval: 50 });
  unsubscribe();
  history.stop();

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
  // Phase 1 claims were the leader's, phase 2 claims the follower's.
  const byClaim = backend.provisionsByClaim();
  for (const uid of firstUids) expect(byClaim.get(uid)?.map((p) => p.who)).toEqual([leader.identity]);
  for (const uid of secondUids) expect(new Set(byClaim.get(uid)?.map((p) => p.who))).toEqual(new Set([follower.identity]));

  // Takeover within leaseDuration + retryPeriod, measured on the candidate's own retry loop instead of a clock: it
  // reads the Lease once per attempt, attempts at least retryPeriod apart, and may take the Lease once the record
  // has not changed for leaseDuration since it last saw a change (at most one jittered retry period before the
  // crash). A slow machine stretches the attempts apart, which only lowers the count.
  const maxAttempt = TIMINGS.retryPeriodMs * (1 + JITTER);
  const maxGets = Math.ceil((TIMINGS.leaseDurationMs + 2 * maxAttempt) / TIMINGS.retryPeriodMs) + 1;
  expect(takeoverGets).toBeDefined();
  const gets = (takeoverGets ?? 0) - getsAtCrash;
  expect(gets).toBeGreaterThan(0);
  expect(gets).toBeLessThanOrEqual(maxGets);
  // The Lease changed hands exactly once: the leader, then the follower, one transition more.
  const changes = holders.filter((h) => h.holder !== '');
  expect(changes.map((h) => h.holder)).toEqual([leader.identity, follower.identity]);
  expect((changes[1]?.transitions ?? 0) - (changes[0]?.transitions ?? 0)).toBe(1);
  expect(k.store.get('coordination.k8s.io/leases', 'default', LEASE)).toBeDefined();

  // What the user sees: every claim Bound to its own PV, and no claim ever got a second PV.
  expect(history.duplicates()).toEqual([]);
  const claims = claimsInStore(k);
  expect(claims).toHaveLength(first.length + second.length);
  for (const c of claims) {
    expect(c.status?.phase).toBe('Bound');
    expect(c.spec?.volumeName).toBe(`pvc-${c.metadata?.uid ?? ''}`);
    expect(history.createdByClaim.get(c.metadata?.uid ?? '')).toEqual([c.spec?.volumeName]);
  }
  expect(backend.backing).toEqual(new Set(claims.map((c) => c.spec?.volumeName)));
});
