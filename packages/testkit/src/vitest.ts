/**
 * @packageDocumentation
 * Vitest helpers for running one suite on several tiers: the in-process testkit; when `KUBEBUILDER_ASSETS` is set, a
 * real control plane (with `KPROV_USE_EXISTING_CLUSTER=true` or envtest's `USE_EXISTING_CLUSTER=true`, the cluster of
 * the current kubeconfig instead); and, for suites that ask for it, real nodes.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OBJECT_NAME, type Manifest, type ManifestFiles } from './manifests/manifests.js';
import { startTestkitCluster, type Cluster, type ClusterOptions, type TierName } from './tiers/cluster.js';

export type { TierName };
import { NodeTier } from './tiers/node.js';
import { ExistingClusterTier } from './tiers/existing.js';
import { RealTier, type RealTierOptions } from './tiers/real.js';
import { availableTiers, useExistingCluster } from './tiers/tiers.js';

/** One tier inside {@link describeTiers}. */
export interface TierContext {
  /** `testkit`, `real` or `node`. */
  readonly name: TierName;
  /**
   * Starts a cluster for the running test; it is stopped after the test (on the real tier, everything the test
   * created is deleted and the shared control plane stays up for the next test).
   */
  start(options?: ClusterOptions): Promise<Cluster>;
  /** Runs `cleanup` after the running test, before its clusters stop; the latest first. */
  defer(cleanup: () => unknown): void;
}

/** Options of {@link describeTiers}. */
export interface DescribeTiersOptions extends RealTierOptions {
  /**
   * Run on these tiers (of those available), e.g. `['testkit']` for a suite that needs the testkit's fault injection
   * or request counts (say why beside it), or `['testkit', 'real', 'node']` for a suite whose pods should also run in
   * real containers. Default `['testkit', 'real']`: the node tier costs seconds per test, so suites opt in.
   */
  tiers?: readonly TierName[];
  /** How long the real tier's control plane may take to start, in ms. Default 120 000. */
  startTimeoutMs?: number;
}

let current: TierContext | undefined;

/** The tiers a suite runs on when it does not say. */
const DEFAULT_TIERS: readonly TierName[] = ['testkit', 'real'];

/**
 * A test's time limit on the node tier, unless it sets its own: its nodes start, and its pods' containers are
 * created, unpacked and started for real, which on a busy 2-core machine takes tens of seconds.
 */
const NODE_TIER_TEST_TIMEOUT_MS = 300_000;

/** Every tier: for a suite whose pods should also run in real containers (`{ tiers: ALL_TIERS }`). */
export const ALL_TIERS: readonly TierName[] = ['testkit', 'real', 'node'];

/**
 * How often a test's waits look, by the tier it runs on. On the testkit tier a look is a request to the server in the
 * test's own process, and what a test waits for takes milliseconds. On the real tier each look is a request to a real
 * API server: looking every 200 ms instead of 50 took 5-13% less CPU over local-path's provisioner suites (the
 * workers' and the control planes'), in the same time. On the node tier what a test waits for (a pod's containers
 * created and started, a helper pod run to completion) takes seconds: every 500 ms instead of 50 took a fifth to a
 * quarter less CPU over files of pod scenarios, in no more time.
 */
const INTERVAL_MS: Readonly<Record<TierName, number>> = { testkit: 50, real: 200, node: 500 };

/**
 * How long a test waits for a condition, and how often it looks: `vi.waitFor(check, WAIT)`,
 * `expect.poll(read, WAIT)`. Generous on purpose: a wait ends as soon as its condition holds, so the limit only
 * bounds a test that fails, and on a busy 2-core machine a real control plane can take seconds to answer. A test that
 * waits should be allowed more than this (the repository's vitest configurations allow 120 s).
 *
 * `timeout`: 60 s. `interval`: by the tier of the running test (see {@link currentTier}), read when a wait starts:
 * 50 ms on the testkit tier and outside a test of {@link describeTiers}, 200 ms on the real tier, 500 ms on the node
 * tier.
 */
export const WAIT: Readonly<{ timeout: number; interval: number }> = Object.freeze({
  timeout: 60_000,
  get interval(): number {
    return INTERVAL_MS[current?.name ?? 'testkit'];
  },
});

/**
 * The control planes of this test file, by tier and options: the suites of one file on the same tier with the same
 * options share one, which stops after the last of them.
 */
const shared = new Map<string, { tier: SharedTier; suites: number }>();

/** What a suite needs of the real, node and existing-cluster tiers. */
interface SharedTier {
  /** Starts the control plane, or checks that the existing cluster answers. */
  ready(): Promise<unknown>;
  start(options?: ClusterOptions): Promise<Cluster>;
  close(): Promise<void>;
}

