/**
 * The node-mode manifest and the chart with `mode: node`, applied to a cluster of either tier and run: every object
 * but the Namespace and the DaemonSet is created, the ConfigMap is laid out as the kubelet mounts it, and the
 * DaemonSet's command runs (main(), as its ServiceAccount on the real tier, so the RBAC is the manifest's; the testkit
 * has no RBAC) with the
 * node's disk as its host root. A claim of the StorageClass is provisioned on the node, without any pod created in
 * the namespace, and deleted again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubernetesObject, type V1Container } from '@kubernetes/client-node';
import { helmTemplate } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { publishConfigMapVolume } from '../main/configmap-volume.js';
import { runMain, startKit, waitStarted } from '../main/harness.js';
import { claim, getVolume, NAMESPACE, volumeTestPod, WAIT, waitBound, waitSucceeded } from '../provisioner/helpers.js';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));

type Doc = KubernetesObject & {
  data?: Record<string, string>;
  provisioner?: string;
  spec?: { template?: { spec?: { serviceAccountName?: string; containers?: V1Container[] } } };
};

const SOURCES: [string, () => Promise<Doc[]>][] = [
  [
    'deploy/local-path-storage-node-mode.yaml',
    async () =>
      parseAllDocuments(readFileSync(path.join(packageDir, 'deploy/local-path-storage-node-mode.yaml'), 'utf8')).map(
        (d) => d.toJS() as Doc,
      ),
  ],
  [
    'the chart with mode: node',
    () =>
      helmTemplate(path.join(packageDir, 'deploy/chart/local-path-provisioner'), {
        releaseName: 'local-path-provisioner',
        namespace: NAMESPACE,
        values: { mode: 'node' },
      }),
  ],
];

describeTiers('node mode manifests, applied and run', () => {
  it.each(SOURCES)('%s provisions a claim on its node', async (_, load) => {
    const docs = await load();
    const k = await startKit({ withConfigMap: false, withClass: false });
    const api = KubernetesObjectApi.makeApiClient(k.cluster.kubeConfig);
    const rbac = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
    for (const doc of docs) {
      if (doc.kind === 'Namespace' || doc.kind === 'DaemonSet') continue;
      // The testkit authorizes nothing (and serves no RBAC API): the RBAC is checked on the real tier.
      if (k.cluster.controlPlane === undefined && rbac.includes(doc.kind ?? '')) continue;
      // startKit made the ServiceAccount of deploy/local-path-storage.yaml already.
      await api.create(doc).catch((err: unknown) => {
        if (!String(err).includes('AlreadyExists')) throw err;
      });
    }
    const ds = docs.find((d) => d.kind === 'DaemonSet')!;
    const container = ds.spec!.template!.spec!.containers![0]!;
    const configMap = docs.find((d) => d.kind === 'ConfigMap')!;
    const mounted = path.join(k.dir, 'config');
    await publishConfigMapVolume(mounted, configMap.data!);

    let kubeconfig = k.kubeconfig;
    const cp = k.cluster.controlPlane;
    if (cp !== undefined) {
      const kc = await cp.serviceAccountKubeConfig(NAMESPACE, ds.spec!.template!.spec!.serviceAccountName!);
      kubeconfig = path.join(k.dir, 'daemonset.kubeconfig');
      await writeFile(kubeconfig, kc.exportConfig(), { mode: 0o600 });
    }
    const command = [...(container.command ?? []), ...(container.args ?? [])];
    const args = command
      .slice(command.indexOf('start') + 1)
      .map((a) => (a.startsWith('/etc/config/') ? path.join(mounted, a.slice('/etc/config/'.length)) : a));
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (field === 'spec.nodeName') env[e.name] = 'node-1';
      else if (field === 'metadata.namespace') env[e.name] = NAMESPACE;
      else if (e.value !== undefined && e.name !== 'HEALTH_PORT') env[e.name] = e.value;
    }
    const program = runMain(kubeconfig, [...args, '--host-root', k.cluster.nodes[0]!.root], env);
    await waitStarted(program);

    const className = docs.find((d) => d.kind === 'StorageClass')!.metadata!.name!;
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('data', className) });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod('data', 'pod-data') });
    const pvName = await waitBound(k, 'data');
    await waitSucceeded(k, 'pod-data');
    const dir = k.cluster.onNode('node-1', (await getVolume(k, pvName))!.spec!.hostPath!.path);
    expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
    expect(await k.read.pods(NAMESPACE)).toEqual([]);

    await k.core.deleteNamespacedPod({ name: 'pod-data', namespace: 'default', gracePeriodSeconds: 0 });
    await k.core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
    await vi.waitFor(async () => {
      expect(await getVolume(k, pvName)).toBeUndefined();
      expect(existsSync(dir)).toBe(false);
    }, WAIT);
  });
});
