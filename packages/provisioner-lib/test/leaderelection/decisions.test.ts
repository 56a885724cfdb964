import type { Testkit } from '@kprov/testkit';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { LeaderElector, LeadershipLostError } from '../../src/leaderelection/elector.js';
import { LeaseLock } from '../../src/leaderelection/lease-lock.js';
import {
  CountingLock,
  makeCandidate,
  rawLease,
  startKit,
  uniqueName,
  writeForeignLease,
  type Candidate,
} from './helpers.js';
import { captureLogger, type LogLine } from '../events/capture-logger.js';

// The decision logic of tryAcquireOrRenew, driven attempt by attempt with a FakeClock: requests are real (testkit
// over HTTP) but every time decision reads the fake clock. Default timings: 15 s lease, 10 s renew deadline, 2 s retry.

let kit: Testkit;
const locks: LeaseLock[] = [];
const candidates: Candidate[] = [];

beforeAll(async () => {
  kit = await startKit();
});
afterEach(async () => {
  kit.faults.clear();
  await Promise.all(candidates.splice(0).map((c) => c.dispose()));
  await Promise.all(locks.splice(0).map((l) => l.close()));
});
afterAll(() => kit.stop());

function elector(identity: string, name: string, clock: FakeClock): { elector: LeaderElector; lock: CountingLock } {
  const inner = new LeaseLock({ kubeConfig: kit.kubeConfig, namespace: 'default', name, identity });
  locks.push(inner);
  const lock = new CountingLock(inner);
  const le = new LeaderElector({ lock, clock, onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
  return { elector: le, lock };
}

describe('tryAcquireOrRenew decisions', () => {
  it('displaces another holder only after the lease duration since it last saw the record change', async () => {
    const name = uniqueName('expiry');
    const clock = new FakeClock();
    await writeForeignLease(kit, 'default', name, {
      holderIdentity: 'x',
      renewTime: new Date(),
      leaseTransitions: 2,
      leaseDurationSeconds: 15,
    });
    const { elector: b } = elector('b', name, clock);

    expect(await b.tryAcquireOrRenew()).toBe(false); // first sight: observed at t=0
    expect(b.getLeader()).toBe('x');
    clock.advance(14_999);
    expect(await b.tryAcquireOrRenew()).toBe(false); // unchanged record, but 15 s have not passed
    clock.advance(1);
    expect(await b.tryAcquireOrRenew()).toBe(true);
    expect(b.getLeader()).toBe('b');
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({
      holderIdentity: 'b',
      leaseTransitions: 3,
      leaseDurationSeconds: 15,
    });
  });

  it("judges expiry by the holder's recorded leaseDurationSeconds, not its own lease duration", async () => {
    const clock = new FakeClock();
    // A holder that promised 60 s is not displaced after our 15 s.
    const long = uniqueName('recorded-long');
    await writeForeignLease(kit, 'default', long, {
      holderIdentity: 'x',
      renewTime: new Date(),
      leaseDurationSeconds: 60,
    });
    const { elector: b } = elector('b', long, clock);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(15_000);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(44_999);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(1);
    expect(await b.tryAcquireOrRenew()).toBe(true);
    // We write our own duration.
    expect((await rawLease(kit, 'default', long)).spec).toMatchObject({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
    });

    // A holder that promised 5 s is displaced after 5 s, not after our 15 s.
    const short = uniqueName('recorded-short');
    await writeForeignLease(kit, 'default', short, {
      holderIdentity: 'x',
      renewTime: new Date(),
      leaseDurationSeconds: 5,
    });
    const { elector: c } = elector('c', short, clock);
    expect(await c.tryAcquireOrRenew()).toBe(false);
    clock.advance(4_999);
    expect(await c.tryAcquireOrRenew()).toBe(false);
    clock.advance(1);
    expect(await c.tryAcquireOrRenew()).toBe(true);

    // A record without a duration is expired at once (client-go reads it as 0 s).
    const none = uniqueName('recorded-none');
    await kit.kubeConfig.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: none, namespace: 'default' },
        spec: { holderIdentity: 'x', renewTime: new V1MicroTime(Date.now()) },
      },
    });
    const { elector: d } = elector('d', none, clock);
    expect(await d.tryAcquireOrRenew()).toBe(true);
  });

  it('restarts the wait whenever the record changes, whatever its timestamps say (clock skew)', async () => {
    const name = uniqueName('skew');
    const clock = new FakeClock();
    const ancient = Date.parse('1999-01-01T00:00:00Z');
    await writeForeignLease(kit, 'default', name, {
      holderIdentity: 'x',
      renewTime: new Date(ancient),
      leaseDurationSeconds: 15,
    });
    const { elector: b } = elector('b', name, clock);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    for (let i = 1; i <= 5; i += 1) {
      clock.advance(14_000); // less than a lease duration between changes
      await writeForeignLease(kit, 'default', name, {
        holderIdentity: 'x',
        renewTime: new Date(ancient + i),
        leaseDurationSeconds: 15,
      });
      expect(await b.tryAcquireOrRenew()).toBe(false);
    }
    // A renewTime from the future does not protect a holder that stopped changing the record either.
    await writeForeignLease(kit, 'default', name, {
      holderIdentity: 'x',
      renewTime: new Date('2999-01-01T00:00:00Z'),
      leaseDurationSeconds: 15,
    });
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(15_000);
    expect(await b.tryAcquireOrRenew()).toBe(true);
  });

  it('treats a Conflict on update as not acquired', async () => {
    const name = uniqueName('conflict');
    const clock = new FakeClock();
    await writeForeignLease(kit, 'default', name, { holderIdentity: 'x', renewTime: new Date() });
    const { elector: b } = elector('b', name, clock);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(15_000);
    kit.faults.add({ resource: 'leases', verb: 'update', action: { type: 'error', code: 409 }, count: 1 });
    expect(await b.tryAcquireOrRenew()).toBe(false);
    expect(b.getLeader()).toBe('x');
    expect((await rawLease(kit, 'default', name)).spec.holderIdentity).toBe('x');
    expect(await b.tryAcquireOrRenew()).toBe(true);
  });

  it('loses to a candidate that wrote first (real optimistic concurrency)', async () => {
    const name = uniqueName('race');
    const clock = new FakeClock();
    await writeForeignLease(kit, 'default', name, { holderIdentity: 'x', renewTime: new Date() });
    const b = elector('b', name, clock);
    const c = elector('c', name, clock);
    expect(await b.elector.tryAcquireOrRenew()).toBe(false);
    expect(await c.elector.tryAcquireOrRenew()).toBe(false);
    clock.advance(15_000);
    // c reads the lease, then b takes it: c's write carries a stale resourceVersion.
    const read = c.lock.inner.get.bind(c.lock.inner);
    c.lock.inner.get = async (signal) => {
      const seen = await read(signal);
      expect(await b.elector.tryAcquireOrRenew()).toBe(true);
      return seen;
    };
    expect(await c.elector.tryAcquireOrRenew()).toBe(false);
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  // On a busy machine an attempt's create can outlast its deadline (the renew deadline) and still be made by the
  // server, after the next attempt found no Lease: that attempt's create is refused, and the one after renews the
  // Lease the abandoned create made, which names this candidate. Two creates, one Lease, no transition.
  it('takes the Lease an abandoned create of its own made, after its second create was refused', async () => {
    const name = uniqueName('abandoned-create');
    const clock = new FakeClock();
    const { elector: a, lock } = elector('a', name, clock);
    const create = lock.inner.create.bind(lock.inner);
    const get = lock.inner.get.bind(lock.inner);
    let abandoned: (() => Promise<void>) | undefined;
    lock.inner.create = async (record, signal) => {
      if (lock.creates > 1) return create(record, signal);
      abandoned = () => create(record);
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    };
    lock.inner.get = async (signal) => {
      const seen = await get(signal);
      // The server makes the abandoned create now: after this GET found nothing, before the next create.
      const late = abandoned;
      abandoned = undefined;
      await late?.();
      return seen;
    };

    expect(await a.tryAcquireOrRenew()).toBe(false); // no Lease; the create gives up
    expect(await a.tryAcquireOrRenew()).toBe(false); // no Lease yet; the create is refused (AlreadyExists)
    expect(await a.tryAcquireOrRenew()).toBe(true); // the Lease names a: renewed
    expect([lock.creates, lock.updates]).toEqual([2, 1]);
    expect(a.getLeader()).toBe('a');
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 0 });
  });

  it('renews on the fast path while holding: one update, acquireTime and transitions kept', async () => {
    const name = uniqueName('fast');
    const clock = new FakeClock();
    const { elector: a, lock } = elector('a', name, clock);
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(lock.creates).toBe(1);
    const created = await rawLease(kit, 'default', name);
    expect(created.spec.leaseTransitions).toBe(0);

    clock.advance(2_000);
    const gets = lock.gets;
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(lock.gets).toBe(gets); // no GET
    expect(lock.updates).toBe(1);
    const renewed = await rawLease(kit, 'default', name);
    expect(renewed.spec).toMatchObject({
      holderIdentity: 'a',
      acquireTime: created.spec.acquireTime,
      leaseTransitions: 0,
    });
    expect(renewed.spec.renewTime).not.toBe(created.spec.renewTime);

    // Past our own lease validity the slow path (GET, then update) is taken, still keeping acquireTime.
    clock.advance(15_000);
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(lock.gets).toBe(gets + 1);
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({
      acquireTime: created.spec.acquireTime,
      leaseTransitions: 0,
    });
  });

  it('falls back to the slow path when the optimistic update conflicts, and sees the new holder', async () => {
    const name = uniqueName('fast-conflict');
    const clock = new FakeClock();
    const { elector: a, lock } = elector('a', name, clock);
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(lock.gets).toBe(1); // 404, then create
    await writeForeignLease(kit, 'default', name, { holderIdentity: 'x', renewTime: new Date(), leaseTransitions: 1 });
    clock.advance(2_000);
    expect(await a.tryAcquireOrRenew()).toBe(false);
    expect(lock.updates).toBe(1); // the optimistic one, refused
    expect(lock.gets).toBe(2);
    expect(a.getLeader()).toBe('x');
  });

  it('health: unhealthy only when it holds the record and has not renewed for lease duration + tolerance', async () => {
    const name = uniqueName('health');
    const clock = new FakeClock();
    const { elector: a } = elector('a', name, clock);
    const { elector: b } = elector('b', name, clock);
    expect(a.check(1_000)).toBeUndefined();
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    clock.advance(16_000);
    expect(a.check(1_000)).toBeUndefined();
    clock.advance(1);
    expect(a.check(1_000)).toBeInstanceOf(Error);
    expect(b.check(0)).toBeUndefined(); // a standby is not concerned
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(a.check(1_000)).toBeUndefined();
  });
});

