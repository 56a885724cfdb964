import type { Testkit } from '@kprov/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LeadershipLostError } from '../../src/leaderelection/elector.js';
import { LEADER_ELECTION_MASTER_STATUS } from '../../src/metrics/leader-metrics.js';
import {
  IdleClock,
  MICRO_TIME,
  makeCandidate,
  rawLease,
  recordingMetrics,
  startKit,
  uniqueName,
  writeForeignLease,
  type Candidate,
  type CandidateOptions,
} from './helpers.js';

// The elector's run loop against the testkit over HTTP, with short timings (300 ms lease, 200 ms renew deadline,
// 50 ms retry period; the record says 1 s, the shortest it can, and that is what the other candidates wait) on a fake
// clock that moves only between requests (IdleClock): on a slow machine no request outlasts a deadline, so the
// attempts counted and the moments of takeover are those the timings give. They never assert on wall-clock time.

let kit: Testkit;
const candidates: Candidate[] = [];
let time: IdleClock;

beforeAll(async () => {
  kit = await startKit();
});
beforeEach(() => {
  time = new IdleClock(candidates);
});
afterEach(async () => {
  kit.faults.clear();
  await Promise.all(candidates.splice(0).map((c) => c.dispose()));
});
afterAll(() => kit.stop());

function candidate(options: Omit<CandidateOptions, 'clock'>): Candidate {
  const c = makeCandidate(kit, { ...options, clock: time.clock });
  candidates.push(c);
  return c;
}

