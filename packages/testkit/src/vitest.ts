/**
 * @packageDocumentation
 * Vitest helpers for running one suite on both tiers: the in-process testkit and, when `KUBEBUILDER_ASSETS` is
 * set, a real control plane.
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { startTestkitCluster, type Cluster, type ClusterOptions, type TierName } from './tiers/cluster.js';
import { RealTier, type RealTierOptions } from './tiers/real.js';
import { availableTiers } from './tiers/tiers.js';

/** One tier inside {@link describeTiers}. */
export interface TierContext {
  /** `testkit` or `real`. */
  readonly name: TierName;
  /**
   * Starts a cluster for the running test; it is stopped after the test (on the real tier, everything the test
   * created is deleted and the shared control plane stays up for the next test).
   */
  start(options?: ClusterOptions): Promise<Cluster>;
}

/** Options of {@link describeTiers}. */
export interface DescribeTiersOptions extends RealTierOptions {
  /** How long the real tier's control plane may take to start, in ms. Default 120 000. */
  startTimeoutMs?: number;
}

/**
 * Declares the suite `body` once per available tier (see `availableTiers`), titled `<title> [testkit]` and
 * `<title> [real]`. On the real tier one control plane is started before the suite's tests and stopped after them.
 */
export function describeTiers(title: string, body: (tier: TierContext) => void, options: DescribeTiersOptions = {}): void {
  for (const name of availableTiers()) {
    describe(`${title} [${name}]`, () => {
      const real = name === 'real' ? new RealTier(options) : undefined;
      const started: Cluster[] = [];
      if (real !== undefined) {
        beforeAll(async () => {
          await real.controlPlane();
        }, options.startTimeoutMs ?? 120_000);
        afterAll(() => real.close(), 60_000);
      }
      afterEach(async () => {
        for (const c of started.splice(0).reverse()) await c.stop();
      }, 60_000);
      body({
        name,
        async start(o) {
          const c = real === undefined ? await startTestkitCluster(o) : await real.start(o);
          started.push(c);
          return c;
        },
      });
    });
  }
}
