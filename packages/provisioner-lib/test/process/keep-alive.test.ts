import { describe, expect, it } from 'vitest';
import { holdProcessOpen } from '../../src/process/keep-alive.js';

/** Ref'd timers keeping this process alive now. */
function refTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('holdProcessOpen', () => {
  it('holds one ref’d timer while any holder holds it, released by the last one; a second release does nothing', () => {
    const before = refTimers();
    const first = holdProcessOpen();
    expect(refTimers()).toBe(before + 1);
    const second = holdProcessOpen();
    expect(refTimers()).toBe(before + 1);
    first();
    first();
    expect(refTimers()).toBe(before + 1);
    second();
    expect(refTimers()).toBe(before);
    const again = holdProcessOpen();
    expect(refTimers()).toBe(before + 1);
    again();
    expect(refTimers()).toBe(before);
  });
});
