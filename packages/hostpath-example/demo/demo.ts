// `pnpm demo:hostpath`: the classic hostPath provisioner guide, end to end, on the in-process API server (or with
// `--real` on a real control plane from KUBEBUILDER_ASSETS). Run from the repository root after `pnpm build` (the root
// script does both): `node packages/hostpath-example/demo/demo.ts [--keep] [--real]`.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CoreV1Api,
  StorageV1Api,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { demoMain, startNodeProcess, waitFor } from '@kprov/testkit';
import { parse } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const deploy = resolve(here, '../deploy');
const PV_DIR = '/tmp/hostpath-provisioner';

async function manifest<T>(file: string): Promise<T> {
  return parse(await readFile(join(deploy, file), 'utf8')) as T;
}

demoMain(
  { dir: resolve(repo, '.kprov'), cwd: repo },
  async ({ kubeConfig: kc, kubeconfig, node, root, out, get, own, keepUp }) => {
    out(`2. The hostPath provisioner, as its pod would run it: NODE_NAME=${node}, pvDir ${PV_DIR} on the node`);
    own(
      await startNodeProcess(
        'kprov-hostpath',
        [
          'packages/hostpath-example/dist/cli.js',
          '--kubeconfig',
          kubeconfig,
          '--node-name',
          node,
          '--host-root',
          root,
          '--pv-dir',
          PV_DIR,
          '--logging-format',
          'json',
        ],
        'Started provisioner controller',
        { cwd: repo },
      ),
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
    out(`   On ${node}'s disk: ${success} ${existsSync(success) ? 'exists' : 'is MISSING'}`);
    out();
    if (!existsSync(success)) throw new Error(`${success} was not created`);

    if (
      await keepUp(['kubectl get sc,pvc,pv,pods', `kubectl delete pod ${podName} && kubectl delete pvc ${claimName}`])
    )
      return;

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
    out(
      'Done. `pnpm demo:hostpath -- --keep` keeps the cluster and the provisioner up for kubectl; `-- --real` runs it on a real control plane.',
    );
  },
);