describe('LeaderElector over HTTP', () => {
  it('first candidate acquires: creates the Lease with six-digit MicroTimes and transitions 0, then renews it', async () => {
    const name = uniqueName('first');
    const metrics = recordingMetrics();
    const a = candidate({ identity: 'a', name, metrics: metrics.sink });
    expect(metrics.gauge(LEADER_ELECTION_MASTER_STATUS, { name: `default/${name}` })).toBe(0);
    void a.start();
    await time.until(() => a.elector.isLeader(), 'a leads');

    const created = await rawLease(kit, 'default', name);
    expect(created.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(created.spec.acquireTime).toMatch(MICRO_TIME);
    expect(created.spec.renewTime).toMatch(MICRO_TIME);
    expect(a.lock.creates).toBe(1);
    expect(a.elector.getLeader()).toBe('a');
    expect(metrics.gauge(LEADER_ELECTION_MASTER_STATUS, { name: `default/${name}` })).toBe(1);
    await time.until(() => a.leading.length === 1, 'onStartedLeading runs');
    expect(a.newLeaders).toEqual(['a']);
    expect(a.events).toEqual(['LeaderElection: a became leader']);

    // Renewals move renewTime and resourceVersion but keep acquireTime and transitions.
    await time.until(() => a.lock.updates >= 1, 'a renews');
    const renewed = await rawLease(kit, 'default', name);
    expect(renewed.spec.renewTime).not.toBe(created.spec.renewTime);
    expect(renewed.spec.renewTime).toMatch(MICRO_TIME);
    expect(renewed.spec).toMatchObject({
      holderIdentity: 'a',
      acquireTime: created.spec.acquireTime,
      leaseTransitions: 0,
    });
    expect(a.elector.check(0)).toBeUndefined();

    await a.stop();
    expect(a.stopped).toBe(1);
    expect(a.leading[0]?.aborted).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(['LeaderElection: a became leader', 'LeaderElection: a stopped leading']);
    expect(metrics.gauge(LEADER_ELECTION_MASTER_STATUS, { name: `default/${name}` })).toBe(0);
  });

  it('second candidate waits while the first renews, and takes over after the first stops without releasing', async () => {
    const name = uniqueName('takeover');
    const a = candidate({ identity: 'a', name });
    const b = candidate({ identity: 'b', name });
    void a.start();
    await time.until(() => a.elector.isLeader(), 'a leads');
    const acquired = await rawLease(kit, 'default', name);
    void b.start();

    // 25 attempts are at least 24 retry periods (1.2 s): past the 1 s a's record promises (its 300 ms, rounded up).
    await time.until(() => b.lock.gets >= 25, 'b made 25 attempts');
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.getLeader()).toBe('a');
    expect(b.leading).toHaveLength(0);
    expect(b.newLeaders).toEqual(['a']);
    expect(a.elector.isLeader()).toBe(true);
    expect((await rawLease(kit, 'default', name)).spec.holderIdentity).toBe('a');

    await a.stop();
    expect(a.stopped).toBe(1);
    expect((await rawLease(kit, 'default', name)).spec.holderIdentity).toBe('a'); // not released
    const stoppedAt = time.clock.now();
    await time.until(() => b.elector.isLeader(), 'b takes over');
    // Once the record a wrote last is 1 s old by b's clock, and not before.
    expect(time.clock.now() - stoppedAt).toBeGreaterThan(900);
    const taken = await rawLease(kit, 'default', name);
    expect(taken.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(taken.spec.acquireTime).not.toBe(acquired.spec.acquireTime);
    await time.until(() => b.newLeaders.length === 2, 'b hears of the new leader');
    expect(b.newLeaders).toEqual(['a', 'b']);
    expect(b.events).toEqual(['LeaderElection: b became leader']);
  });

  it('with releaseOnCancel the lease is released on stop and the second candidate takes over at once', async () => {
    const name = uniqueName('release');
    // A 10 s lease: without the release, b could not take over within the 2 s below.
    const timings = { leaseDurationMs: 10_000, renewDeadlineMs: 200, retryPeriodMs: 50 };
    const a = candidate({ identity: 'a', name, releaseOnCancel: true, ...timings });
    const b = candidate({ identity: 'b', name, ...timings });
    void a.start();
    await time.until(() => a.elector.isLeader(), 'a leads');
    void b.start();
    await time.until(() => b.lock.gets >= 3, 'b made 3 attempts');
    expect(b.elector.isLeader()).toBe(false);

    await a.stop();
    expect(a.stopped).toBe(1);
    expect(a.elector.check(0)).toBeUndefined(); // the released record no longer names a
    await time.until(() => b.elector.isLeader(), 'b takes over', 2_000);
    const taken = await rawLease(kit, 'default', name);
    expect(taken.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, leaseDurationSeconds: 10 });
    await time.until(() => b.newLeaders.at(-1) === 'b', 'b hears of the new leader');
  });

  it('a renew failure streak ends leadership: leading signal aborted, onStoppedLeading called, then unhealthy', async () => {
    const name = uniqueName('renew-fail');
    const metrics = recordingMetrics();
    const a = candidate({ identity: 'a', name, metrics: metrics.sink });
    void a.start();
    await time.until(() => a.leading.length === 1, 'onStartedLeading runs');
    const signal = a.leading[0]!;

    kit.faults.add({ resource: 'leases', verb: 'update', action: { type: 'error', code: 500 } });
    const failingFrom = time.clock.now();
    await time.until(() => a.stopped === 1, 'a stops leading');
    // Within a retry period and the renew deadline (250 ms) of the last renewal, which came before the failures.
    expect(time.clock.now() - failingFrom).toBeLessThanOrEqual(300);
    await a.done;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeadershipLostError);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(['LeaderElection: a became leader', 'LeaderElection: a stopped leading']);
    expect(metrics.gauge(LEADER_ELECTION_MASTER_STATUS, { name: `default/${name}` })).toBe(0);

    // The last observed record still names a, unrenewed: the health check fails once the lease plus tolerance ran out.
    expect(a.elector.check(60_000)).toBeUndefined();
    await time.advance(300);
    expect(a.elector.check(0)?.message).toBe(`failed election to renew leadership on lease default/${name}`);
    expect(a.elector.check(60_000)).toBeUndefined();
  });

  it('never displaces a holder whose record keeps changing, however old its renewTime (clock skew)', async () => {
    const name = uniqueName('skew');
    let renewTime = Date.parse('2000-01-01T00:00:00Z');
    const renew = async (): Promise<void> => {
      renewTime += 1;
      await writeForeignLease(kit, 'default', name, {
        holderIdentity: 'x',
        renewTime: new Date(renewTime),
        leaseTransitions: 5,
      });
    };
    await renew();

    const b = candidate({ identity: 'b', name });
    void b.start();
    // The holder changes its record every 40 ms. 45 attempts are at least 44 retry periods (2.2 s), more than twice
    // the 1 s lease the record promises.
    while (b.lock.gets < 45) {
      await renew();
      await time.advance(40);
    }
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.getLeader()).toBe('x');

    // The holder stops: b takes over once the record is unchanged for a second.
    await time.until(() => b.elector.isLeader(), 'b takes over');
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 6 });
  });

  it('calls onStoppedLeading when run returns even if the candidate never led', async () => {
    const name = uniqueName('never');
    const a = candidate({ identity: 'a', name });
    const b = candidate({ identity: 'b', name });
    void a.start();
    await time.until(() => a.elector.isLeader(), 'a leads');
    void b.start();
    await time.until(() => b.lock.gets >= 2, 'b made 2 attempts');
    await b.stop();
    expect(b.stopped).toBe(1);
    expect(b.leading).toHaveLength(0);
    expect(b.events).toEqual([]);
    expect(b.elector.check(0)).toBeUndefined();
    expect(a.elector.isLeader()).toBe(true);
  });

  it('refuses a second concurrent run', async () => {
    const a = candidate({ identity: 'a', name: uniqueName('twice') });
    void a.start();
    await expect(a.elector.run(new AbortController().signal)).rejects.toThrow('run is already running');
  });
});
