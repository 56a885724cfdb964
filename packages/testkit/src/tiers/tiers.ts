/** Which tiers a run covers: always the testkit, and the real tier when its binaries are there. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ASSETS_ENV, assetsDir, type Binary } from '../control-plane/assets.js';
import type { TierName } from './cluster.js';

/** The environment variable that narrows a run to one tier: `testkit` or `real`. */
export const TIERS_ENV = 'KPROV_TIERS';

/** The binaries the real tier runs (envtest's assets have only the first two). */
const REAL_TIER_BINARIES: readonly Binary[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

/** Why the real tier cannot run here, or `undefined` when it can. */
function realTierMissing(): string | undefined {
  const dir = assetsDir();
  if (dir === undefined) return `${ASSETS_ENV} is not set`;
  const missing = REAL_TIER_BINARIES.filter((b) => !existsSync(path.join(dir, b)));
  return missing.length === 0 ? undefined : `${ASSETS_ENV}=${dir} has no ${missing.join(', ')}`;
}

/**
 * The tiers to run end-to-end tests on: `testkit`, and `real` when `KUBEBUILDER_ASSETS` names a folder holding etcd,
 * kube-apiserver, kube-controller-manager and kube-scheduler. `KPROV_TIERS` (`testkit`, `real`, or both
 * comma-separated) narrows the choice.
 */
export function availableTiers(): TierName[] {
  const all: TierName[] = realTierMissing() === undefined ? ['testkit', 'real'] : ['testkit'];
  const wanted = process.env[TIERS_ENV];
  if (wanted === undefined || wanted === '') return all;
  const names = wanted.split(',').map((s) => s.trim());
  return all.filter((t) => names.includes(t));
}

/** The one line a run prints when the real tier is skipped, saying why and how to enable it. */
export function realTierSkippedLine(): string | undefined {
  const why = realTierMissing();
  if (why === undefined) return undefined;
  return `real tier skipped (${why}): set ${ASSETS_ENV} to a folder holding ${REAL_TIER_BINARIES.join(', ')} (Kubernetes 1.32) to run every end-to-end suite on a real control plane too; see docs/testkit.md`;
}
