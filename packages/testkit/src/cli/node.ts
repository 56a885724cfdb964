import { resolve } from 'node:path';
import { startNode } from '../node/node.js';
import { untilSignal } from './serve.js';

/** Options of `kprov-testkit node`. */
export interface NodeCliOptions {
  /** Path of the kubeconfig of the cluster to join (the kubelet's credentials). */
  kubeconfig: string;
  /** Node name. */
  name: string;
  /** OCI archives to load. */
  images: readonly string[];
  /** `KEY=VALUE` labels. */
  labels: readonly string[];
}

/** `KEY=VALUE` → entry. */
function label(flag: string): [string, string] {
  const i = flag.indexOf('=');
  if (i <= 0) throw new Error(`--label must be KEY=VALUE, got "${flag}"`);
  return [flag.slice(0, i), flag.slice(i + 1)];
}

/** `kprov-testkit node`: a real node (containerd and a kubelet) joined to a cluster until a signal. */
export async function nodeCommand(options: NodeCliOptions): Promise<number> {
  const started = Date.now();
  const say = (line: string): void => void process.stdout.write(`kprov-testkit: ${line}\n`);
  const node = await startNode({
    kubeconfig: resolve(options.kubeconfig),
    name: options.name,
    images: options.images.map((i) => resolve(i)),
    labels: Object.fromEntries(options.labels.map(label)),
    onStep: (step, ms) => say(`${step} (${(ms / 1000).toFixed(1)} s)`),
  });
  say(
    `node ${node.name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s: address ${node.ip}, filesystem ${node.root}`,
  );
  say(`kubelet log ${node.logFile('kubelet')}; containerd at ${node.containerdSocket}`);
  const signal = await untilSignal();
  say(`${signal}, stopping`);
  await node.stop();
  return 0;
}
