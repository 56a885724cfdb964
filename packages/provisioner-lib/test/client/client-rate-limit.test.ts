/**
 * The client-side rate limit over real HTTP: clients made by makeApiClient and watchWithAgent from a KubeConfig
 * with setClientRateLimit against the testkit, driven by a fake clock. Requests are counted where the server
 * received them.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { makeApiClient, watchWithAgent, withSignal } from '../../src/client/agent.js';
import { clientRateLimiter, setClientRateLimit } from '../../src/client/rate-limit/client-rate-limit.js';
import type { ThrottledRequest } from '../../src/client/rate-limit/throttle-message.js';
import type { TokenBucketRateLimiter } from '../../src/client/rate-limit/token-bucket.js';
import { EventRecorder } from '../../src/events/recorder.js';
import { makeLeaseClient } from '../../src/leaderelection/lease-client.js';

let kit: Testkit;
let kc: KubeConfig;
let clock: FakeClock;
const cleanups: (() => unknown)[] = [];

beforeEach(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  kc = kubeConfigFor(kit.url);
  clock = new FakeClock();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await kit.stop();
});

/** The limiter registered for `kc` (a token bucket), to see how many callers wait in it. */
function bucket(): TokenBucketRateLimiter {
  return clientRateLimiter(kc) as TokenBucketRateLimiter;
}

function served(key: string): number {
  return kit.server.requestCounts()[key] ?? 0;
}

/** Waits until the server has received `count` requests `key` and `waiting` callers wait for a token. */
async function settled(key: string, count: number, waiting: number): Promise<void> {
  await vi.waitFor(() => {
    expect(served(key)).toBe(count);
    expect(bucket().waiting).toBe(waiting);
  }, WAIT);
}

