import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startKubelet, type Kubelet, type KubeletNodeOptions } from '../hollow-node/start.js';
import { parseNodeFlag, untilSignal } from './serve.js';

/** Options of `kprov-testkit kubelet`. */
export interface KubeletCliOptions {
  /** Path of the kubeconfig of the API server to register with. */
  kubeconfig: string;
  /** `NAME` or `NAME=ROOTDIR`. */
  nodes: readonly string[];
}

/** Parses `--node NAME[=ROOTDIR]` for a kubelet: without a root, the node gets a temporary one. */
export function kubeletNodeFlag(flag: string): KubeletNodeOptions {
  const { name, root } = parseNodeFlag(flag, '.');
  return flag.includes('=') && root !== undefined ? { name, root } : { name };
}

/** Prints what a started kubelet serves. */
export function printKubelet(kubelet: Kubelet): void {
  for (const n of kubelet.nodes) process.stdout.write(`kprov-testkit: node ${n.name} with root ${n.root}\n`);
  process.stdout.write(`kprov-testkit: kubelet log endpoint at https://127.0.0.1:${kubelet.logPort}\n`);
}

/** `kprov-testkit kubelet`: registers the nodes with the API server and runs their pods until a signal. */
export async function kubeletCommand(options: KubeletCliOptions): Promise<number> {
  if (options.nodes.length === 0) throw new Error('kubelet needs at least one --node NAME[=ROOTDIR]');
  const nodes = options.nodes.map(kubeletNodeFlag);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(resolve(options.kubeconfig));
  const kubelet = await startKubelet({ kubeConfig, nodes });
  printKubelet(kubelet);
  process.stdout.write(`kprov-testkit: kubelet ready for ${kubeConfig.getCurrentCluster()?.server ?? ''}\n`);
  const signal = await untilSignal();
  process.stdout.write(`kprov-testkit: ${signal}, stopping\n`);
  await kubelet.stop();
  return 0;
}
