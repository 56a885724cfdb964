/**
 * The frame of a walkthrough demo (`pnpm demo`): a cluster with one node whose disk is a folder of the repository
 * (the testkit as a process, or with `--real` a real control plane and the simulated kubelet), a kubeconfig file,
 * `kubectl get`-style printing, a `--keep` pause for trying things by hand, and everything stopped at the end. The
 * demo itself only says what to create and what to show.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../control-plane/control-plane.js';
import { kubectlGet } from '../format/kubectl-get.js';
import { startKubelet } from '../hollow-node/start.js';
import { startServeProcess } from '../process/serve-process.js';
import { stopProcess } from '../process/node-process.js';

/** What a demo's walkthrough gets. */
export interface DemoContext {
  /** Administrator access to the cluster. */
  kubeConfig: KubeConfig;
  /** That access as a kubeconfig file, for the provisioner process and kubectl. */
  kubeconfig: string;
  /** The node's name. */
  node: string;
  /** The folder that stands for the node's filesystem. */
  root: string;
  /** Whether the cluster is a real control plane. */
  real: boolean;
  /** Prints a line. */
  out: (line?: string) => void;
  /** Prints `$ kubectl get <title>` and the table the server renders for `path`. */
  get: (title: string, path: string, wide?: boolean) => Promise<void>;
  /** Stops `child` (SIGTERM, then waits) when the demo ends. */
  own: (child: ChildProcess) => void;
  /**
   * With `--keep`: prints how to reach the cluster, the `hints`, and waits for Ctrl-C; resolves `true`, and the
   * walkthrough should return. Without it resolves `false` at once.
   */
  keepUp: (hints: readonly string[]) => Promise<boolean>;
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The working folder (kubeconfig, node disks), e.g. `<repo>/.kprov`; node disks are emptied first. */
  dir: string;
  /** Working directory of the testkit process. */
  cwd: string;
  /** The node's name. Default `node-1`. */
  node?: string;
  /** Stay up for kubectl at the walkthrough's `keepUp`. Default false. */
  keep?: boolean;
  /** A real control plane from `KUBEBUILDER_ASSETS` instead of the testkit. Default false. */
  real?: boolean;
}

/** Runs `walkthrough` on a fresh one-node cluster; see the module comment. */
export async function runDemo(options: DemoOptions, walkthrough: (ctx: DemoContext) => Promise<void>): Promise<void> {
  const node = options.node ?? 'node-1';
  const root = join(options.dir, 'nodes', node);
  await rm(join(options.dir, 'nodes'), { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const children: ChildProcess[] = [];
  const stops: (() => Promise<void>)[] = [];
  const out = (line = ''): void => {
    process.stdout.write(`${line}\n`);
  };
  try {
    let kubeConfig: KubeConfig;
    let kubeconfig: string;
    if (options.real === true) {
      // The walkthroughs provision and bind volumes and schedule pods: both controllers are required.
      const cp = await startControlPlane({ controllerManager: true, scheduler: true });
      stops.push(() => cp.stop());
      const kubelet = await startKubelet({ kubeConfig: cp.kubeConfig, nodes: [{ name: node, root }] });
      stops.push(() => kubelet.stop());
      kubeConfig = cp.kubeConfig;
      kubeconfig = await cp.writeKubeconfig(join(options.dir, 'kubeconfig'));
      out(
        `1. A real control plane (kube-apiserver ${cp.url}, etcd, kube-controller-manager, kube-scheduler) and the simulated kubelet, with one node, ${node}, whose disk is ${root}`,
      );
    } else {
      const server = await startServeProcess({ dir: options.dir, nodes: [`${node}=${root}`], cwd: options.cwd });
      stops.push(() => server.stop());
      kubeConfig = server.kubeConfig;
      kubeconfig = server.kubeconfig;
      out(`1. An API server (${server.url}) with one node, ${node}, whose disk is ${root}`);
    }
    out(`   kubeconfig: ${kubeconfig}`);
    out();
    const ctx: DemoContext = {
      kubeConfig,
      kubeconfig,
      node,
      root,
      real: options.real === true,
      out,
      get: async (title, path, wide = false) => {
        out(`$ kubectl get ${title}${wide ? ' -o wide' : ''}`);
        out(await kubectlGet(kubeConfig, path, { wide }));
        out();
      },
      own: (child) => {
        children.push(child);
      },
      keepUp: async (hints) => {
        if (options.keep !== true) return false;
        out('The cluster and the provisioner stay up. Try it by hand:');
        out(`  export KUBECONFIG=${kubeconfig}`);
        for (const hint of hints) out(`  ${hint}`);
        out('Press Ctrl-C to stop.');
        await new Promise<void>((ok) => {
          process.once('SIGINT', () => ok());
          process.once('SIGTERM', () => ok());
        });
        return true;
      },
    };
    await ctx.get('nodes', '/api/v1/nodes');
    await walkthrough(ctx);
  } finally {
    for (const child of children.reverse()) await stopProcess(child);
    for (const stop of stops.reverse()) await stop();
  }
}

/**
 * The command line of a demo script: `--keep` and `--real` (a `--` that pnpm passes along is ignored), then
 * {@link runDemo} with them; exits 0, or 1 with `demo failed: <reason>`.
 */
export function demoMain(
  options: Omit<DemoOptions, 'keep' | 'real'>,
  walkthrough: (ctx: DemoContext) => Promise<void>,
): void {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: { keep: { type: 'boolean' }, real: { type: 'boolean' } },
  });
  runDemo(
    { ...options, dir: resolve(options.dir), keep: values.keep === true, real: values.real === true },
    walkthrough,
  ).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
