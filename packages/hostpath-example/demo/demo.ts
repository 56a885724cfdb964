// `pnpm demo`: the classic hostPath provisioner guide, end to end, on the in-process API server. Run from the
// repository root after `pnpm build` (the root script does both): `node packages/hostpath-example/demo/demo.ts [--keep]`.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim, type V1Pod, type V1StorageClass } from '@kubernetes/client-node';
import { kubectlGet, startNodeProcess, startServeProcess, stopProcess, waitFor, type ServeProcess } from '@kprov/testkit';
import { parse } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const deploy = resolve(here, '../deploy');
const NODE = 'node-1';
const PV_DIR = '/tmp/hostpath-provisioner';

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

async function manifest<T>(file: string): Promise<T> {
  return parse(await readFile(join(deploy, file), 'utf8')) as T;
}

export async function demo(keep: boolean): Promise<void> {
  const dir = resolve(repo, '.kprov');
  const root = join(dir, 'nodes', NODE);
  await rm(join(dir, 'nodes'), { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  let server: ServeProcess | undefined;
  let provisioner: ChildProcess | undefined;
  try {
    server = await startServeProcess({ dir, nodes: [`${NODE}=${root}`], cwd: repo });
    const { kubeConfig: kc, url, kubeconfig } = server;
    const get = async (title: string, path: string, wide = false): Promise<void> => {
      out(`$ kubectl get ${title}${wide ? ' -o wide' : ''}`);
      out(await kubectlGet(url, path, { wide }));
      out();
    };
    out(`1. An API server (${url}) with one node, ${NODE}, whose disk is ${root}`);
    out(`   kubeconfig: ${kubeconfig}`);
    out();
    await get('nodes', '/api/v1/nodes');

    out(`2. The hostPath provisioner, as its pod would run it: NODE_NAME=${NODE}, pvDir ${PV_DIR} on the node`);
    provisioner = await startNodeProcess(
      'kprov-hostpath',
      [
        'packages/hostpath-example/dist/cli.js',
        '--kubeconfig',
        kubeconfig,
        '--node-name',
        NODE,
        '--host-root',
        root,
        '--pv-dir',
        PV_DIR,
        '--logging-format',
        'json',
      ],
      'Started provisioner controller',
      { cwd: repo },
    );
    out('   started');
    out();

    const core = kc.makeApiClient(CoreV1Api);
    const storage = kc.makeApiClient(StorageV1Api);
    out('3. $ kubectl create -f deploy/class.yaml -f deploy/claim.yaml');
    await storage.createStorageClass({ body: await manifest<V1StorageClass>('class.yaml') });
    const claim = await manifest<V1PersistentVolumeClaim>('claim.yaml');
    const claimName = claim.metadata?.name ?? '';
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim });
    const bound = await waitFor('the claim to be bound', async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    });
    const pvName = bound.spec?.volumeName ?? '';
    await get('sc', '/apis/storage.k8s.io/v1/storageclasses');
    await get('pvc', '/api/v1/namespaces/default/persistentvolumeclaims');
    await get('pv', '/api/v1/persistentvolumes');

    out('4. $ kubectl create -f deploy/test-pod.yaml   (touches /mnt/SUCCESS and exits)');
    const pod = await manifest<V1Pod>('test-pod.yaml');
    const podName = pod.metadata?.name ?? '';
    await core.createNamespacedPod({ namespace: 'default', body: pod });
    await waitFor('the test pod to complete', async () => {
      const p = await core.readNamespacedPod({ name: podName, namespace: 'default' });
      if (p.status?.phase === 'Failed') throw new Error('the test pod failed');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    await get('pods', '/api/v1/namespaces/default/pods', true);
    const volumeDir = join(root, PV_DIR, pvName);
    const success = join(volumeDir, 'SUCCESS');
    out(`   On ${NODE}'s disk: ${success} ${existsSync(success) ? 'exists' : 'is MISSING'}`);
    out();
    if (!existsSync(success)) throw new Error(`${success} was not created`);

    if (keep) {
      out('The server and the provisioner stay up. Try it by hand:');
      out(`  export KUBECONFIG=${kubeconfig}`);
      out('  kubectl get sc,pvc,pv,pods');
      out(`  kubectl delete pod ${podName} && kubectl delete pvc ${claimName}`);
      out('Press Ctrl-C to stop.');
      await new Promise<void>((ok) => {
        process.once('SIGINT', () => ok());
        process.once('SIGTERM', () => ok());
      });
      return;
    }

    out(`5. $ kubectl delete pod ${podName} && kubectl delete pvc ${claimName}`);
    await core.deleteNamespacedPod({ name: podName, namespace: 'default' });
    await core.deleteNamespacedPersistentVolumeClaim({ name: claimName, namespace: 'default' });
    await waitFor('the PV and its directory to go', async () => {
      const pvs = await core.listPersistentVolume();
      return pvs.items.length === 0 && !existsSync(volumeDir) ? true : undefined;
    });
    await get('pv', '/api/v1/persistentvolumes');
    out(`   ${volumeDir} is gone.`);
    out();
    out('Done. `pnpm demo -- --keep` keeps the server and the provisioner up for kubectl.');
  } finally {
    await stopProcess(provisioner);
    await server?.stop();
  }
}

const { values } = parseArgs({ args: process.argv.slice(2).filter((a) => a !== '--'), options: { keep: { type: 'boolean' } } });
demo(values.keep === true).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