/** The tier `name` for `options`: on an existing cluster (see `useExistingCluster`) the real tier uses it. */
function newSharedTier(name: 'real' | 'node', options: RealTierOptions): SharedTier {
  if (name === 'real' && useExistingCluster()) {
    const t = new ExistingClusterTier(
      options.controlPlane?.crds === undefined ? {} : { crds: options.controlPlane.crds },
    );
    return { ready: () => t.connect(), start: (o) => t.start(o), close: () => t.close() };
  }
  const t = name === 'node' ? new NodeTier(options) : new RealTier(options);
  return { ready: () => t.controlPlane(), start: (o) => t.start(o), close: () => t.close() };
}

function sharedRealTier(
  name: 'real' | 'node',
  options: RealTierOptions,
): { tier: SharedTier; release: () => Promise<void> } {
  const key = `${name} ${JSON.stringify(options.controlPlane ?? {})}`;
  let entry = shared.get(key);
  if (entry === undefined) {
    entry = { tier: newSharedTier(name, options), suites: 0 };
    shared.set(key, entry);
  }
  entry.suites += 1;
  const e = entry;
  return {
    tier: e.tier,
    release: async () => {
      e.suites -= 1;
      if (e.suites > 0) return;
      shared.delete(key);
      await e.tier.close();
    },
  };
}

/**
 * The tier of the running test, for helpers that start clusters without being handed the tier.
 *
 * @throws Error outside a test of {@link describeTiers}.
 */
export function currentTier(): TierContext {
  if (current === undefined) throw new Error('currentTier() is only known inside a test declared in describeTiers');
  return current;
}

/**
 * Declares the suite `body` once per tier it asks for that is available (see `availableTiers`), titled
 * `<title> [testkit]`, `<title> [real]`, `<title> [node]`. On the real and node tiers one control plane is started
 * before the suite's first test and stopped after the file's last suite that uses it (suites of one file on the same
 * tier with the same options share it). With `KPROV_USE_EXISTING_CLUSTER=true` (or envtest's `USE_EXISTING_CLUSTER=true`)
 * the real tier runs on the cluster of the current kubeconfig instead, each test deleting only what it made there
 * (see `ExistingClusterTier`); the node tier keeps its own control plane.
 */
export function describeTiers(
  title: string,
  body: (tier: TierContext) => void,
  options: DescribeTiersOptions = {},
): void {
  const wanted = options.tiers ?? DEFAULT_TIERS;
  const names = availableTiers().filter((t) => wanted.includes(t));
  if (names.length === 0) {
    // Declared, but skipped: a run narrowed to another tier still lists the suite, and a file of such suites is not empty.
    const name = options.tiers?.[0] ?? 'testkit';
    describe.skip(`${title} [${name}]`, () => {
      body({ name, start: () => Promise.reject(new Error('skipped')), defer: () => undefined });
    });
  }
  for (const name of names) {
    describe(`${title} [${name}]`, name === 'node' ? { timeout: NODE_TIER_TEST_TIMEOUT_MS } : {}, () => {
      const plane = name === 'testkit' ? undefined : sharedRealTier(name, options);
      const real = plane?.tier;
      const started: Cluster[] = [];
      const cleanups: (() => unknown)[] = [];
      if (plane !== undefined) {
        beforeAll(async () => {
          await plane.tier.ready();
        }, options.startTimeoutMs ?? 120_000);
        afterAll(() => plane.release(), 60_000);
      }
      afterEach(async () => {
        current = undefined;
        try {
          for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        } finally {
          for (const c of started.splice(0).reverse()) await c.stop();
        }
      }, 60_000);
      const context: TierContext = {
        name,
        async start(o) {
          const c = real === undefined ? await startTestkitCluster(o) : await real.start(o);
          started.push(c);
          return c;
        },
        defer(cleanup) {
          cleanups.push(cleanup);
        },
      };
      beforeEach(() => {
        current = context;
      });
      body(context);
    });
  }
}

/**
 * For each of the manifest files: it parses as YAML, each object has a valid name and validates against its schema,
 * and a broken copy of each object fails validation with `validationError` (which proves the check is wired for
 * that kind: a validator that is not would accept anything).
 */
export function describeManifestFiles(
  manifests: ManifestFiles,
  validate: (doc: Manifest) => void,
  validationError: new (...args: never[]) => Error,
): void {
  describe.each([...manifests.byFile.keys()])('%s', (file) => {
    const docs = manifests.byFile.get(file) ?? [];
    const named = docs.map((d) => [`${d.kind} ${d.metadata?.name ?? '(no name)'}`, d] as const);

    it('parses as YAML', () => {
      const error = manifests.parseErrors.get(file);
      if (error !== undefined) throw error;
      expect(docs.length).toBeGreaterThan(0);
    });

    it.each(named)('%s validates against the Kubernetes schema', (_, doc) => {
      expect(doc.metadata?.name, 'metadata.name').toMatch(OBJECT_NAME);
      expect(() => validate(doc)).not.toThrow();
    });

    it.each(named)('a broken copy of %s fails validation', (_, doc) => {
      const broken = { ...structuredClone(doc), metadata: 'not an object' } as unknown as Manifest;
      expect(() => validate(broken)).toThrow(validationError);
    });
  });
}
