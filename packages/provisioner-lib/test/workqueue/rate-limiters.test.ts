import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
  backoffRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  provisionerRateLimiter,
} from '../../src/workqueue/rate-limiters.js';
import type { RateLimiter } from '../../src/workqueue/rate-limiters.js';

const S = 1000;

function delays<T>(limiter: RateLimiter<T>, item: T, n: number): number[] {
  return Array.from({ length: n }, () => limiter.when(item));
}

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles the delay per failure from 15 s and caps it at 1000 s', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(15 * S, 1000 * S);
    expect(delays(limiter, 'a', 10)).toEqual([15, 30, 60, 120, 240, 480, 960, 1000, 1000, 1000].map((s) => s * S));
    expect(limiter.numRequeues('a')).toBe(10);
  });

  it('counts failures per item', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    limiter.when('a');
    limiter.when('a');
    limiter.when('b');
    expect(limiter.numRequeues('a')).toBe(2);
    expect(limiter.numRequeues('b')).toBe(1);
    expect(limiter.numRequeues('c')).toBe(0);
    expect(limiter.when('b')).toBe(2);
  });

  it('starts over after forget', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    expect(delays(limiter, 'a', 3)).toEqual([1, 2, 4]);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(1);
  });

  it('stays at the cap instead of overflowing after thousands of failures', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000 * S);
    let last = 0;
    for (let i = 0; i < 5000; i++) last = limiter.when('a');
    expect(last).toBe(1000 * S);
    expect(limiter.numRequeues('a')).toBe(5000);
  });

  it('with the default 5 ms base first reaches the 1000 s cap on the 19th failure', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000 * S);
    const d = delays(limiter, 'a', 19);
    expect(d.slice(0, 3)).toEqual([5, 10, 20]);
    expect(d[17]).toBeLessThan(1000 * S);
    expect(d[18]).toBe(1000 * S);
  });
});

describe('BucketRateLimiter', () => {
  it('allows a burst of 100 and then spaces reservations 100 ms apart at 10 qps', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter<string>(10, 100, clock);
    expect(delays(bucket, 'x', 100).every((d) => d === 0)).toBe(true);
    expect(delays(bucket, 'x', 3)).toEqual([100, 200, 300]);
  });

  it('refills with time, never beyond the burst', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter<string>(10, 100, clock);
    delays(bucket, 'x', 100);
    clock.advance(500);
    expect(delays(bucket, 'x', 6)).toEqual([0, 0, 0, 0, 0, 100]);
    clock.advance(3_600_000);
    expect(delays(bucket, 'x', 101).filter((d) => d > 0)).toEqual([100]);
  });

  it('accounts for tokens reserved into the future', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter<string>(10, 1, clock);
    expect(bucket.when('x')).toBe(0);
    expect(bucket.when('x')).toBe(100);
    expect(bucket.when('x')).toBe(200);
    clock.advance(150);
    expect(bucket.when('x')).toBe(150);
  });

  it('shares one bucket across items and tracks no item', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter<string>(10, 2, clock);
    expect([bucket.when('a'), bucket.when('b'), bucket.when('c')]).toEqual([0, 0, 100]);
    expect(bucket.numRequeues('a')).toBe(0);
    bucket.forget('a');
    expect(bucket.when('a')).toBe(200);
  });

  it('never delays at an infinite rate', () => {
    const bucket = new BucketRateLimiter<string>(Infinity, 0, new FakeClock());
    expect(delays(bucket, 'x', 5)).toEqual([0, 0, 0, 0, 0]);
  });

  it('rejects a rate or burst that could never grant a token', () => {
    expect(() => new BucketRateLimiter<string>(0, 10)).toThrow(RangeError);
    expect(() => new BucketRateLimiter<string>(10, 0)).toThrow(RangeError);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the largest delay and the largest requeue count of its children', () => {
    const limiter = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(1, 1000),
      new ItemFastSlowRateLimiter<string>(5, 50, 2),
    );
    expect(delays(limiter, 'a', 8)).toEqual([5, 5, 50, 50, 50, 50, 64, 128]);
    expect(limiter.numRequeues('a')).toBe(8);
  });

  it('consumes bucket tokens even when the exponential delay dominates', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter<string>(10, 100, clock);
    const limiter = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(15 * S, 1000 * S),
      bucket,
    );
    for (let i = 0; i < 100; i++) expect(limiter.when(`item-${i}`)).toBe(15 * S);
    // The bucket is now empty although every delay came from the exponential limiter.
    expect(bucket.when('other')).toBe(100);
  });

  it('forwards forget to every child', () => {
    const exp = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    const fastSlow = new ItemFastSlowRateLimiter<string>(1, 10, 1);
    const limiter = new MaxOfRateLimiter<string>(exp, fastSlow);
    delays(limiter, 'a', 3);
    limiter.forget('a');
    expect(exp.numRequeues('a')).toBe(0);
    expect(fastSlow.numRequeues('a')).toBe(0);
    expect(limiter.numRequeues('a')).toBe(0);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('uses the fast delay for the first attempts and the slow one after', () => {
    const limiter = new ItemFastSlowRateLimiter<string>(5, 10_000, 3);
    expect(delays(limiter, 'a', 5)).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(limiter.numRequeues('a')).toBe(5);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });
});

