/**
 * The guide of README.md ("The guide, on a real cluster"), on a real node: the image `pnpm images` built, loaded as
 * a cluster that cannot pull it is given it, and deploy/ applied with the README's commands. The provisioner's
 * Deployment gets Ready; the claim is provisioned; the test pod writes SUCCESS into the directory on the node;
 * deleting the pod and the claim removes the PV and the directory; and `kubectl delete pod` stops the provisioner
 * gracefully (the Lease released, exit code 0, no error logged), its Deployment starting a new one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  imageArchiveProblem,
  ObjectReader,
  recordWatch,
  terminatePod,
  userTools,
  waitFor,
  type UserTools,
} from '@kprov/testkit';
import { currentTier, describeTiers, WAIT } from '@kprov/testkit/vitest';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };

const IMAGE = fileURLToPath(new URL('../../../images/hostpath-example.oci.tar', import.meta.url));
const DEPLOY = fileURLToPath(new URL('../deploy/', import.meta.url));
const PV_DIR = '/tmp/hostpath-provisioner';
/** How long a rollout or a pod may take on a busy machine (image unpacked, probes passed). */
const ROLLOUT = '240s';
const WAIT_MS = 240_000;
/** The Lease of leader election: the provisioner name with `/` made `-`. */
const LEASE = 'example.com-hostpath';

/** `kubectl apply -f deploy/<file>...`, from the package folder, as the README runs it. */
const apply = (tools: UserTools, ...files: string[]): Promise<string> =>
  tools.kubectl('apply', ...files.flatMap((f) => ['-f', `${DEPLOY}${f}`]));

/**
 * Runs `step`; if it fails, the error also carries what a user would look at next: the provisioner's log and the
 * claim's and pods' state (a wait that times out says only that it did).
 */
async function explained<T>(tools: UserTools, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const show = (...args: string[]): Promise<string> =>
      tools.kubectl(...args).catch((e: unknown) => `(kubectl ${args[0]} failed: ${String(e)})`);
    const log = await show('logs', 'deployment/hostpath-provisioner', '--tail=60');
    const state = await show('get', 'pvc,pv,pods', '-o', 'wide');
    const events = await show('get', 'events', '--sort-by=.lastTimestamp');
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\n--- provisioner log ---\n${log}\n--- state ---\n${state}\n--- events ---\n${events}`, {
      cause: err,
    });
  }
}

const CANNOT_RUN = imageArchiveProblem(IMAGE, `ghcr.io/kprov/hostpath-example:${packageJson.version}`);
if (CANNOT_RUN !== undefined) {
  describe.skip(`hostpath-example on a real node (${CANNOT_RUN})`, () => {
    it('runs the guide', () => undefined);
  });
} else {
  describeTiers(
    'hostpath-example on a real node, deployed as the README says',
    (tier) => {
      it('runs the guide: provisions, the test pod writes SUCCESS on the node, deletion removes PV and directory', async () => {
        const cluster = await tier.start({ images: [IMAGE] });
        const tools = await userTools(cluster);
        currentTier().defer(() => tools.close());
        const read = new ObjectReader(cluster.kubeConfig);

        // 3. Start the provisioner.
        await apply(tools, 'rbac.yaml', 'deployment.yaml');
        await explained(tools, () =>
          tools.kubectl('rollout', 'status', 'deployment/hostpath-provisioner', `--timeout=${ROLLOUT}`),
        );
        // 4.–6. The class, the claim, the test pod.
        await apply(tools, 'class.yaml', 'claim.yaml');
        await explained(tools, () =>
          tools.kubectl('wait', '--for=jsonpath={.status.phase}=Bound', 'pvc/hostpath-claim', `--timeout=${ROLLOUT}`),
        );
        await apply(tools, 'test-pod.yaml');
        await explained(tools, () =>
          tools.kubectl('wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/test-pod', `--timeout=${ROLLOUT}`),
        );
        // 7. SUCCESS on the node, in the PV's directory.
        const pv = (await read.claim('hostpath-claim'))?.spec?.volumeName ?? '';
        expect((await read.volume(pv))?.spec?.hostPath?.path).toBe(`${PV_DIR}/${pv}`);
        expect(readFileSync(cluster.onNode('node-1', `${PV_DIR}/${pv}/SUCCESS`), 'utf8')).toBe('');
        // 8. Delete: the PV goes (reclaim policy Delete), and its directory with it.
        await tools.kubectl('delete', '-f', `${DEPLOY}test-pod.yaml`, '-f', `${DEPLOY}claim.yaml`);
        await waitFor(
          'the PV and its directory gone',
          async () =>
            (await read.volume(pv)) === undefined && !existsSync(cluster.onNode('node-1', `${PV_DIR}/${pv}`))
              ? true
              : undefined,
          { timeoutMs: WAIT_MS, intervalMs: WAIT.interval },
        );
      });

      it('stops gracefully on kubectl delete pod: the Lease released, exit code 0, no error logged', async () => {
        const cluster = await tier.start({ images: [IMAGE] });
        const tools = await userTools(cluster);
        currentTier().defer(() => tools.close());
        await apply(tools, 'rbac.yaml', 'deployment.yaml');
        await tools.kubectl('rollout', 'status', 'deployment/hostpath-provisioner', `--timeout=${ROLLOUT}`);
        const leases = cluster.kubeConfig.makeApiClient(CoordinationV1Api);
        const holder = await waitFor(
          'the provisioner holding the Lease',
          async () =>
            (await leases.readNamespacedLease({ namespace: 'default', name: LEASE }).catch(() => undefined))?.spec
              ?.holderIdentity || undefined,
          { timeoutMs: WAIT_MS, intervalMs: WAIT.interval },
        );
        const [pod] = (await new ObjectReader(cluster.kubeConfig).pods('default')).filter((p) =>
          p.metadata?.name?.startsWith('hostpath-provisioner-'),
        );
        const lease = await recordWatch<V1Lease>(
          cluster.kubeConfig,
          '/apis/coordination.k8s.io/v1/namespaces/default/leases',
          {
            fieldSelector: `metadata.name=${LEASE}`,
          },
        );
        try {
          const [container] = await terminatePod(cluster.kubeConfig, 'default', pod?.metadata?.name ?? '');
          expect(container?.exitCode).toBe(0);
          expect(container?.log).toContain('Released lease');
          expect(container?.log.split('\n').filter((l) => /^E\d{4} |level=error|"level":50/.test(l))).toEqual([]);
          // The release is written before the pod goes: an empty holder, which the next pod may take at once.
          const holders = lease.events.map((e) => e.object.spec?.holderIdentity ?? '');
          expect(holders.slice(holders.indexOf(holder))).toContain('');
        } finally {
          lease.stop();
        }
        // The Deployment starts a new pod, which takes the Lease.
        await tools.kubectl('rollout', 'status', 'deployment/hostpath-provisioner', `--timeout=${ROLLOUT}`);
        await waitFor(
          'a new holder of the Lease',
          async () => {
            const h = (await leases.readNamespacedLease({ namespace: 'default', name: LEASE })).spec?.holderIdentity;
            return h !== undefined && h !== '' && h !== holder ? h : undefined;
          },
          { timeoutMs: WAIT_MS, intervalMs: WAIT.interval },
        );
      });
    },
    { tiers: ['node'] },
  );
}
