import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { startApiServer, type NodeSpec, type Testkit } from '../testkit.js';

export interface ServeOptions {
  port: number;
  kubeconfigOut: string;
  /** `NAME` or `NAME=ROOTDIR`. */
  nodes: readonly string[];
  binder: boolean;
  scheduler: boolean;
  kubelet: boolean;
}

/** Parses `--node NAME[=ROOTDIR]`; without a root, the node lives under `<base>/nodes/NAME`. */
export function parseNodeFlag(flag: string, base: string): NodeSpec {
  const eq = flag.indexOf('=');
  const name = eq < 0 ? flag : flag.slice(0, eq);
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    throw new Error(`--node "${flag}": the node name must be a lowercase RFC 1123 subdomain, like node-1`);
  }
  const root = eq < 0 ? resolve(base, 'nodes', name) : resolve(flag.slice(eq + 1));
  return { name, root };
}

/** Resolves once SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((done) => {
    const on = (s: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      done(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** Starts a testkit with the given nodes and prints where its kubeconfig is. */
export async function startForCli(options: ServeOptions): Promise<Testkit> {
  const out = resolve(options.kubeconfigOut);
  const base = resolve(out, '..');
  const nodes = (options.nodes.length === 0 ? ['node-1'] : options.nodes).map((n) => parseNodeFlag(n, base));
  for (const n of nodes) if (n.root !== undefined) await mkdir(n.root, { recursive: true });
  const kit = await startApiServer({
    port: options.port,
    nodes,
    binder: options.binder,
    scheduler: options.scheduler,
    kubelet: options.kubelet,
  });
  await kit.writeKubeconfig(out);
  return kit;
}

/** `kprov-testkit serve`: runs until a signal. */
export async function serve(options: ServeOptions): Promise<number> {
  const kit = await startForCli(options);
  const out = resolve(options.kubeconfigOut);
  process.stdout.write(`kprov-testkit: API server at ${kit.url}\n`);
  for (const n of kit.nodes) process.stdout.write(`kprov-testkit: node ${n.name} with root ${n.root}\n`);
  process.stdout.write(`kubeconfig: ${out}\n`);
  process.stdout.write(`Try: KUBECONFIG=${out} kubectl get nodes\n`);
  const signal = await untilSignal();
  process.stdout.write(`kprov-testkit: ${signal}, stopping\n`);
  await kit.stop();
  return 0;
}
