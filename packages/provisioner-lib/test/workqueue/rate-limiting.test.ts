import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { ItemExponentialFailureRateLimiter, provisionerRateLimiter } from '../../src/workqueue/rate-limiters.js';
import { RateLimitingQueue, newRateLimitingQueue } from '../../src/workqueue/rate-limiting.js';

describe('RateLimitingQueue', () => {
  it('re-adds a failing item after 15 s, then 30 s, with the provisioner limiter', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock, rateLimiter: provisionerRateLimiter(true, clock) });
    expect(q).toBeInstanceOf(RateLimitingQueue);

    q.add('claim');
    expect(await q.get()).toEqual({ item: 'claim', shutdown: false });
    q.addRateLimited('claim');
    q.done('claim');
    expect(q.numRequeues('claim')).toBe(1);
    clock.advance(14_999);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);

    expect(await q.get()).toEqual({ item: 'claim', shutdown: false });
    q.addRateLimited('claim');
    q.done('claim');
    expect(q.numRequeues('claim')).toBe(2);
    clock.advance(29_999);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('forget resets the backoff so the next failure waits the base delay again', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(1, 1000) });
    q.addRateLimited('one'); // 1 ms
    q.addRateLimited('one'); // asks for 2 ms, keeps the earlier 1 ms
    expect(q.numRequeues('one')).toBe(2);
    clock.advance(1);
    expect(q.len()).toBe(1);
    await q.get();
    q.done('one');

    q.addRateLimited('one'); // 4 ms
    clock.advance(3);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    await q.get();
    q.done('one');

    q.forget('one');
    expect(q.numRequeues('one')).toBe(0);
    q.addRateLimited('one'); // back to 1 ms
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('counts numRequeues per item through the limiter', () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock });
    q.addRateLimited('a');
    q.addRateLimited('a');
    q.addRateLimited('b');
    expect(q.numRequeues('a')).toBe(2);
    expect(q.numRequeues('b')).toBe(1);
    q.shutDown();
  });

  it('uses the default controller limiter (5 ms base) when none is given', () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock });
    q.addRateLimited('a');
    clock.advance(4);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('stops re-adding after shutdown', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock });
    q.addRateLimited('a');
    q.shutDown();
    q.addRateLimited('b');
    clock.advance(1000);
    expect(q.len()).toBe(0);
    expect(clock.pending()).toBe(0);
    expect(await q.get()).toEqual({ shutdown: true });
  });
});