describe('WithMaxWaitRateLimiter', () => {
  it('caps the wrapped delays and forwards the rest', () => {
    const inner = new ItemExponentialFailureRateLimiter<string>(100, 1_000_000);
    const limiter = new WithMaxWaitRateLimiter<string>(inner, 250);
    expect(delays(limiter, 'a', 4)).toEqual([100, 200, 250, 250]);
    expect(limiter.numRequeues('a')).toBe(4);
    limiter.forget('a');
    expect(inner.numRequeues('a')).toBe(0);
  });
});

describe('factories', () => {
  it('defaultControllerRateLimiter backs off from 5 ms per item and shares a 10 qps / 100 bucket', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>(clock);
    expect(delays(limiter, 'a', 3)).toEqual([5, 10, 20]);
    for (let i = 0; i < 97; i++) limiter.when(`k${i}`);
    // 100 tokens spent: the next fresh item waits for the bucket, not its 5 ms.
    expect(limiter.when('fresh')).toBe(100);
  });

  it('defaultItemBasedRateLimiter backs off from 1 ms', () => {
    expect(delays(defaultItemBasedRateLimiter<string>(), 'a', 4)).toEqual([1, 2, 4, 8]);
  });

  it('provisionerRateLimiter backs off 15 s, 30 s, … up to 1000 s and counts requeues', () => {
    const limiter = provisionerRateLimiter<string>(true, new FakeClock());
    expect(delays(limiter, 'claim', 9)).toEqual([15, 30, 60, 120, 240, 480, 960, 1000, 1000].map((s) => s * S));
    expect(limiter.numRequeues('claim')).toBe(9);
    limiter.forget('claim');
    expect(limiter.numRequeues('claim')).toBe(0);
    expect(limiter.when('claim')).toBe(15 * S);
  });

  it('provisionerRateLimiter without exponential backoff retries every 15 s and still counts', () => {
    const limiter = provisionerRateLimiter<string>(false, new FakeClock());
    expect(delays(limiter, 'claim', 4)).toEqual([15 * S, 15 * S, 15 * S, 15 * S]);
    expect(limiter.numRequeues('claim')).toBe(4);
  });
});

describe('backoffRateLimiter', () => {
  it('backs off each item from baseMs, doubling up to maxMs, and starts over after forget', () => {
    const limiter = backoffRateLimiter({ baseMs: 1 * S, maxMs: 300 * S, clock: new FakeClock() });
    expect(delays(limiter, 'claim', 11)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * S));
    expect(limiter.numRequeues('claim')).toBe(11);
    expect(limiter.when('other')).toBe(1 * S);
    limiter.forget('claim');
    expect(limiter.numRequeues('claim')).toBe(0);
    expect(limiter.when('claim')).toBe(1 * S);
  });

  it('shares a token bucket between items: qps retries per second after a burst', () => {
    const limiter = backoffRateLimiter({ baseMs: 0, maxMs: 0, qps: 2, burst: 3, clock: new FakeClock() });
    expect(['a', 'b', 'c', 'd', 'e'].map((item) => limiter.when(item))).toEqual([0, 0, 0, 500, 1000]);
  });

  it('without a bucket (qps 0) delays only per item', () => {
    const limiter = backoffRateLimiter({ baseMs: 10, maxMs: 40, qps: 0 });
    expect(Array.from({ length: 500 }, (_, i) => limiter.when(`item-${i}`)).every((d) => d === 10)).toBe(true);
    expect(delays(limiter, 'x', 4)).toEqual([10, 20, 40, 40]);
  });

  it('is the controller default without options', () => {
    const clock = new FakeClock();
    const ours = backoffRateLimiter({ clock });
    const go = provisionerRateLimiter<string>(true, clock);
    const items = [...Array.from({ length: 120 }, (_, i) => `k${i}`), 'k1', 'k1', 'k1'];
    expect(items.map((i) => ours.when(i))).toEqual(items.map((i) => go.when(i)));
  });

  it('refuses settings that cannot work', () => {
    expect(() => backoffRateLimiter({ baseMs: -1 })).toThrow(RangeError);
    expect(() => backoffRateLimiter({ baseMs: 1000, maxMs: 10 })).toThrow(/maxMs/);
    expect(() => backoffRateLimiter({ qps: -1 })).toThrow(RangeError);
    expect(() => backoffRateLimiter({ qps: 5, burst: 0 })).toThrow(/burst/);
  });
});
