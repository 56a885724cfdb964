import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { DelayingQueue } from '../../src/workqueue/delaying.js';

/** Drains the queue (get + done) and returns what it held, in order. */
async function drain(q: DelayingQueue<string>): Promise<string[]> {
  const items: string[] = [];
  while (q.len() > 0) {
    const next = await q.get();
    if (next.shutdown) break;
    items.push(next.item);
    q.done(next.item);
  }
  return items;
}

describe('DelayingQueue', () => {
  it('adds an item only once its delay has passed', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 50);
    expect(q.len()).toBe(0);
    clock.advance(49);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('adds at once when the delay is zero or negative', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
    expect(clock.pending()).toBe(0);
  });

  it('keeps the earlier ready time when a waiting item is added again with a longer delay', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 1000);
    clock.advance(100);
    expect(q.len()).toBe(1);
  });

  it('moves a waiting item earlier when it is added again with a shorter delay', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 1000);
    q.addAfter('a', 10);
    clock.advance(10);
    expect(q.len()).toBe(1);
    clock.advance(1000);
    expect(q.len()).toBe(1);
  });

  it('adds waiting items in ready-time order', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('c', 30);
    q.addAfter('a', 10);
    q.addAfter('d', 40);
    q.addAfter('b', 20);
    q.addAfter('b2', 20);
    clock.advance(40);
    expect(await drain(q)).toEqual(['a', 'b', 'b2', 'c', 'd']);
  });

  it('uses a single timer however many items wait', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    for (let i = 0; i < 50; i++) q.addAfter(`item-${i}`, 1000 - i);
    expect(clock.pending()).toBe(1);
    clock.advance(960);
    expect(q.len()).toBe(10);
    expect(clock.pending()).toBe(1);
    clock.advance(40);
    expect(q.len()).toBe(50);
    expect(clock.pending()).toBe(0);
  });

  it('still dedupes a delayed item against the same item already queued', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.add('a');
    q.addAfter('a', 10);
    clock.advance(10);
    expect(q.len()).toBe(1);
  });

  it('ignores addAfter after shutdown and stops its timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 10);
    q.shutDown();
    expect(clock.pending()).toBe(0);
    q.addAfter('b', 10);
    q.addAfter('c', 0);
    clock.advance(100);
    expect(q.len()).toBe(0);
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('stops its timer on shutDownWithDrain too', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 10);
    await q.shutDownWithDrain();
    expect(clock.pending()).toBe(0);
  });

  it('wakes a waiting getter when the delay expires', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    const got = q.get();
    q.addAfter('a', 25);
    await clock.advanceAsync(25);
    expect(await got).toEqual({ item: 'a', shutdown: false });
  });
});
