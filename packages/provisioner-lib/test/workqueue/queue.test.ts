import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { sleep } from '../../src/clock/clock.js';
import { Queue } from '../../src/workqueue/queue.js';
import type { QueueGetResult } from '../../src/workqueue/queue.js';

/** Resolves once pending microtasks (promise continuations) have run. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function itemOf<T>(result: QueueGetResult<T>): T {
  if (result.shutdown) throw new Error('expected an item, got shutdown');
  return result.item;
}

describe('Queue', () => {
  it('hands out items in the order they were added', async () => {
    const q = new Queue<string>();
    q.add('a');
    q.add('b');
    q.add('c');
    expect(q.len()).toBe(3);
    expect(itemOf(await q.get())).toBe('a');
    expect(itemOf(await q.get())).toBe('b');
    expect(itemOf(await q.get())).toBe('c');
    expect(q.len()).toBe(0);
  });

  it('collapses repeated adds of a waiting item into one', async () => {
    const q = new Queue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(itemOf(await q.get())).toBe('a');
    expect(itemOf(await q.get())).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('collapses adds that come together into one even while a worker waits (the events of one watch read)', async () => {
    const q = new Queue<string>();
    const handed: string[] = [];
    const worker = (async () => {
      for (;;) {
        const r = await q.get();
        if (r.shutdown) return;
        handed.push(r.item);
        q.done(r.item);
      }
    })();
    await tick();
    // A claim's ADDED and the MODIFIED that follows at once, delivered in one read: one sync, not two.
    q.add('claim');
    q.add('claim');
    await tick();
    await tick();
    expect(handed).toEqual(['claim']);
    // Apart, they are two syncs.
    q.add('claim');
    await tick();
    expect(handed).toEqual(['claim', 'claim']);
    q.shutDown();
    await worker;
  });

  it('compares string items by value', async () => {
    const q = new Queue<string>();
    q.add(['ns', 'claim'].join('/'));
    q.add('ns/claim');
    expect(q.len()).toBe(1);
    expect(itemOf(await q.get())).toBe('ns/claim');
  });

  it('runs an item re-added while processing once more, after done', async () => {
    const q = new Queue<string>();
    q.add('a');
    const first = itemOf(await q.get());
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    q.done(first);
    expect(q.len()).toBe(1);
    const second = itemOf(await q.get());
    expect(second).toBe('a');
    q.done(second);
    expect(q.len()).toBe(0);
  });

  it('never hands one item to two concurrent getters', async () => {
    const q = new Queue<string>();
    const g1 = q.get();
    const g2 = q.get();
    q.add('a');
    expect(itemOf(await g1)).toBe('a');
    q.add('a');
    let second: QueueGetResult<string> | undefined;
    void g2.then((r) => (second = r));
    await tick();
    expect(second).toBeUndefined();
    q.done('a');
    await tick();
    expect(second).toEqual({ item: 'a', shutdown: false });
  });

  it('never lets two workers process the same item at once', async () => {
    const clock = new FakeClock();
    const q = new Queue<string>();
    const inFlight = new Set<string>();
    const processed: string[] = [];
    let overlaps = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const next = await q.get();
        if (next.shutdown) return;
        if (inFlight.has(next.item)) overlaps++;
        inFlight.add(next.item);
        try {
          await sleep(clock, 10);
          processed.push(next.item);
        } finally {
          inFlight.delete(next.item);
          q.done(next.item);
        }
      }
    };
    const workers = [worker(), worker(), worker()];
    for (let round = 0; round < 5; round++) {
      q.add('a');
      q.add('b');
      await clock.advanceAsync(3);
      q.add('a');
      q.add('b');
      await clock.advanceAsync(30);
    }
    await clock.advanceAsync(100);
    q.shutDown();
    await Promise.all(workers);
    expect(overlaps).toBe(0);
    expect(processed.filter((k) => k === 'a')).toHaveLength(10);
    expect(processed.filter((k) => k === 'b')).toHaveLength(10);
  });

  it('serves waiting getters in call order', async () => {
    const q = new Queue<string>();
    const order: string[] = [];
    const g1 = q.get().then((r) => order.push(`g1:${itemOf(r)}`));
    const g2 = q.get().then((r) => order.push(`g2:${itemOf(r)}`));
    q.add('x');
    q.add('y');
    await Promise.all([g1, g2]);
    expect(order).toEqual(['g1:x', 'g2:y']);
  });

  it('ignores done for an item that is not being processed', async () => {
    const q = new Queue<string>();
    q.done('never-added');
    q.add('a');
    const a = itemOf(await q.get());
    q.add('a');
    q.done(a);
    q.done(a);
    expect(q.len()).toBe(1);
    itemOf(await q.get());
    expect(q.len()).toBe(0);
  });

  it('wakes every waiting getter with shutdown', async () => {
    const q = new Queue<string>();
    const getters = [q.get(), q.get(), q.get()];
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    for (const result of await Promise.all(getters)) expect(result).toEqual({ shutdown: true });
  });

  it('drains queued items after shutdown before reporting shutdown', async () => {
    const q = new Queue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    q.add('c');
    expect(itemOf(await q.get())).toBe('a');
    expect(itemOf(await q.get())).toBe('b');
    expect(await q.get()).toEqual({ shutdown: true });
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('ignores adds after shutdown but still re-queues an item that became dirty before it', async () => {
    const q = new Queue<string>();
    q.add('a');
    const a = itemOf(await q.get());
    q.add('a');
    q.shutDown();
    q.add('b');
    q.done(a);
    expect(itemOf(await q.get())).toBe('a');
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('shutDownWithDrain waits until every handed-out item is done', async () => {
    const q = new Queue<string>();
    q.add('a');
    q.add('b');
    const a = itemOf(await q.get());
    const b = itemOf(await q.get());
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    expect(q.shuttingDown()).toBe(true);
    q.done(a);
    await tick();
    expect(drained).toBe(false);
    q.done(b);
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is being processed', async () => {
    const q = new Queue<string>();
    await q.shutDownWithDrain();
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('shutDown ends a pending shutDownWithDrain', async () => {
    const q = new Queue<string>();
    q.add('a');
    await q.get();
    const drain = q.shutDownWithDrain();
    q.shutDown();
    await drain;
  });
});