describe('renew loop on a fake clock', () => {
  it('ends leadership without another attempt when the event loop stalled past the renew deadline', async () => {
    const clock = new FakeClock();
    const a = makeCandidate(kit, {
      identity: 'a',
      name: uniqueName('stall'),
      clock,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    candidates.push(a);
    void a.start();
    await vi.waitFor(() => expect(a.leading).toHaveLength(1), WAIT);
    await vi.waitFor(() => expect(clock.pending()).toBe(1), WAIT); // the renew loop sleeps a retry period
    const requests = a.lock.gets + a.lock.updates + a.lock.creates;

    clock.advance(30_000); // the sleep's timer fires late, as after a blocked event loop
    await vi.waitFor(() => expect(a.stopped).toBe(1), WAIT);
    expect(a.lock.gets + a.lock.updates + a.lock.creates).toBe(requests);
    expect(a.leading[0]?.reason).toBeInstanceOf(LeadershipLostError);
    expect(a.elector.isLeader()).toBe(false);
  });

  it('renews every retry period and keeps leading while renewals succeed', async () => {
    const clock = new FakeClock();
    const a = makeCandidate(kit, {
      identity: 'a',
      name: uniqueName('steady'),
      clock,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    candidates.push(a);
    void a.start();
    await vi.waitFor(() => expect(a.elector.isLeader()).toBe(true), WAIT);
    // Renewals answered slowly, as by a loaded server: each one's renew-deadline timer is pending while it is in flight.
    kit.faults.add({ resource: 'leases', verb: 'update', action: { type: 'latency', ms: 300 } });
    for (let i = 1; i <= 3; i += 1) {
      // Wait for the retry timer, not the deadline timer of a renewal still in flight.
      await vi.waitFor(() => expect([a.lock.inFlight, clock.pending()]).toEqual([0, 1]), WAIT);
      clock.advance(2_000);
      await vi.waitFor(() => expect(a.lock.updates).toBe(i), WAIT);
    }
    expect(a.elector.isLeader()).toBe(true);
    expect(a.stopped).toBe(0);
  });
});

describe('release on a fake clock', () => {
  const timings = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

  async function leading(name: string, clock: FakeClock): Promise<Candidate> {
    const a = makeCandidate(kit, { identity: 'a', name, clock, releaseOnCancel: true, ...timings });
    candidates.push(a);
    void a.start();
    await vi.waitFor(() => expect(a.leading).toHaveLength(1), WAIT);
    await vi.waitFor(() => expect(clock.pending()).toBe(1), WAIT);
    return a;
  }

  it('writes an empty holder with leaseDurationSeconds 1 and fresh times, retrying after a Conflict', async () => {
    const name = uniqueName('release-retry');
    const clock = new FakeClock();
    const a = await leading(name, clock);
    const held = await rawLease(kit, 'default', name);
    kit.faults.add({ resource: 'leases', verb: 'update', action: { type: 'error', code: 409 }, count: 1 });
    await a.stop();
    expect(a.lock.updates).toBe(2); // refused, then re-read and written
    expect(a.lock.gets).toBe(2); // 404 before create, re-read after the conflict
    const released = await rawLease(kit, 'default', name);
    expect(released.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(released.spec.renewTime).not.toBe(held.spec.renewTime);
    expect(released.spec.acquireTime).not.toBe(held.spec.acquireTime);
    expect(a.elector.getLeader()).toBe('');
    expect(a.stopped).toBe(1);
  });

  it("releases only after onStartedLeading's promise settled: the guarded work stops first", async () => {
    const name = uniqueName('release-after-work');
    const clock = new FakeClock();
    let finish = (): void => undefined;
    const work = (signal: AbortSignal): Promise<void> =>
      new Promise((resolve) => {
        // Work that takes its time to stop after the signal aborts.
        signal.addEventListener('abort', () => (finish = resolve), { once: true });
      });
    const a = makeCandidate(kit, { identity: 'a', name, clock, releaseOnCancel: true, work, ...timings });
    candidates.push(a);
    void a.start();
    await vi.waitFor(() => expect(a.leading).toHaveLength(1), WAIT);
    await vi.waitFor(() => expect(clock.pending()).toBe(1), WAIT);
    const updates = a.lock.updates;

    const stopping = a.stop();
    await vi.waitFor(() => expect(a.leading[0]?.aborted).toBe(true), WAIT);
    // The run waits for the work: no write, still the holder, not stopped. What did not happen is looked for after
    // 50 ms of real time: a slow machine can make the check miss a wrong write, not fail a right run.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(a.lock.updates).toBe(updates);
    expect((await rawLease(kit, 'default', name)).spec.holderIdentity).toBe('a');
    expect(a.stopped).toBe(0);

    finish();
    await stopping;
    expect(a.lock.updates).toBe(updates + 1);
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(a.stopped).toBe(1);
  });

  it('leaves the lease alone when the conflict shows another holder took it', async () => {
    const name = uniqueName('release-lost');
    const clock = new FakeClock();
    const a = await leading(name, clock);
    await writeForeignLease(kit, 'default', name, { holderIdentity: 'x', renewTime: new Date(), leaseTransitions: 4 });
    await a.stop();
    expect((await rawLease(kit, 'default', name)).spec).toMatchObject({ holderIdentity: 'x', leaseTransitions: 4 });
    expect(a.elector.getLeader()).toBe('x');
    expect(a.stopped).toBe(1);
  });
});

describe('a Lease request under way when the elector stops', () => {
  // The testkit holds each Lease GET this long before answering: long enough to be under way when the test acts.
  const SLOW_GET = { verb: 'get', resource: 'leases', action: { type: 'latency', ms: 3_000 } } as const;

  function slowElector(clock: FakeClock): { le: LeaderElector; lines: LogLine[] } {
    const lines: LogLine[] = [];
    const lock = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      name: uniqueName('slow'),
      identity: 'a',
    });
    locks.push(lock);
    const le = new LeaderElector({
      lock,
      clock,
      logger: captureLogger(lines),
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    return { le, lines };
  }

  it('is not logged as an error when the stop cut it short', async () => {
    const clock = new FakeClock();
    kit.faults.add(SLOW_GET);
    const { le, lines } = slowElector(clock);
    const stop = new AbortController();
    const run = le.run(stop.signal);
    await vi.waitFor(() => expect(kit.faults.hits()).toEqual([1]), WAIT); // the GET is under way
    stop.abort();
    await run;
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(lines.map((l) => l.message)).toContain('Error retrieving lease: the elector is stopping');
  });

  it('is logged as an error when the renew deadline cut it short', async () => {
    const clock = new FakeClock();
    kit.faults.add(SLOW_GET);
    const { le, lines } = slowElector(clock);
    const stop = new AbortController();
    const run = le.run(stop.signal);
    await vi.waitFor(() => expect(kit.faults.hits()).toEqual([1]), WAIT);
    clock.advance(10_000); // the default renew deadline: the request's own deadline passes
    await vi.waitFor(
      () => expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['Error retrieving lease']),
      WAIT,
    );
    stop.abort();
    await run;
  });
});
