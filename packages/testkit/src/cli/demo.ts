import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubectlGet } from '../format/kubectl-get.js';
import { waitFor } from '../process/wait-for.js';
import type { Testkit } from '../testkit.js';
import { startForCli, untilSignal } from './serve.js';

export interface DemoOptions {
  /** Stay up after the walkthrough. */
  keep: boolean;
  /** Working folder for the kubeconfig and node roots. */
  dir: string;
}

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

/** Prints what `kubectl get <path>` would, through the server's Table output. */
async function get(kit: Testkit, title: string, path: string, wide = false): Promise<void> {
  out(`$ kubectl get ${title}${wide ? ' -o wide' : ''}`);
  out(await kubectlGet(kit.url, path, { wide }));
  out();
}

/** `kprov-testkit demo`: shows the API server and its simulated binder, scheduler and kubelet at work. */
export async function demo(options: DemoOptions): Promise<number> {
  const dir = resolve(options.dir);
  await rm(join(dir, 'nodes'), { recursive: true, force: true });
  const kubeconfig = join(dir, 'kubeconfig');
  const kit = await startForCli({
    port: 0,
    kubeconfigOut: kubeconfig,
    nodes: [],
    binder: true,
    scheduler: true,
    kubelet: true,
  });
  try {
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    const node = kit.nodes[0];
    if (node === undefined) throw new Error('no node');
    out(`1. An API server at ${kit.url}, kubeconfig in ${kubeconfig}, node ${node.name} rooted at ${node.root}`);
    out();
    await get(kit, 'nodes', '/api/v1/nodes');

    out('2. A static hostPath PV and a claim without a class: the PV binder binds them.');
    await core.createPersistentVolume({
      body: {
        metadata: { name: 'demo-pv' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          hostPath: { path: '/data/demo-pv', type: 'DirectoryOrCreate' },
        },
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'demo-claim' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } },
      },
    });
    await waitFor('the claim to bind', async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'demo-claim', namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    });
    await get(kit, 'pv', '/api/v1/persistentvolumes');
    await get(kit, 'pvc', '/api/v1/namespaces/default/persistentvolumeclaims');

    out('3. A pod that writes into the claim: the scheduler places it, the kubelet runs its shell command.');
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'demo-writer' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'writer',
              image: 'busybox',
              command: ['sh', '-c', 'echo "hello from a pod" > /data/hello.txt && echo wrote hello.txt'],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'demo-claim' } }],
        },
      },
    });
    await waitFor('the pod to finish', async () => {
      const p = await core.readNamespacedPod({ name: 'demo-writer', namespace: 'default' });
      const phase = p.status?.phase;
      if (phase === 'Failed') throw new Error('the demo pod failed');
      return phase === 'Succeeded' ? p : undefined;
    });
    await get(kit, 'pods', '/api/v1/namespaces/default/pods', true);
    out('$ kubectl logs demo-writer');
    out((await core.readNamespacedPodLog({ name: 'demo-writer', namespace: 'default' })).trimEnd());
    out();
    const file = join(node.root, 'data', 'demo-pv', 'hello.txt');
    out(`On the node's disk, ${file}:`);
    out(`  ${(await readFile(file, 'utf8')).trim()}`);
    out();

    out('4. Deleting the pod and the claim: the PV is Released.');
    await core.deleteNamespacedPod({ name: 'demo-writer', namespace: 'default' });
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'demo-claim', namespace: 'default' });
    await waitFor('the PV to be released', async () => {
      const pv = await core.readPersistentVolume({ name: 'demo-pv' });
      return pv.status?.phase === 'Released' ? pv : undefined;
    });
    await get(kit, 'pv', '/api/v1/persistentvolumes');

    if (options.keep) {
      out('The server stays up. Point kubectl at it:');
      out(`  export KUBECONFIG=${kubeconfig}`);
      out('  kubectl get nodes,pv,pvc,pods -A');
      out('Press Ctrl-C to stop.');
      await untilSignal();
    } else {
      out('Done. Run `pnpm demo -- --keep` to keep the server up and try kubectl against it.');
    }
    return 0;
  } finally {
    await kit.stop();
  }
}
