/**
 * deploy/kutti/provisioner-localvolume.yaml run as its DaemonSet runs it, on either tier: the container's command and
 * kutti's environment (KUTTI_NODE_NAME, KUTTI_ROOT_PATH, no ConfigMap), with the manifest's two StorageClasses:
 * kutti-delete removes a volume with its claim, kutti-retain keeps the PV and the data.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubernetesObject, type V1Container } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { claim, getVolume, NAMESPACE, volumeTestPod, WAIT, waitBound, waitSucceeded } from '../provisioner/helpers.js';
import { runMain, startKit, waitStarted, type Kit } from './harness.js';

const MANIFEST = fileURLToPath(new URL('../../deploy/kutti/provisioner-localvolume.yaml', import.meta.url));
const docs = parseAllDocuments(readFileSync(MANIFEST, 'utf8')).map(
  (d) => d.toJS() as KubernetesObject & { spec?: { template?: { spec?: { containers?: V1Container[] } } } },
);
const container = docs.find((d) => d.kind === 'DaemonSet')!.spec!.template!.spec!.containers![0]!;
const rootPath = container.env!.find((e) => e.name === 'KUTTI_ROOT_PATH')!.value!;

/** The DaemonSet's pod on `node`: its command after `start`, its environment, the node's disk as the host root. */
function runDaemonSetPod(k: Kit, node: string): ReturnType<typeof runMain> {
  const [, start, ...args] = container.command!;
  expect(start).toBe('start');
  const env: Record<string, string> = { KUTTI_NODE_NAME: node, POD_NAMESPACE: NAMESPACE };
  for (const e of container.env ?? []) if (e.value !== undefined && e.name !== 'HEALTH_PORT') env[e.name] = e.value;
  const root = k.cluster.nodes.find((n) => n.name === node)!.root;
  return runMain(k.kubeconfig, [...args, '--host-root', root], env);
}

async function useClaim(k: Kit, name: string, className: string): Promise<{ pvName: string; dir: string }> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name, className) });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
  const pvName = await waitBound(k, name);
  await waitSucceeded(k, `pod-${name}`);
  const pv = (await getVolume(k, pvName))!;
  expect(pv.spec?.local?.path).toBe(`${rootPath}/${pvName}_default_${name}`);
  return { pvName, dir: k.cluster.onNode('node-1', pv.spec!.local!.path) };
}

async function deleteClaim(k: Kit, name: string): Promise<void> {
  await k.core.deleteNamespacedPod({ name: `pod-${name}`, namespace: 'default', gracePeriodSeconds: 0 });
  await k.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
}

describeTiers('deploy/kutti/provisioner-localvolume.yaml', () => {
  it("runs with kutti's environment; kutti-delete removes the volume, kutti-retain keeps it", async () => {
    const k = await startKit({ withConfigMap: false, withClass: false });
    const api = KubernetesObjectApi.makeApiClient(k.cluster.kubeConfig);
    for (const doc of docs.filter((d) => d.kind === 'StorageClass')) await api.create(doc);
    const program = runDaemonSetPod(k, 'node-1');
    await waitStarted(program);
    expect(program.messages()).toContain('Provisioner started in node mode on node-1');

    const deleted = await useClaim(k, 'scratch', 'kutti-delete');
    expect((await getVolume(k, deleted.pvName))?.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(
      'kuttiproject/provisioner-localvolume',
    );
    expect(readFileSync(`${deleted.dir}/test`, 'utf8')).toBe('local-path-test\n');
    await deleteClaim(k, 'scratch');
    await vi.waitFor(async () => {
      expect(await getVolume(k, deleted.pvName)).toBeUndefined();
      expect(existsSync(deleted.dir)).toBe(false);
    }, WAIT);

    const kept = await useClaim(k, 'keep', 'kutti-retain');
    await deleteClaim(k, 'keep');
    await vi.waitFor(async () => expect((await getVolume(k, kept.pvName))?.status?.phase).toBe('Released'), WAIT);
    expect(readFileSync(`${kept.dir}/test`, 'utf8')).toBe('local-path-test\n');
  });
});
