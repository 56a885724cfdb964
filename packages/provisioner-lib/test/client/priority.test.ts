import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { TokenBucketRateLimiter, type RequestPriority } from '../../src/client/rate-limit/token-bucket.js';

describe('TokenBucketRateLimiter priorities', () => {
  it('serves every normal waiter before any low one, each kind first come, first served', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 10, burst: 1, clock });
    expect(limiter.tryAccept()).toBe(true);
    const served: string[] = [];
    const wait = (name: string, priority: RequestPriority): void => {
      void limiter.accept(undefined, priority).then(() => served.push(name));
    };
    wait('event-1', 'low');
    wait('pv-1', 'normal');
    wait('event-2', 'low');
    wait('pv-2', 'normal');
    expect(limiter.waiting).toBe(4);
    for (let i = 0; i < 4; i++) await clock.advanceAsync(100);
    expect(served).toEqual(['pv-1', 'pv-2', 'event-1', 'event-2']);
  });

  it('gives a free token to a low request only when nobody waits', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 2, clock });
    await expect(limiter.accept(undefined, 'low')).resolves.toBe(0);
    await expect(limiter.accept(undefined, 'normal')).resolves.toBe(0);
    const served: string[] = [];
    void limiter.accept(undefined, 'low').then(() => served.push('low'));
    expect(limiter.tryAccept()).toBe(false);
    await clock.advanceAsync(1000);
    expect(served).toEqual(['low']);
  });

  it('re-arms its timer for the next waiter when the head low waiter aborts', async () => {
    const clock = new FakeClock();
    const limiter = new TokenBucketRateLimiter({ qps: 1, burst: 1, clock });
    expect(limiter.tryAccept()).toBe(true);
    const stop = new AbortController();
    const low = limiter.accept(stop.signal, 'low');
    const other = limiter.accept(undefined, 'low');
    stop.abort(new Error('gone'));
    await expect(low).rejects.toThrow('gone');
    await clock.advanceAsync(1000);
    await expect(other).resolves.toBe(1000);
    expect(limiter.waiting).toBe(0);
  });
});
