/**
 * What the node-mode and kutti suites share: the image archive they load into the nodes, `kubectl` and `helm` as a
 * user runs them, a claim used by a pod pinned to a node, and the checks of a provisioner pod stopped by SIGTERM.
 * The suites run on the node tier only (their pods are the provisioner's image in real containers), and are skipped
 * with one line when `images/` has no `local-path.oci.tar` of this version.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, type V1Pod, type V1Toleration } from '@kubernetes/client-node';
import { imageArchiveProblem, terminatePod, userTools, waitFor, type Cluster, type UserTools } from '@kprov/testkit';
import { currentTier, describeTiers, type TierContext } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { claim, volumeTestPod } from '../provisioner/helpers.js';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** This package's folder, as the docs' commands name it from the root. */
export const PACKAGE = path.join(ROOT, 'packages/local-path');
/** `pnpm images`' archive of the provisioner's image, loaded into every node as `ctr -n k8s.io images import` does. */
export const ARCHIVE = path.join(ROOT, 'images/local-path.oci.tar');

/** How long a rollout may take on a busy machine: the image unpacked, the containers started, the probes passed. */
export const ROLLOUT_TIMEOUT = '240s';
/** How long a claim may take to be bound, or a pod to run, on a busy machine. */
export const POD_TIMEOUT = '180s';
/** How long a volume may take to go once its claim is deleted. */
export const DELETE_TIMEOUT = '180s';

/** The image the manifests and the chart run. */
export const IMAGE = `ghcr.io/kprov/local-path:${packageJson.version}`;

/**
 * `describeTiers(title, body)` on the node tier, or one skipped suite whose title says how to get the image when
 * `images/local-path.oci.tar` is missing or holds another version.
 */
export function describeWithImage(title: string, body: (tier: TierContext) => void): void {
  const problem = imageArchiveProblem(ARCHIVE, IMAGE);
  if (problem === undefined) {
    describeTiers(title, body, { tiers: ['node'] });
    return;
  }
  describe.skip(`${title} (${problem})`, () => {
    it('runs on real nodes', () => undefined);
  });
}

/** `kubectl` and `helm` with the cluster's administrator kubeconfig, for the running test. */
export async function toolsFor(cluster: Cluster): Promise<UserTools> {
  const tools = await userTools(cluster);
  currentTier().defer(() => tools.close());
  return tools;
}

/**
 * Creates claim `name` of `className` and a busybox pod on `node` (with `tolerations`, default none) that writes
 * `local-path-test` into `/data/test` of it and exits; resolves with the PV name once the pod has succeeded.
 */
export async function useClaimOn(
  cluster: Cluster,
  kubectl: UserTools['kubectl'],
  name: string,
  className: string,
  node: string,
  tolerations: V1Toleration[] = [],
): Promise<string> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name, className) });
  const pod = volumeTestPod(name, `pod-${name}`, { 'kubernetes.io/hostname': node });
  if (tolerations.length > 0) pod.spec!.tolerations = tolerations;
  await core.createNamespacedPod({ namespace: 'default', body: pod });
  await kubectl('wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/pod-${name}`, `--timeout=${POD_TIMEOUT}`);
  return (await kubectl('get', 'pvc', name, '-o', 'jsonpath={.spec.volumeName}')).trim();
}

/** Deletes the pod of {@link useClaimOn} and the claim, and waits until the PV `pvName` is gone. */
export async function deleteClaim(kubectl: UserTools['kubectl'], name: string, pvName: string): Promise<void> {
  await kubectl('delete', 'pod', `pod-${name}`, '--wait=true');
  await kubectl('delete', 'pvc', name, '--wait=false');
  await kubectl('wait', '--for=delete', `pv/${pvName}`, `--timeout=${DELETE_TIMEOUT}`);
}

/** The pods of `namespace` matching `selector` (and made by a controller of kind `ownerKind`, if given), by node. */
export async function podsByNode(
  cluster: Cluster,
  namespace: string,
  selector: string,
  ownerKind?: string,
): Promise<Map<string, V1Pod>> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.filter(
    (p) =>
      ownerKind === undefined ||
      p.metadata?.ownerReferences?.some((o) => o.controller === true && o.kind === ownerKind),
  );
  return new Map(pods.map((p) => [p.spec?.nodeName ?? '', p]));
}

/** The log lines of a provisioner that report an error: klog's `E` and `F` lines, a stack trace, a crash. */
export function errorLines(log: string): string[] {
  return log.split('\n').filter((l) => /^[EF]\d{4} /.test(l) || /^\s+at /.test(l) || l.includes('Critical error'));
}

/**
 * Deletes the provisioner pod `name` as `kubectl delete pod` does (SIGTERM, then the grace period) and checks that
 * it stopped gracefully: exit code 0, and no error among its last log lines (those before the deletion included).
 * Resolves with its log.
 */
export async function expectGracefulStop(cluster: Cluster, namespace: string, name: string): Promise<string> {
  const [container] = await terminatePod(cluster.kubeConfig, namespace, name, { tailLines: 30 });
  expect(container, `pod ${namespace}/${name} has one container`).toBeDefined();
  const { exitCode, log } = container!;
  expect({ exitCode, errors: errorLines(log) }, log).toEqual({ exitCode: 0, errors: [] });
  expect(log).toContain('"Receive SIGTERM to exit"');
  return log;
}

/** Waits until `kubectl logs` of `pod` shows `text`; resolves with the log. */
export function waitForLog(
  kubectl: UserTools['kubectl'],
  namespace: string,
  pod: string,
  text: string,
): Promise<string> {
  return waitFor(
    `"${text}" in the log of ${namespace}/${pod}`,
    async () => {
      const log = await kubectl('logs', '--namespace', namespace, pod);
      return log.includes(text) ? log : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
}
