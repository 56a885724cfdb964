/**
 * WAIT: how often a test's waits look depends on the tier the test runs on: every 50 ms on the testkit tier, where a
 * look is a request to a server in the test's process, every 200 ms on the real tier and every 500 ms on the node
 * tier, where each is a request to a real API server and what a test waits for takes longer.
 */
import { expect, it, vi } from 'vitest';
import { ALL_TIERS, describeTiers, WAIT } from '../../src/vitest.js';

const EXPECTED = { testkit: 50, real: 200, node: 500 } as const;

describeTiers(
  'WAIT',
  (tier) => {
    it('looks every 50 ms on the testkit tier, 200 ms on the real tier, 500 ms on the node tier', async () => {
      const expected = EXPECTED[tier.name];
      expect(WAIT.interval).toBe(expected);
      const looks: number[] = [];
      await vi.waitFor(() => {
        looks.push(performance.now());
        expect(looks).toHaveLength(3);
      }, WAIT);
      // The first look is at once, then one per tick of an interval timer: the i-th look after the first is at the i-th
      // tick or later, never earlier (a busy machine delays ticks, or skips one while a look runs). Two looks can be
      // closer than the interval, when a tick that came late is followed by one on time: the time since the first
      // look is what is bounded.
      looks.forEach((t, i) => expect(t - looks[0]!).toBeGreaterThanOrEqual(i * expected - 5));
    });
  },
  // No cluster is started: on the real and node tiers only the control plane, no node.
  { tiers: ALL_TIERS },
);

it('looks every 50 ms outside a test of describeTiers', () => {
  expect(WAIT.interval).toBe(50);
});
