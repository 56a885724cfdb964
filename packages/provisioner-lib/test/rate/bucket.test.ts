import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/rate/bucket.js';

describe('TokenBucket', () => {
  it('starts full and refills at qps, never above burst', () => {
    const b = new TokenBucket(10, 3, 1000);
    expect(b.tokensAt(1000)).toBe(3);
    expect(b.tryTake(1000)).toBe(true);
    expect(b.tryTake(1000)).toBe(true);
    expect(b.tryTake(1000)).toBe(true);
    expect(b.tryTake(1000)).toBe(false);
    expect(b.tokensAt(1050)).toBeCloseTo(0.5);
    expect(b.tokensAt(2000)).toBe(3);
  });

  it('reserve goes into debt and says how long until the token exists', () => {
    const b = new TokenBucket(10, 1, 0);
    expect(b.reserve(0)).toBe(0);
    expect(b.reserve(0)).toBe(100);
    expect(b.reserve(0)).toBe(200);
    expect(b.tokensAt(0)).toBe(-2);
    expect(b.reserve(250)).toBe(50);
  });

  it('tryTake takes nothing when it fails, and a token due now is there despite float rounding', () => {
    const b = new TokenBucket(1 / 300, 1, 0);
    expect(b.tryTake(0)).toBe(true);
    expect(b.tryTake(299_999)).toBe(false);
    expect(b.delayUntilToken(299_999)).toBeCloseTo(1, 3);
    expect(b.tryTake(300_000)).toBe(true);
  });

  it('delayUntilToken is 0 with a token, the truncated time to the next one otherwise, and changes nothing', () => {
    const b = new TokenBucket(3, 1, 0);
    expect(b.delayUntilToken(0)).toBe(0);
    expect(b.tryTake(0)).toBe(true);
    expect(b.delayUntilToken(0)).toBe(333.333333);
    expect(b.delayUntilToken(0)).toBe(333.333333);
  });
});
