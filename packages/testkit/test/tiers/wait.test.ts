/**
 * WAIT: how often a test's waits look depends on the tier the test runs on: every 500 ms on the node tier, where what
 * a test waits for takes seconds and each look is a request to a real API server, every 50 ms elsewhere.
 */
import { expect, it, vi } from 'vitest';
import { describeTiers, WAIT } from '../../src/vitest.js';

describeTiers(
  'WAIT',
  (tier) => {
    it('looks every 500 ms on the node tier and every 50 ms on the others', async () => {
      const expected = tier.name === 'node' ? 500 : 50;
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
  // The real tier looks as the testkit does; the node tier's control plane starts, but no node (no cluster is started).
  { tiers: ['testkit', 'node'] },
);

it('looks every 50 ms outside a test of describeTiers', () => {
  expect(WAIT.interval).toBe(50);
});
