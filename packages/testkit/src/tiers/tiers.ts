/** Which tiers a run covers: always the testkit, the real tier when its binaries are there, the node tier when the machine can run nodes. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ASSETS_ENV, assetsDir, type Binary } from '../control-plane/assets.js';
import { NODE_PACKAGES, nodeHostMissing } from '../node/host.js';
import { BUSYBOX_BINARY } from '../node/images.js';
import type { TierName } from './cluster.js';

/** The environment variable that narrows a run to some tiers: `testkit`, `real`, `node`, comma-separated. */
export const TIERS_ENV = 'KPROV_TIERS';

/**
 * Run the real tier on the cluster of the current kubeconfig instead of a control plane of its own when `true`
 * (envtest's `USE_EXISTING_CLUSTER`, which is read too when this one is not set).
 */
export const USE_EXISTING_CLUSTER_ENV = 'KPROV_USE_EXISTING_CLUSTER';

/** envtest's own variable, honoured when {@link USE_EXISTING_CLUSTER_ENV} is not set. */
export const ENVTEST_USE_EXISTING_CLUSTER_ENV = 'USE_EXISTING_CLUSTER';

/** Whether the real tier runs on an existing cluster; see {@link USE_EXISTING_CLUSTER_ENV}. */
export function useExistingCluster(): boolean {
  const value = process.env[USE_EXISTING_CLUSTER_ENV] ?? process.env[ENVTEST_USE_EXISTING_CLUSTER_ENV] ?? '';
  return value.trim().toLowerCase() === 'true';
}

/** The binaries the real tier runs (envtest's assets have only the first two). */
const REAL_TIER_BINARIES: readonly Binary[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

/** Why the real tier's own control plane cannot run here, or `undefined` when it can. */
function controlPlaneMissing(): string | undefined {
  const dir = assetsDir();
  if (dir === undefined) return `${ASSETS_ENV} is not set`;
  const missing = REAL_TIER_BINARIES.filter((b) => !existsSync(path.join(dir, b)));
  return missing.length === 0 ? undefined : `${ASSETS_ENV}=${dir} has no ${missing.join(', ')}`;
}

/** Why the real tier cannot run here, or `undefined` when it can (always on an existing cluster). */
function realTierMissing(): string | undefined {
  return useExistingCluster() ? undefined : controlPlaneMissing();
}

/** Why the node tier cannot run here, or `undefined` when it can. */
function nodeTierMissing(): string | undefined {
  const real = controlPlaneMissing();
  if (real !== undefined) return real;
  const host = nodeHostMissing();
  if (host !== undefined) return host;
  return existsSync(BUSYBOX_BINARY) ? undefined : `${BUSYBOX_BINARY} not found (apt-get install busybox-static)`;
}

/**
 * The tiers to run end-to-end tests on: `testkit`; `real` when `KUBEBUILDER_ASSETS` names a folder holding etcd,
 * kube-apiserver, kube-controller-manager and kube-scheduler; `node` when that folder also holds kubelet and pause
 * and the machine can run nodes (root, containerd, runc, CNI plugins, buildah, busybox-static). `KPROV_TIERS`
 * (comma-separated names) narrows the choice.
 */
export function availableTiers(): TierName[] {
  const all: TierName[] = ['testkit'];
  if (realTierMissing() === undefined) all.push('real');
  if (nodeTierMissing() === undefined) all.push('node');
  const wanted = process.env[TIERS_ENV];
  if (wanted === undefined || wanted === '') return all;
  const names = wanted.split(',').map((s) => s.trim());
  return all.filter((t) => names.includes(t));
}

/** The one line a run prints when the real tier is skipped, saying why and how to enable it. */
export function realTierSkippedLine(): string | undefined {
  const why = realTierMissing();
  if (why === undefined) return undefined;
  return (
    `real tier skipped (${why}): set ${ASSETS_ENV} to a folder holding ${REAL_TIER_BINARIES.join(', ')} (Kubernetes 1.32; ` +
    `setup-envtest gives the first two, the server tarball https://dl.k8s.io/v1.32.13/kubernetes-server-linux-amd64.tar.gz all four) ` +
    `to run every end-to-end suite on a real control plane too, or ${USE_EXISTING_CLUSTER_ENV}=true to run it on the cluster of your kubeconfig; see docs/testkit.md`
  );
}

/** The one line a run prints when the real tier runs on an existing cluster, or `undefined` when it does not. */
export function existingClusterLine(): string | undefined {
  if (!useExistingCluster()) return undefined;
  const from =
    process.env[USE_EXISTING_CLUSTER_ENV] === undefined ? ENVTEST_USE_EXISTING_CLUSTER_ENV : USE_EXISTING_CLUSTER_ENV;
  return `real tier on the existing cluster of the current kubeconfig (${from}=true; ${process.env.KUBECONFIG === undefined ? '~/.kube/config' : `KUBECONFIG=${process.env.KUBECONFIG}`}): each test deletes only the namespaces, nodes and objects it made; see docs/testkit.md`;
}

/** The one line a run prints when the node tier is skipped (and the real tier is not), saying why and how to enable it. */
export function nodeTierSkippedLine(): string | undefined {
  if (controlPlaneMissing() !== undefined) return undefined;
  const why = nodeTierMissing();
  if (why === undefined) return undefined;
  return `node tier skipped (${why}): as root, with kubelet and pause in ${ASSETS_ENV} and \`apt-get install ${NODE_PACKAGES.join(' ')} busybox-static\`, the suites that run pods also run on real nodes; see docs/testkit.md`;
}
