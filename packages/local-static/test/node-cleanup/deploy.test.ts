/**
 * The node-cleanup controller's manifests (deploy/node-cleanup/) and the chart's opt-in `nodeCleanup` (rendered by
 * helm itself): the Deployment runs the image's `node-cleanup` command with a command line it takes, as the
 * ServiceAccount its RBAC binds, with upstream's rules; the chart renders none of it unless enabled, keeps its pods
 * out of the DaemonSet's selector, and refuses to enable it without classes.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helmTemplate } from '@kprov/testkit';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseNodeCleanupCommandLine, type NodeCleanupCommandOptions } from '../../src/node-cleanup/options.js';

type Obj = { kind: string; metadata?: { name?: string; namespace?: string }; [k: string]: unknown };
interface PodSpec {
  serviceAccountName: string;
  securityContext: { runAsNonRoot: boolean };
  containers: {
    args: string[];
    ports: { name: string; containerPort: number }[];
    readinessProbe: { httpGet: { path: string; port: string } };
  }[];
}
interface Workload {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const CHART = `${DEPLOY}chart/local-static-provisioner`;

/** Upstream's rules, with `patch` on events (a repeated Event is patched). */
const RULES: Rule[] = [
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'watch', 'delete'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'delete'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

function load(file: string): Obj[] {
  return parseAllDocuments(readFileSync(`${DEPLOY}${file}`, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}

/** Checks that the Deployment runs `node-cleanup` as the ServiceAccount bound to upstream's rules; returns its options. */
function checkDeployment(deployment: Obj, rbac: Obj[]): NodeCleanupCommandOptions {
  const pod = (deployment as unknown as Workload).spec.template.spec;
  const container = pod.containers[0]!;
  expect(container.args[0]).toBe('node-cleanup');
  const line = parseNodeCleanupCommandLine(container.args.slice(1), {});
  if (line.kind !== 'run') throw new Error(`the Deployment's command line is refused: ${line.stderr ?? ''}`);
  const port = Number(line.options.listenAddress.split(':').pop());
  expect(container.ports).toEqual([{ name: 'metrics', containerPort: port }]);
  expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  expect(pod.securityContext.runAsNonRoot).toBe(true);
  const account = rbac.find((o) => o.kind === 'ServiceAccount');
  expect(account?.metadata?.name).toBe(pod.serviceAccountName);
  const role = rbac.find((o) => o.kind === 'ClusterRole')!;
  expect(role.rules).toEqual(RULES);
  expect(rbac.find((o) => o.kind === 'ClusterRoleBinding')).toMatchObject({
    subjects: [{ kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: deployment.metadata?.namespace }],
    roleRef: { kind: 'ClusterRole', name: role.metadata?.name },
  });
  return line.options;
}

describe('deploy/node-cleanup/', () => {
  it("runs the image's node-cleanup command for the StorageClass of deploy/, with upstream's RBAC", () => {
    const [deployment] = load('node-cleanup/deployment.yaml');
    const [storageClass] = load('storageclass.yaml');
    expect(deployment).toMatchObject({ kind: 'Deployment', spec: { replicas: 1, strategy: { type: 'Recreate' } } });
    const options = checkDeployment(deployment!, load('node-cleanup/rbac.yaml'));
    expect(options).toMatchObject({
      storageClassNames: [storageClass!.metadata!.name],
      pvcDeletionDelayMs: 60_000,
      staleVolumeDiscoveryIntervalMs: 10_000,
    });
  });
});

describe("the Helm chart's nodeCleanup", () => {
  it('renders nothing of it unless enabled', async () => {
    const objects = (await helmTemplate(CHART, { releaseName: 'lsp', namespace: 'kube-system' })) as unknown as Obj[];
    expect(objects.filter((o) => o.metadata?.name?.includes('node-cleanup'))).toEqual([]);
  });

  it('renders the Deployment and its RBAC from the values, out of the DaemonSet’s selector', async () => {
    const objects = (await helmTemplate(CHART, {
      releaseName: 'lsp',
      namespace: 'storage',
      values: {
        nodeCleanup: {
          enabled: true,
          storageClassNames: ['fast-disks', 'nvme'],
          pvcDeletionDelay: '5m',
          resync: '1m',
          port: 9090,
          extraArgs: ['-v=4'],
        },
      },
    })) as unknown as Obj[];
    const ours = objects.filter((o) => o.metadata?.name === 'lsp-local-static-provisioner-node-cleanup');
    expect(ours.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'ServiceAccount',
    ]);
    const deployment = ours.find((o) => o.kind === 'Deployment')!;
    const options = checkDeployment(deployment, ours);
    expect(options).toMatchObject({
      storageClassNames: ['fast-disks', 'nvme'],
      pvcDeletionDelayMs: 300_000,
      resyncMs: 60_000,
      listenAddress: ':9090',
      verbosity: 4,
    });
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet') as unknown as Workload;
    const podLabels = (deployment as unknown as Workload).spec.template.metadata.labels;
    const selected = Object.entries(daemonSet.spec.selector.matchLabels).every(([k, v]) => podLabels[k] === v);
    expect(selected).toBe(false);
  });

  it('refuses to enable it without StorageClasses, saying which value to set', async () => {
    await expect(
      helmTemplate(CHART, { releaseName: 'lsp', namespace: 'kube-system', set: { 'nodeCleanup.enabled': true } }),
    ).rejects.toThrow(/nodeCleanup.storageClassNames: list the StorageClasses/);
  });
});
