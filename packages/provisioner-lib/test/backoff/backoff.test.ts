import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { Backoff } from '../../src/backoff/backoff.js';

function take(backoff: Backoff, n: number): number[] {
  return Array.from({ length: n }, () => backoff.next());
}

describe('Backoff', () => {
  it('doubles from 800 ms to a 30 s cap without jitter', () => {
    const backoff = new Backoff({ clock: new FakeClock(), jitter: 0 });
    expect(take(backoff, 9)).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
  });

  it('adds at most 100 % jitter on top of each base delay by default', () => {
    const bases = [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000];
    const low = new Backoff({ clock: new FakeClock(), random: () => 0 });
    expect(take(low, bases.length)).toEqual(bases);
    const high = new Backoff({ clock: new FakeClock(), random: () => 0.999 });
    take(high, bases.length).forEach((delay, i) => {
      const base = bases[i]!;
      expect(delay).toBeGreaterThanOrEqual(base);
      expect(delay).toBeLessThan(2 * base);
    });
  });

  it('stays within [base, 2·base) with the real random source', () => {
    const backoff = new Backoff({ clock: new FakeClock() });
    for (let i = 0; i < 200; i++) {
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(800);
      expect(delay).toBeLessThan(60_000);
    }
  });

  it('starts over after reset', () => {
    const backoff = new Backoff({ clock: new FakeClock(), jitter: 0 });
    take(backoff, 8);
    backoff.reset();
    expect(take(backoff, 3)).toEqual([800, 1600, 3200]);
  });

  it('starts over when nothing failed for longer than resetAfterMs', () => {
    const clock = new FakeClock();
    const backoff = new Backoff({ clock, jitter: 0 });
    expect(take(backoff, 3)).toEqual([800, 1600, 3200]);
    clock.advance(120_000);
    expect(backoff.next()).toBe(6400);
    clock.advance(120_001);
    expect(backoff.next()).toBe(800);
  });

  it('keeps growing while failures come more often than resetAfterMs', () => {
    const clock = new FakeClock();
    const backoff = new Backoff({ clock, jitter: 0, resetAfterMs: 1000 });
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      seen.push(backoff.next());
      clock.advance(900);
    }
    expect(seen).toEqual([800, 1600, 3200, 6400]);
  });

  it('honours custom options', () => {
    const backoff = new Backoff({ clock: new FakeClock(), initialMs: 100, maxMs: 250, factor: 3, jitter: 0 });
    expect(take(backoff, 3)).toEqual([100, 250, 250]);
  });

  it('rejects negative options', () => {
    expect(() => new Backoff({ initialMs: -1 })).toThrow(RangeError);
    expect(() => new Backoff({ jitter: Number.NaN })).toThrow(RangeError);
  });
});
