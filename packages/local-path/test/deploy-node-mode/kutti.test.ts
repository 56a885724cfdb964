/**
 * kuttiproject/provisioner-localvolume's own manifest with our image, `kubectl apply -f
 * deploy/kutti/provisioner-localvolume.yaml` unchanged, on two real nodes where kutti ran before: its Deployment's pod
 * (our image, no arguments, kutti's environment) runs and stays up; a claim of kutti's default class used on that pod's
 * node gets a `local` PV with the node affinity kutti writes, below kutti's root path on that node's disk; the PVs
 * kutti made (its annotations, `<root>/<PV name>`) are deleted with their directories when their claims go, on the
 * pod's node, and left alone on the other node, as kutti leaves them; the pod stops with exit code 0 on SIGTERM. The
 * same file made a DaemonSet, as the docs say for clusters of several nodes, provisions on each node. The image run
 * without arguments and without kutti's environment fails, and `kubectl logs` says what to pass.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { NO_COMMAND_MESSAGE } from '../../src/cli/options.js';
import { KUTTI_PROVISIONER_NAME } from '../../src/executor/node/kutti.js';
import { claim } from '../provisioner/helpers.js';
import {
  ARCHIVE,
  IMAGE,
  deleteClaim,
  describeWithImage,
  expectGracefulStop,
  PACKAGE,
  podsByNode,
  ROOT,
  POD_TIMEOUT,
  ROLLOUT_TIMEOUT,
  toolsFor,
  useClaimOn,
  waitForLog,
} from './helpers.js';

const NAMESPACE = 'kube-system';
const ROOT_PATH = '/kutti/vols';
/** docs/local-path.md's command for a provisioner on every node: the same file, its Deployment made a DaemonSet. */
const AS_DAEMONSET =
  "sed -e 's/^kind: Deployment$/kind: DaemonSet/' -e '/^  replicas: 1$/d' " +
  'packages/local-path/deploy/kutti/provisioner-localvolume.yaml | kubectl apply -f -';

/** kutti's PV for `claimName`, as kutti v0.2.2 and its provisioner library save it (PV name `pvc-<claim uid>`). */
function kuttiVolume(pvName: string, node: string, claimName: string, claimUid: string): V1PersistentVolume {
  return {
    metadata: {
      name: pvName,
      annotations: {
        'kuttiproject.org/provisionedBy': KUTTI_PROVISIONER_NAME,
        'kuttiproject.org/provisionedOn': node,
        'pv.kubernetes.io/provisioned-by': KUTTI_PROVISIONER_NAME,
      },
    },
    spec: {
      persistentVolumeReclaimPolicy: 'Delete',
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '128Mi' },
      local: { path: `${ROOT_PATH}/${pvName}` },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: 'default',
        name: claimName,
        uid: claimUid,
      },
      storageClassName: 'kutti-delete',
    },
  };
}

/**
 * What kutti left on `node` for claim `name`: the claim, bound to kutti's PV, and the directory `<root>/<PV name>`
 * (mode 0755, as kutti makes it) holding a file. Resolves with the PV name and the directory on this machine.
 */
