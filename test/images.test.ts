/**
 * The images `pnpm images` writes to images/ run on a real node with the repository's manifests unchanged. Each
 * archive is imported into the node's containerd with `ctr -n k8s.io images import`, as a cluster that cannot pull
 * our images is given them, and each package is deployed with `kubectl apply -f` of its deploy/ files, as its docs
 * tell users: the provisioner's pod gets Ready through its probes, and local-path provisions a claim for a pod that
 * writes into it. Runs on the node tier when images/ holds the archives. (hostpath-example's guide runs on a real node
 * in its own package: test/deploy-node.test.ts.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userTools, type Cluster } from '@kprov/testkit';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** How long a provisioner's pod may take to get Ready on a busy machine: image unpacked, probes passed. */
const READY_TIMEOUT = '240s';

const PACKAGES = ['local-path', 'local-static'] as const;
const archive = (pkg: (typeof PACKAGES)[number]): string => join(ROOT, 'images', `${pkg}.oci.tar`);
const missing = PACKAGES.filter((pkg) => !existsSync(archive(pkg)));

/** kubectl with the cluster's administrator kubeconfig, for the running test. */
async function kubectlFor(cluster: Cluster): Promise<(...args: string[]) => Promise<string>> {
  const tools = await userTools(cluster);
  currentTier().defer(() => tools.close());
  return tools.kubectl;
}

/** The package's deploy/ files, as the docs apply them. */
const deploy = (pkg: string, ...files: string[]): string[] =>
  files.flatMap((f) => ['-f', join(ROOT, 'packages', pkg, 'deploy', f)]);

if (missing.length > 0) {
  describe.skip(`images on a real node (images/ has no ${missing.join(', ')}: \`pnpm images\` builds them)`, () => {
    it('runs with the manifests', () => undefined);
  });
} else {
  describeTiers(
    'images on a real node, with the manifests',
    (tier) => {
      it('local-path: deploy/local-path-storage.yaml gets the provisioner Ready, which provisions a claim', async () => {
        const cluster = await tier.start({ images: [archive('local-path')] });
        const kubectl = await kubectlFor(cluster);
        await kubectl('apply', ...deploy('local-path', 'local-path-storage.yaml'));
        await kubectl(
          'rollout',
          'status',
          '--namespace=local-path-storage',
          'deployment/local-path-provisioner',
          `--timeout=${READY_TIMEOUT}`,
        );
        // examples/pvc.yaml, and examples/pod.yaml's shape with the busybox every node has.
        await kubectl('apply', '-f', join(ROOT, 'packages/local-path/examples/pvc.yaml'));
        const pod = readFileSync(join(ROOT, 'packages/local-path/examples/pod.yaml'), 'utf8')
          .replace('image: nginx:stable-alpine', 'image: busybox')
          .replace(
            '      ports:',
            '      command: [sh, -c, "echo local-path-test > /data/test; sleep 3600"]\n      ports:',
          );
        const podFile = join(cluster.nodes[0]!.root, '..', 'pod.yaml');
        writeFileSync(podFile, pod);
        await kubectl('apply', '-f', podFile);
        await kubectl('wait', '--for=condition=Ready', 'pod/volume-test', `--timeout=${READY_TIMEOUT}`);
        const pv = (await kubectl('get', 'pvc', 'local-path-pvc', '-o', 'jsonpath={.spec.volumeName}')).trim();
        expect(
          readFileSync(
            cluster.onNode('node-1', `/opt/local-path-provisioner/${pv}_default_local-path-pvc/test`),
            'utf8',
          ),
        ).toBe('local-path-test\n');
      });

      it('local-static: deploy/ gets the DaemonSet Ready on the node', async () => {
        const cluster = await tier.start({ images: [archive('local-static')] });
        // The discovery directory of deploy/configmap.yaml, as a node prepared for it has it.
        mkdirSync(cluster.onNode('node-1', '/mnt/fast-disks'), { recursive: true });
        const kubectl = await kubectlFor(cluster);
        await kubectl(
          'apply',
          ...deploy('local-static', 'rbac.yaml', 'configmap.yaml', 'storageclass.yaml', 'daemonset.yaml'),
        );
        await kubectl(
          'rollout',
          'status',
          '--namespace=kube-system',
          'daemonset/local-volume-provisioner',
          `--timeout=${READY_TIMEOUT}`,
        );
      });
    },
    { tiers: ['node'] },
  );
}