describe('setClientRateLimit over HTTP', () => {
  it('sends burst requests at once and holds the rest until the clock has refilled the bucket', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 2, clock });
    const core = makeApiClient(kc, CoreV1Api);
    const created = Array.from({ length: 5 }, (_, i) =>
      core.createNamespace({ body: { metadata: { name: `ns-${i}` } } }),
    );

    await settled('create namespaces', 2, 3);
    expect(kit.store.list('namespaces').map((n) => n.metadata.name)).toEqual(expect.arrayContaining(['ns-0', 'ns-1']));
    expect(kit.store.list('namespaces').map((n) => n.metadata.name)).not.toContain('ns-2');

    await clock.advanceAsync(1000);
    await settled('create namespaces', 3, 2);
    await clock.advanceAsync(2000);
    await settled('create namespaces', 5, 0);
    // First come, first served.
    expect((await Promise.all(created)).map((n) => n.metadata?.name)).toEqual(['ns-0', 'ns-1', 'ns-2', 'ns-3', 'ns-4']);
  });

  it('limits clients made before the limit was set, and stops limiting when it is removed', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    const first = core.listNamespace();
    const second = core.listNamespace();
    await settled('list namespaces', 1, 1);
    await first;

    setClientRateLimit(kc, null);
    expect(clientRateLimiter(kc)).toBeUndefined();
    await core.listNamespace();
    expect(served('list namespaces')).toBe(2);
    // The request already waiting in the old bucket still gets its token from it.
    await clock.advanceAsync(1000);
    await second;
    expect(served('list namespaces')).toBe(3);
  });

  it('takes one token per watch connection, none per event', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    const events: string[] = [];
    const watch = watchWithAgent(kc);
    const controller = await watch.watch(
      '/api/v1/namespaces',
      {},
      (type, obj: { metadata: { name: string } }) => events.push(`${type} ${obj.metadata.name}`),
      () => undefined,
    );
    cleanups.push(() => controller.abort());
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);

    // Events arrive without tokens: made through another client, they keep flowing while the bucket is empty.
    const other = kit.kubeConfig.makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await other.createNamespace({ body: { metadata: { name: `watched-${i}` } } });
    await vi.waitFor(() => expect(events.filter((e) => e.startsWith('ADDED watched-'))).toHaveLength(3), WAIT);
    expect(bucket().tryAccept()).toBe(false);

    // A second watch connection waits for the next token.
    let opened = false;
    const second = watch
      .watch(
        '/api/v1/namespaces',
        {},
        () => undefined,
        () => undefined,
      )
      .then((c) => {
        opened = true;
        cleanups.push(() => c.abort());
      });
    await vi.waitFor(() => expect(bucket().waiting).toBe(1), WAIT);
    expect(opened).toBe(false);
    expect(kit.server.openWatches).toBe(1);
    await clock.advanceAsync(1000);
    await second;
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(2), WAIT);
  });

  it('does not limit a client made with rateLimiter: null', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    expect(bucket().tryAccept()).toBe(true);
    const limited = makeApiClient(kc, CoreV1Api).listNamespace();
    const free = makeApiClient(kc, CoreV1Api, { rateLimiter: null });
    for (let i = 0; i < 5; i++) await free.listNamespace();
    expect(served('list namespaces')).toBe(5);
    expect(bucket().waiting).toBe(1);
    await clock.advanceAsync(1000);
    await limited;
    expect(served('list namespaces')).toBe(6);
  });

  it('gives the lease client a budget of its own, of the same size', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    expect(bucket().tryAccept()).toBe(true); // the main budget is spent
    const lease = makeLeaseClient(kc);
    cleanups.push(() => lease.close());
    await lease.api.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'leader' } } });
    expect(served('create leases')).toBe(1);

    // Its own bucket has burst 1 too: the next lease request waits for its refill, the main bucket is untouched.
    const read = lease.api.readNamespacedLease({ name: 'leader', namespace: 'default' });
    // The only bucket timer is the lease bucket's: the main bucket has nobody waiting.
    await vi.waitFor(() => expect(clock.pending()).toBe(1), WAIT);
    expect(bucket().waiting).toBe(0);
    expect(served('get leases')).toBe(0);
    await clock.advanceAsync(1000);
    await read;
    expect(served('get leases')).toBe(1);
    expect(bucket().tryAccept()).toBe(true); // refilled by the same second, not spent by the lease client
  });

  it('stops waiting when the request is aborted, without sending it or spending a token', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    expect(bucket().tryAccept()).toBe(true);
    const abort = new AbortController();
    const core = makeApiClient(kc, CoreV1Api);
    const aborted = core.listNamespace({}, withSignal(abort.signal));
    const next = core.listNamespace();
    await vi.waitFor(() => expect(bucket().waiting).toBe(2), WAIT);
    abort.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    await clock.advanceAsync(1000);
    await next;
    expect(served('list namespaces')).toBe(1);
  });

  it("reports waits with client-go's message", async () => {
    const waits: ThrottledRequest[] = [];
    setClientRateLimit(kc, { qps: 0.5, burst: 1, clock, onThrottled: (w) => waits.push(w) });
    const core = makeApiClient(kc, CoreV1Api);
    await core.listNamespace();
    const second = core.readNamespace({ name: 'default' });
    await vi.waitFor(() => expect(bucket().waiting).toBe(1), WAIT);
    await clock.advanceAsync(2000);
    await second;
    expect(waits).toEqual([
      {
        waitedMs: 2000,
        verb: 'GET',
        url: `${kit.url}/api/v1/namespaces/default`,
        message: `Waited for 2s due to client-side throttling, not priority and fairness, request: GET:${kit.url}/api/v1/namespaces/default`,
      },
    ]);
  });

  it('writes events of a recorder made from the KubeConfig through the limit', async () => {
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    expect(bucket().tryAccept()).toBe(true);
    const recorder = new EventRecorder({ kubeConfig: kc, source: { component: 'test' } });
    cleanups.push(() => recorder.shutDown());
    recorder.event(
      { kind: 'Namespace', apiVersion: 'v1', name: 'default' },
      'Normal',
      'Throttled',
      'waits for a token',
    );
    await vi.waitFor(() => expect(bucket().waiting).toBe(1), WAIT);
    expect(kit.store.list('events', 'default')).toHaveLength(0);
    await clock.advanceAsync(1000);
    await recorder.flush();
    expect(kit.store.list('events', 'default').map((e) => (e as { reason?: string }).reason)).toEqual(['Throttled']);
  });

  it('reads qps and burst as client-go reads rest.Config', () => {
    expect(setClientRateLimit(kc, {})).toMatchObject({ qps: 5, burst: 10 });
    expect(setClientRateLimit(kc, { qps: 0, burst: 0 })).toMatchObject({ qps: 5, burst: 10 });
    expect(setClientRateLimit(kc, { qps: 2.5, burst: 3 })).toMatchObject({ qps: 2.5, burst: 3 });
    expect(setClientRateLimit(kc, { qps: -1 })).toBeUndefined();
    expect(clientRateLimiter(kc)).toBeUndefined();
    expect(() => setClientRateLimit(kc, { qps: 1, burst: 1.5 })).toThrow(
      'setClientRateLimit burst must be a positive integer (or 0 for the default 10), got 1.5',
    );
    expect(() => setClientRateLimit(kc, { qps: 1, burst: -2 })).toThrow('burst must be a positive integer');
    expect(() => setClientRateLimit(kc, { qps: Number.NaN })).toThrow(
      'setClientRateLimit qps must be a number, got NaN',
    );
    expect(() => setClientRateLimit(kc, { qps: Infinity })).toThrow(
      'setClientRateLimit qps must be finite, got Infinity; use a negative qps for no limit',
    );
  });

  it('applies no limit unless one is set', async () => {
    expect(clientRateLimiter(kc)).toBeUndefined();
    const core = makeApiClient(kc, CoreV1Api);
    await Promise.all(Array.from({ length: 30 }, () => core.listNamespace()));
    expect(served('list namespaces')).toBe(30);
  });
});