async function madeByKutti(
  cluster: Cluster,
  kubectl: (...args: string[]) => Promise<string>,
  name: string,
  node: string,
): Promise<{ pvName: string; dir: string }> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const made = await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: claim(name, 'kutti-delete'),
  });
  const pvName = `pvc-${made.metadata!.uid!}`;
  const dir = cluster.onNode(node, `${ROOT_PATH}/${pvName}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, 'data'), 'written while kutti ran\n');
  await core.createPersistentVolume({ body: kuttiVolume(pvName, node, name, made.metadata!.uid!) });
  await kubectl('wait', '--for=jsonpath={.status.phase}=Bound', `pvc/${name}`, `--timeout=${POD_TIMEOUT}`);
  return { pvName, dir };
}

describeWithImage("kutti's manifest with our image, on two real nodes", (tier) => {
  it('runs as kutti: local PVs on its node, kutti’s own PVs deleted on their node, a clean stop', async () => {
    const cluster = await tier.start({ nodes: [{ name: 'node-1' }, { name: 'node-2' }], images: [ARCHIVE] });
    const { kubectl } = await toolsFor(cluster);
    const read = new ObjectReader(cluster.kubeConfig);
    await kubectl('apply', '-f', path.join(PACKAGE, 'deploy/kutti/provisioner-localvolume.yaml'));
    await kubectl(
      'rollout',
      'status',
      `--namespace=${NAMESPACE}`,
      'deployment/kutti-provisioner',
      `--timeout=${ROLLOUT_TIMEOUT}`,
    );
    const pods = await podsByNode(cluster, NAMESPACE, 'app.kubernetes.io/name=provisioner-localvolume');
    expect(pods.size).toBe(1);
    const [here, pod] = [...pods][0]!;
    const there = here === 'node-1' ? 'node-2' : 'node-1';
    const podName = pod.metadata!.name!;
    // Without a readiness probe a running container is Ready: the log says the provisioner started.
    const started = await waitForLog(kubectl, NAMESPACE, podName, `Provisioner started in node mode on ${here}`);
    expect(started).toContain(`provisioner="${KUTTI_PROVISIONER_NAME}"`);

    const kuttiHere = await madeByKutti(cluster, kubectl, 'kutti-here', here);
    const kuttiThere = await madeByKutti(cluster, kubectl, 'kutti-there', there);

    const pvName = await useClaimOn(cluster, kubectl, 'fresh', 'kutti-delete', here);
    const pv = (await read.volume(pvName))!;
    const nodePath = `${ROOT_PATH}/${pvName}_default_fresh`;
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(KUTTI_PROVISIONER_NAME);
    expect(pv.spec?.hostPath).toBeUndefined();
    expect(pv.spec).toMatchObject({
      local: { path: nodePath },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [here] }] },
          ],
        },
      },
    });
    expect(readFileSync(cluster.onNode(here, `${nodePath}/test`), 'utf8')).toBe('local-path-test\n');

    // kutti's PV of the other node is released first: it stays, PV and directory, as kutti leaves it; the volumes
    // deleted after it (kutti's of the pod's node, then the new one) are gone with their directories.
    await kubectl('delete', 'pvc', 'kutti-there', '--wait=false');
    await kubectl(
      'wait',
      '--for=jsonpath={.status.phase}=Released',
      `pv/${kuttiThere.pvName}`,
      `--timeout=${POD_TIMEOUT}`,
    );
    await kubectl('delete', 'pvc', 'kutti-here', '--wait=false');
    await kubectl('wait', '--for=delete', `pv/${kuttiHere.pvName}`, `--timeout=${POD_TIMEOUT}`);
    expect(existsSync(kuttiHere.dir)).toBe(false);
    await deleteClaim(kubectl, 'fresh', pvName);
    expect(existsSync(cluster.onNode(here, nodePath))).toBe(false);
    expect((await read.volume(kuttiThere.pvName))?.status?.phase).toBe('Released');
    expect(readFileSync(path.join(kuttiThere.dir, 'data'), 'utf8')).toBe('written while kutti ran\n');

    const running = (await read.pod(podName, NAMESPACE))!;
    expect(running.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    await expectGracefulStop(cluster, NAMESPACE, podName);
    // Node mode elects no leader, though kutti's role would allow it.
    expect((await read.leases(NAMESPACE)).map((l) => l.metadata?.name)).not.toContain(
      'kuttiproject-provisioner-localvolume',
    );
  });

  it('as a DaemonSet (the docs’ sed of the same file), each node’s pod makes that node’s volumes', async () => {
    const nodes = ['node-1', 'node-2'];
    const cluster = await tier.start({ nodes: nodes.map((name) => ({ name })), images: [ARCHIVE] });
    const { kubectl, kubeconfig } = await toolsFor(cluster);
    // kutti's Deployment first, as a cluster switched from kutti has it; then the docs' commands.
    await kubectl('apply', '-f', path.join(PACKAGE, 'deploy/kutti/provisioner-localvolume.yaml'));
    await kubectl('-n', NAMESPACE, 'delete', 'deployment', 'kutti-provisioner');
    await promisify(execFile)('sh', ['-c', AS_DAEMONSET], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    await kubectl(
      'rollout',
      'status',
      `--namespace=${NAMESPACE}`,
      'daemonset/kutti-provisioner',
      `--timeout=${ROLLOUT_TIMEOUT}`,
    );
    const pods = await podsByNode(cluster, NAMESPACE, 'app.kubernetes.io/name=provisioner-localvolume', 'DaemonSet');
    expect([...pods.keys()].sort()).toEqual(nodes);
    for (const [node, pod] of pods)
      await waitForLog(kubectl, NAMESPACE, pod.metadata!.name!, `Provisioner started in node mode on ${node}`);
    for (const node of nodes) {
      const pvName = await useClaimOn(cluster, kubectl, `data-${node}`, 'kutti-delete', node);
      const dir = cluster.onNode(node, `${ROOT_PATH}/${pvName}_default_data-${node}`);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteClaim(kubectl, `data-${node}`, pvName);
      expect(existsSync(dir)).toBe(false);
    }
  });

  it('run without arguments outside kutti, the image exits 2 and its log says what to pass', async () => {
    const cluster = await tier.start({ nodes: [{ name: 'node-1' }], images: [ARCHIVE] });
    const { kubectl } = await toolsFor(cluster);
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'no-arguments' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'provisioner', image: IMAGE }] },
      },
    });
    await kubectl('wait', '--for=jsonpath={.status.phase}=Failed', 'pod/no-arguments', `--timeout=${POD_TIMEOUT}`);
    const pod = await new ObjectReader(cluster.kubeConfig).pod('no-arguments');
    const status = pod?.status?.containerStatuses?.[0]?.state?.terminated;
    expect(status?.exitCode).toBe(2);
    const log = (await kubectl('logs', 'no-arguments')).trimEnd().split('\n');
    expect(log[0]).toBe('NAME:');
    expect(log.at(-1)).toBe(`Usage error, please check your command: ${NO_COMMAND_MESSAGE}`);
  });
});
