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
      // A timer never fires early; a busy machine only makes the gaps longer.
      const gaps = looks.slice(1).map((t, i) => t - looks[i]!);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(expected - 5);
    });
  },
  // No cluster is started: on the real and node tiers only the control plane, no node.
  { tiers: ALL_TIERS },
);

it('looks every 50 ms outside a test of describeTiers', () => {
  expect(WAIT.interval).toBe(50);
});
