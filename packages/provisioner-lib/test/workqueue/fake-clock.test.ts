import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { sleep } from '../../src/clock/clock.js';

describe('FakeClock', () => {
  it('fires due timers in time order with now() at each due time', () => {
    const clock = new FakeClock();
    const seen: [string, number][] = [];
    clock.setTimeout(() => seen.push(['b', clock.now()]), 20);
    clock.setTimeout(() => seen.push(['a', clock.now()]), 10);
    clock.setTimeout(() => seen.push(['c', clock.now()]), 30);
    clock.advance(25);
    expect(seen).toEqual([
      ['a', 10],
      ['b', 20],
    ]);
    expect(clock.now()).toBe(25);
    expect(clock.pending()).toBe(1);
  });

  it('fires timers scheduled by fired callbacks within the same window', () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    clock.setTimeout(() => {
      seen.push(clock.now());
      clock.setTimeout(() => seen.push(clock.now()), 5);
      clock.setTimeout(() => seen.push(clock.now()), 100);
    }, 10);
    clock.advance(20);
    expect(seen).toEqual([10, 15]);
    expect(clock.pending()).toBe(1);
  });

  it('fires timers due at the same instant in scheduling order', () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    clock.setTimeout(() => seen.push('first'), 10);
    clock.setTimeout(() => seen.push('second'), 10);
    clock.advance(10);
    expect(seen).toEqual(['first', 'second']);
  });

  it('does not fire cleared timers', () => {
    const clock = new FakeClock({ start: 1000 });
    let fired = false;
    const handle = clock.setTimeout(() => (fired = true), 1);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pending()).toBe(0);
    expect(clock.now()).toBe(1010);
  });

  it('rejects a negative advance', () => {
    expect(() => new FakeClock().advance(-1)).toThrow(RangeError);
  });

  it('throws instead of spinning when a callback reschedules itself with no delay', () => {
    const clock = new FakeClock();
    const again = (): void => {
      clock.setTimeout(again, 0);
    };
    clock.setTimeout(again, 0);
    expect(() => clock.advance(1)).toThrow(/without time moving/);
  });

  it('advanceAsync lets promise chains schedule and reach their next timers', async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const run = async (): Promise<void> => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 100);
        await Promise.resolve();
        seen.push(clock.now());
      }
    };
    const done = run();
    await clock.advanceAsync(300);
    await done;
    expect(seen).toEqual([100, 200, 300]);
  });

  it('advance alone does not run continuations between timers', async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const done = (async () => {
      await sleep(clock, 100);
      seen.push(clock.now());
      await sleep(clock, 100);
      seen.push(clock.now());
    })();
    clock.advance(300);
    await Promise.resolve();
    await Promise.resolve();
    // The second sleep was scheduled only after advance returned, relative to time 300.
    expect(seen).toEqual([300]);
    clock.advance(100);
    await done;
    expect(seen).toEqual([300, 400]);
  });
});
