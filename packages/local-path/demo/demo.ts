// `pnpm demo`: the local-path provisioner's walkthrough, end to end, on the in-process API server, or with `--real`
// on a real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler from KUBEBUILDER_ASSETS)
// with the simulated kubelet. Run from the repository root after `pnpm build` (the root script does both):
// `node packages/local-path/demo/demo.ts [--keep] [--real]`.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  CoreV1Api,
  StorageV1Api,
  type V1ConfigMap,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1ServiceAccount,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { demoMain, startNodeProcess, waitFor } from '@kprov/testkit';
import { parse, parseAllDocuments } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const pkg = resolve(here, '..');
const NAMESPACE = 'local-path-storage';
const BASE_PATH = '/opt/local-path-provisioner';
const CONTENT = 'local-path-test';

async function manifest<T>(file: string): Promise<T> {
  return parse(await readFile(join(pkg, file), 'utf8')) as T;
}

/** The objects of a multi-document manifest, by kind. */
async function manifests(file: string): Promise<{ kind?: string; metadata?: { name?: string } }[]> {
  const docs = parseAllDocuments(await readFile(join(pkg, file), 'utf8'));
  return docs.map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } }).filter((o) => o !== null);
}

/** Creates an object; one that exists already (409) is left as it is. */
async function create(what: () => Promise<unknown>): Promise<void> {
  try {
    await what();
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
}

/** The PV's node affinity, one `key in (values)` line per expression, as `kubectl describe pv` prints it. */
function affinity(pv: V1PersistentVolume): string[] {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  return terms.flatMap((t, i) => [
    `     Term ${i}:`,
    ...(t.matchExpressions ?? []).map(
      (e) => `       ${e.key} ${e.operator.toLowerCase()} [${(e.values ?? []).join(', ')}]`,
    ),
  ]);
}

demoMain(
  { dir: resolve(repo, '.kprov'), cwd: repo },
  async ({ kubeConfig: kc, kubeconfig, node, root, out, get, own, keepUp }) => {
    const core = kc.makeApiClient(CoreV1Api);
    const storage = kc.makeApiClient(StorageV1Api);

    out(
      '2. $ kubectl apply -f deploy/local-path-storage.yaml   (the objects the provisioner reads: namespace, ServiceAccount, ConfigMap, StorageClass)',
    );
    await create(() => core.createNamespace({ body: { metadata: { name: NAMESPACE } } }));
    const objects = await manifests('deploy/local-path-storage.yaml');
    // The helper pods run as this account; a real server refuses pods whose account does not exist.
    const account = objects.find((o): o is V1ServiceAccount => o.kind === 'ServiceAccount');
    if (account !== undefined) {
      await create(() => core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: account }));
    }
    const configMap = objects.find(
      (o): o is V1ConfigMap => o.kind === 'ConfigMap' && o.metadata?.name === 'local-path-config',
    );
    const storageClass = objects.find(
      (o): o is V1StorageClass => o.kind === 'StorageClass' && o.metadata?.name === 'local-path',
    );
    if (configMap === undefined || storageClass === undefined)
      throw new Error('deploy/local-path-storage.yaml lacks local-path-config or local-path');
    await create(() => core.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap }));
    await create(() => storage.createStorageClass({ body: storageClass }));
    await get(`configmaps -n ${NAMESPACE}`, `/api/v1/namespaces/${NAMESPACE}/configmaps`);
    await get('sc', '/apis/storage.k8s.io/v1/storageclasses');

    out(`3. The provisioner, as its Deployment would run it (config from the ConfigMap, helper pods in ${NAMESPACE}):`);
    out(`   $ local-path-provisioner start --kubeconfig ${kubeconfig} --namespace ${NAMESPACE}`);
    own(
      await startNodeProcess(
        'local-path-provisioner',
        [
          'packages/local-path/dist/cli.js',
          'start',
          '--kubeconfig',
          kubeconfig,
          '--namespace',
          NAMESPACE,
          '--health-port',
          '0',
          '--logging-format',
          'json',
        ],
        'Started provisioner controller',
        { cwd: repo },
      ),
    );
    out('   started');
    out();

    out('4. $ kubectl create -f examples/pvc.yaml');
    const claim = await manifest<V1PersistentVolumeClaim>('examples/pvc.yaml');
    const claimName = claim.metadata?.name ?? '';
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim });
    await sleep(500);
    await get('pvc', '/api/v1/namespaces/default/persistentvolumeclaims');
    out('   Pending: the class binds WaitForFirstConsumer, so nothing is provisioned until a pod uses the claim.');
    out();

    const pod = await manifest<V1Pod>('examples/pod.yaml');
    const podName = pod.metadata?.name ?? '';
    const container = pod.spec?.containers[0];
    const mountPath = container?.volumeMounts?.[0]?.mountPath ?? '/data';
    if (container !== undefined) container.command = ['sh', '-c', `echo ${CONTENT} > ${mountPath}/test && sleep 3600`];
    out(
      `5. $ kubectl create -f examples/pod.yaml   (its container runs: sh -c 'echo ${CONTENT} > ${mountPath}/test && sleep 3600')`,
    );
    await core.createNamespacedPod({ namespace: 'default', body: pod });
    const bound = await waitFor('the claim to be bound', async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    });
    const pvName = bound.spec?.volumeName ?? '';
    await waitFor('the pod to run', async () => {
      const p = await core.readNamespacedPod({ name: podName, namespace: 'default' });
      if (p.status?.phase === 'Failed') throw new Error('the pod failed');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    await get('pvc', '/api/v1/namespaces/default/persistentvolumeclaims');
    await get('pv', '/api/v1/persistentvolumes', true);
    const pv = await core.readPersistentVolume({ name: pvName });
    const volumePath = pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';
    out(`$ kubectl describe pv ${pvName}   (excerpt)`);
    out(`   Path: ${volumePath}`);
    out('   Node Affinity (required):');
    for (const line of affinity(pv)) out(line);
    out();
    await get('pods', '/api/v1/namespaces/default/pods', true);

    const expected = join(BASE_PATH, `${pvName}_default_${claimName}`);
    if (volumePath !== expected) throw new Error(`the volume is at ${volumePath}, not ${expected}`);
    const volumeDir = join(root, volumePath);
    const file = join(volumeDir, 'test');
    const content = await waitFor('the test file', async () => (existsSync(file) ? readFile(file, 'utf8') : undefined));
    out(`6. On ${node}'s disk: $ cat ${file}`);
    out(`   ${content.trimEnd()}`);
    out();
    if (content.trim() !== CONTENT) throw new Error(`${file} holds ${JSON.stringify(content)}`);

    const hints = [
      'kubectl get sc,pvc,pv,pods',
      `kubectl get pods -n ${NAMESPACE} -w   # the helper pods, while volumes are created and deleted`,
      `kubectl delete pod ${podName} && kubectl delete pvc ${claimName}`,
    ];
    if (await keepUp(hints)) return;

    out(`7. $ kubectl delete pod ${podName} && kubectl delete pvc ${claimName}`);
    out(
      `   (reclaimPolicy Delete: the provisioner runs the teardown script in a helper pod on ${node}, then deletes the PV)`,
    );
    await core.deleteNamespacedPod({ name: podName, namespace: 'default' });
    await waitFor('the pod to go', async () => {
      const pods = await core.listNamespacedPod({ namespace: 'default' });
      return pods.items.length === 0 ? true : undefined;
    });
    await core.deleteNamespacedPersistentVolumeClaim({ name: claimName, namespace: 'default' });
    await waitFor('the PV and its directory to go', async () => {
      const pvs = await core.listPersistentVolume();
      return pvs.items.length === 0 && !existsSync(volumeDir) ? true : undefined;
    });
    await get('pvc', '/api/v1/namespaces/default/persistentvolumeclaims');
    await get('pv', '/api/v1/persistentvolumes');
    await get(`pods -n ${NAMESPACE}`, `/api/v1/namespaces/${NAMESPACE}/pods`);
    out(`   ${volumeDir} is gone.`);
    out();
    out(
      'Done. `pnpm demo -- --keep` keeps the server and the provisioner up for kubectl; `pnpm demo -- --real` runs the same on a real control plane ' +
        '(KUBEBUILDER_ASSETS); `pnpm demo:hostpath` runs the classic hostPath guide.',
    );
  },
);
