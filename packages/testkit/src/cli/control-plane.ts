import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { startControlPlane } from '../control-plane/control-plane.js';
import { startKubelet, type Kubelet } from '../hollow-node/start.js';
import { printKubelet } from './kubelet.js';
import { parseNodeFlag, untilSignal } from './serve.js';

/** Options of `kprov-testkit control-plane`. */
export interface ControlPlaneCliOptions {
  /** Where to write the administrator's kubeconfig. */
  kubeconfigOut: string;
  /** `false`: do not run kube-controller-manager. Default: run it when the folder holds it. */
  controllerManager?: boolean;
  /** `false`: do not run kube-scheduler. Default: run it when the folder holds it. */
  scheduler?: boolean;
  /** CRD files and folders to install (`--crd`). Default none. */
  crdPaths?: readonly string[];
  /** `NAME` or `NAME=ROOTDIR`; a kubelet runs for them when there are any. */
  nodes: readonly string[];
  /** kube-controller-manager's `--controllers`. Default: `startControlPlane`'s. */
  controllers?: string;
}

/** `kprov-testkit control-plane`: a real control plane (and a kubelet for the nodes) until a signal. */
export async function controlPlaneCommand(options: ControlPlaneCliOptions): Promise<number> {
  const out = resolve(options.kubeconfigOut);
  const base = resolve(out, '..');
  const nodes = options.nodes.map((n) => parseNodeFlag(n, base));
  for (const n of nodes) if (n.root !== undefined) await mkdir(n.root, { recursive: true });
  const say = (line: string): void => void process.stdout.write(`kprov-testkit: ${line}\n`);
  const started = Date.now();
  const cp = await startControlPlane({
    ...(options.controllerManager === undefined ? {} : { controllerManager: options.controllerManager }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    ...(options.controllers === undefined ? {} : { controllers: options.controllers }),
    ...(options.crdPaths === undefined || options.crdPaths.length === 0 ? {} : { crds: { paths: options.crdPaths } }),
    onStep: (step, ms) => say(`${step} (${(ms / 1000).toFixed(1)} s)`),
  });
  const withKcm = cp.binaries.includes('kube-controller-manager');
  let kubelet: Kubelet | undefined;
  try {
    await cp.writeKubeconfig(out);
    if (nodes.length > 0) {
      // Without kube-controller-manager nothing takes the not-ready taint off new Nodes: waiting for it would only time out.
      kubelet = await startKubelet({ kubeConfig: cp.kubeConfig, nodes, waitSchedulable: withKcm });
    }
  } catch (err) {
    await cp.stop();
    throw err;
  }
  say(
    `control plane ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${cp.url} (${cp.binaries.join(', ')}; data and logs in ${cp.dataDir})`,
  );
  if (kubelet !== undefined) printKubelet(kubelet);
  process.stdout.write(`kubeconfig: ${out}\n`);
  process.stdout.write(`Try: KUBECONFIG=${out} kubectl get nodes\n`);
  const signal = await untilSignal();
  process.stdout.write(`kprov-testkit: ${signal}, stopping\n`);
  await kubelet?.stop();
  await cp.stop();
  return 0;
}
