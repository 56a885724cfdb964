import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { TokenBucketRateLimiter } from '../../src/client/rate-limit/token-bucket.js';

/** Starts `n` waiters and records, in order, which of them got a token (and after how long). */
function waiters(limiter: TokenBucketRateLimiter, n: number, signals: (AbortSignal | undefined)[] = []) {
  const served: { id: number; waitedMs: number }[] = [];
  const rejected: { id: number; reason: unknown }[] = [];
  for (let id = 0; id < n; id++) {
    limiter.accept(signals[id]).then(
      (waitedMs) => served.push({ id, waitedMs }),
      (reason: unknown) => rejected.push({ id, reason }),
    );
  }
  return { served, rejected };
}

describe('TokenBucketRateLimiter', () => {
  it('starts full: burst requests go at once, the next one does not', () => {
    const limiter = new TokenBucketRateLimiter({ qps: 5, burst: 3, clock: new FakeClock() });
    expect([limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept()]).toEqual([true, true, true]);
    expect(limiter.tryAccept()).toBe(false);
  });

  it('refills at qps tokens per second, never above burst', () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 2, burst: 2, clock });
    limiter.tryAccept();
    limiter.tryAccept();
    clock.advance(499);
    expect(limiter.tryAccept()).toBe(false);
    clock.advance(1);
    expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
    clock.advance(60_000);
    expect([limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept()]).toEqual([true, true, false]);
  });

  it('serves waiters first come, first served, one token at a time, and reports how long each waited', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    const { served } = waiters(limiter, 4);
    await clock.advanceAsync(0);
    expect(served).toEqual([{ id: 0, waitedMs: 0 }]);
    expect(limiter.waiting).toBe(3);
    await clock.advanceAsync(999);
    expect(served).toHaveLength(1);
    await clock.advanceAsync(1);
    expect(served).toEqual([
      { id: 0, waitedMs: 0 },
      { id: 1, waitedMs: 1000 },
    ]);
    await clock.advanceAsync(2000);
    expect(served).toEqual([
      { id: 0, waitedMs: 0 },
      { id: 1, waitedMs: 1000 },
      { id: 2, waitedMs: 2000 },
      { id: 3, waitedMs: 3000 },
    ]);
  });

  it('does not let tryAccept jump the queue of waiters', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 2, clock });
    limiter.tryAccept();
    limiter.tryAccept();
    const { served } = waiters(limiter, 1);
    await clock.advanceAsync(500);
    expect(limiter.tryAccept()).toBe(false);
    await clock.advanceAsync(500);
    expect(served).toEqual([{ id: 0, waitedMs: 1000 }]);
  });

  it('takes fractional qps: 0.5 is one token every 2 s', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 0.5, burst: 1, clock });
    const { served } = waiters(limiter, 3);
    await clock.advanceAsync(1999);
    expect(served.map((s) => s.id)).toEqual([0]);
    await clock.advanceAsync(1);
    expect(served.map((s) => s.id)).toEqual([0, 1]);
    await clock.advanceAsync(2000);
    expect(served).toEqual([
      { id: 0, waitedMs: 0 },
      { id: 1, waitedMs: 2000 },
      { id: 2, waitedMs: 4000 },
    ]);
  });

  it('serves on time when qps does not divide a second evenly', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 3, burst: 1, clock });
    const { served } = waiters(limiter, 4);
    await clock.advanceAsync(1000);
    expect(served.map((s) => s.id)).toEqual([0, 1, 2, 3]);
  });

  it('drops an aborted waiter without spending a token on it; the one behind it gets the token', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    const abort = new AbortController();
    const { served, rejected } = waiters(limiter, 3, [undefined, abort.signal, undefined]);
    await clock.advanceAsync(500);
    abort.abort(new Error('caller gave up'));
    await clock.advanceAsync(500);
    expect(served).toEqual([
      { id: 0, waitedMs: 0 },
      { id: 2, waitedMs: 1000 },
    ]);
    expect(rejected).toEqual([{ id: 1, reason: new Error('caller gave up') }]);
    // The aborted waiter took nothing: after one more second exactly one token is there again.
    await clock.advanceAsync(1000);
    expect(limiter.tryAccept()).toBe(true);
    expect(limiter.tryAccept()).toBe(false);
  });

  it('rejects at once with the reason of an already aborted signal, taking no token', async () => {
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock: new FakeClock() });
    await expect(limiter.accept(AbortSignal.abort(new Error('stopped')))).rejects.toThrow('stopped');
    expect(limiter.tryAccept()).toBe(true);
  });

  it('leaves no timer behind once every waiter is served or gone', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    const abort = new AbortController();
    waiters(limiter, 2, [undefined, abort.signal]);
    await clock.advanceAsync(0);
    expect(clock.pending()).toBe(1);
    abort.abort();
    await clock.advanceAsync(0);
    expect(clock.pending()).toBe(0);
  });

  it.each([
    [
      { qps: 0, burst: 1 },
      'TokenBucketRateLimiter qps must be a finite number > 0, got 0; for no limit, use no limiter',
    ],
    [{ qps: -1, burst: 1 }, 'qps must be a finite number > 0, got -1'],
    [{ qps: Infinity, burst: 1 }, 'qps must be a finite number > 0, got Infinity'],
    [{ qps: Number.NaN, burst: 1 }, 'qps must be a finite number > 0, got NaN'],
    [{ qps: 1, burst: 0 }, 'TokenBucketRateLimiter burst must be an integer >= 1, got 0'],
    [{ qps: 1, burst: 1.5 }, 'burst must be an integer >= 1, got 1.5'],
  ])('refuses %o, naming the option', (options, message) => {
    expect(() => new TokenBucketRateLimiter(options)).toThrow(RangeError);
    expect(() => new TokenBucketRateLimiter(options)).toThrow(message);
  });
});
