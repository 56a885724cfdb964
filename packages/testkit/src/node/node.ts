/**
 * A real node for tests: containerd and a kubelet (from `KUBEBUILDER_ASSETS`) joined to a control plane from
 * `startControlPlane()` or to any cluster's kubeconfig, running pods in real containers (runc), as a kind node does
 * in a container. Everything it has is its own: a filesystem (`namespace.ts`), a bridge and subnet (`network.ts`), a
 * cgroup subtree (`cgroups.ts`), a slot folder (`slot.ts`); `stop()` removes all of it, and what a killed run left
 * is removed before the next node starts.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfigClass } from '@kubernetes/client-node';
import { RestClient, statusOf } from '../client/rest.js';
import { assetsDir } from '../control-plane/assets.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { waitFor } from '../process/wait-for.js';
import type { Taint } from '../sim/types.js';
import { createCgroupRoot } from './cgroups.js';
import { run } from './command.js';
import { NODE_PATHS, cniConfig, containerdConfig, kubeletConfig } from './config.js';
import { nodeHostMissing } from './host.js';
import { pauseImage } from './images.js';
import { CONTAINERD_READY, EXITED, KUBELET_STARTED, startNamespace, type Namespace } from './namespace.js';
import { createBridge, nodeAddresses, routeApiServer } from './network.js';
import { NAMESPACE_PID, cgroupRootName, claimSlot, releaseSlot, type Slot } from './slot.js';

/** The kubelet's port on the node's own address. */
const KUBELET_PORT = 10250;

/** Options of {@link startNode}. */
export interface NodeOptions {
  /** Node name, and its `kubernetes.io/hostname`. Default `node-1`. */
  name?: string;
  /**
   * A control plane from `startControlPlane()`: the kubelet gets a client certificate of its own
   * (`system:node:<name>` in `system:nodes`), as kubeadm gives it. One of `controlPlane` and `kubeconfig` is needed.
   */
  controlPlane?: ControlPlane;
  /** The kubeconfig file of any cluster, used as the kubelet's credentials (an administrator's will do). */
  kubeconfig?: string;
  /** OCI archives (`buildah push ... oci-archive:FILE:NAME`) loaded into the node before the kubelet starts. Default none. */
  images?: readonly string[];
  /** Labels the node registers with, besides the kubelet's own. Default none. */
  labels?: Record<string, string>;
  /** Taints the node registers with. Default none. */
  taints?: readonly Taint[];
  /** Folder of `kubelet` and `pause`. Default `$KUBEBUILDER_ASSETS`. */
  binDir?: string;
  /** How long start-up may take, until the node is Ready and schedulable, in ms. Default 180 000. */
  startTimeoutMs?: number;
  /**
   * Wait until kube-controller-manager has removed the `node.kubernetes.io/not-ready` taint that every new Node gets
   * (no pod is scheduled before). Turn off for a cluster without kube-controller-manager. Default true.
   */
  waitSchedulable?: boolean;
  /** The kubelet's `-v`. Default 2. */
  verbosity?: number;
  /** Told each step of start-up once it is done, with the ms it took. Default none. */
  onStep?: (step: string, ms: number) => void;
}

/** A running node. */
export interface RealNode {
  /** The node's name. */
  readonly name: string;
  /** The node's filesystem (its `/`) on this machine. */
  readonly root: string;
  /** The node's InternalIP (its bridge's address), where the kubelet listens. */
  readonly ip: string;
  /** containerd's socket, on this machine: `ctr --address <it> -n k8s.io ...`. */
  readonly containerdSocket: string;
  /** Where `nodePath` (an absolute path on the node) is on this machine. */
  onNode(nodePath: string): string;
  /** Loads an OCI archive into the node's containerd (namespace `k8s.io`, where the kubelet looks). */
  loadImage(archive: string): Promise<void>;
  /** The log file of the node's `kubelet` or `containerd`, on this machine. */
  logFile(component: 'kubelet' | 'containerd'): string;
  /** Stops everything the node runs and removes what it made (processes, mounts, bridge, rules, cgroups, files). */
  stop(): Promise<void>;
}

/** The kubeconfig the kubelet uses, and a client for our own calls. */
async function credentials(options: NodeOptions, name: string): Promise<{ text: string; client: KubeConfig }> {
  if (options.controlPlane !== undefined) {
    const kc = await options.controlPlane.kubeConfigFor({ user: `system:node:${name}`, groups: ['system:nodes'] });
    return { text: kc.exportConfig(), client: options.controlPlane.kubeConfig };
  }
  if (options.kubeconfig === undefined) throw new Error('startNode: pass controlPlane or kubeconfig');
  const kc = new KubeConfigClass();
  kc.loadFromFile(options.kubeconfig);
  return { text: withFilesInlined(kc).exportConfig(), client: kc };
}

/**
 * `kc` with the certificate and key files it names read into it: the kubelet reads its kubeconfig inside the node,
 * whose filesystem does not have them.
 */
function withFilesInlined(kc: KubeConfig): KubeConfig {
  const read = (file: string | undefined): string | undefined =>
    file === undefined ? undefined : readFileSync(file).toString('base64');
  const inlined = new KubeConfigClass();
  inlined.loadFromOptions({
    clusters: kc.clusters.map(({ caFile, ...c }) => ({ ...c, caData: c.caData ?? read(caFile) })),
    users: kc.users.map(({ certFile, keyFile, ...u }) => ({
      ...u,
      certData: u.certData ?? read(certFile),
      keyData: u.keyData ?? read(keyFile),
    })),
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return inlined;
}

/**
 * The last error of a klog or logrus log as one line (klog's multi-line `err=<` block joined), or its last line.
 */
function lastError(file: string): string {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  } catch {
    return '(no log)';
  }
  let i = lines.findLastIndex((l) => /^[EF]\d{4} |level=(error|fatal)/.test(l));
  if (i < 0) return (lines.at(-1) ?? '').trim();
  let text = lines[i] ?? '';
  // klog writes a multi-line value as `key=<`, the lines indented with a tab, then `>`.
  while (text.endsWith('<') && lines[i + 1]?.startsWith('\t') === true) {
    i += 1;
    text += ` ${lines[i]?.trim() ?? ''}`;
  }
  return text.replace(/\s+/g, ' ').trim();
}

/** Validates a node name as the kubelet would (a DNS subdomain). */
function checkName(name: string): void {
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    throw new Error(`node name "${name}" is not a DNS subdomain (lower case letters, digits, '-' and '.')`);
}

/**
 * Starts a node; see the module comment. Resolves once the Node is Ready (and schedulable, see
 * {@link NodeOptions.waitSchedulable}).
 *
 * @throws Error in one line when the machine cannot run a node (what is missing, and the package that brings it),
 *   or when the node does not come up (the kubelet's or containerd's own last error); what was started is stopped.
 */
export async function startNode(options: NodeOptions): Promise<RealNode> {
  const name = options.name ?? 'node-1';
  checkName(name);
  const missing = nodeHostMissing(options.binDir);
  if (missing !== undefined) throw new Error(`cannot start node ${name}: ${missing}`);
  const bin = assetsDir(options.binDir)!;
  const timeoutMs = options.startTimeoutMs ?? 180_000;
  const started = Date.now();
  let stepStart = started;
  const step = (what: string): void => {
    const now = Date.now();
    options.onStep?.(what, now - stepStart);
    stepStart = now;
  };

  const creds = await credentials(options, name);
  const pause = await pauseImage(bin);
  step('pause image ready');
  const slot: Slot = await claimSlot();
  const fs = path.join(slot.dir, 'fs');
  const addresses = nodeAddresses(slot.slot);
  const on = (nodePath: string): string => path.join(fs, nodePath);
  const logFile = (c: 'kubelet' | 'containerd'): string => on(`${NODE_PATHS.logs}/${c}.log`);
  const containerdSocket = on(NODE_PATHS.containerdSocket);
  const rest = new RestClient(creds.client);
  let ns: Namespace | undefined;
  const stop = async (): Promise<void> => {
    await ns?.stop();
    await releaseSlot(slot);
  };
  try {
    // The node's root: a mount point (pivot_root wants one), shared so that mounts made here later reach the node.
    await mkdir(fs, { recursive: true });
    await run('mount', ['--bind', fs, fs]);
    await run('mount', ['--make-shared', fs]);
    await mkdir(on(NODE_PATHS.cniConfDir), { recursive: true });
    await mkdir(on(NODE_PATHS.logs), { recursive: true });
    await writeFile(on(NODE_PATHS.containerdConfig), containerdConfig());
    await writeFile(path.join(on(NODE_PATHS.cniConfDir), '10-kprov.conflist'), cniConfig(addresses));
    const cgroupRoot = cgroupRootName(slot.slot);
    await writeFile(on(NODE_PATHS.kubeletConfig), kubeletConfig({ addresses, port: KUBELET_PORT, cgroupRoot }));
    await writeFile(on(NODE_PATHS.kubeconfig), creds.text, { mode: 0o600 });
    await createCgroupRoot(cgroupRoot);
    await createBridge(addresses);
    const service = await rest.request('GET', '/api/v1/namespaces/default/services/kubernetes');
    const spec = service.spec as { clusterIP: string; ports: { port: number }[] };
    await routeApiServer(addresses, {
      serviceIp: spec.clusterIP,
      servicePort: spec.ports[0]?.port ?? 443,
      url: creds.client.getCurrentCluster()!.server,
    });
    step(`network ${addresses.bridge} ${addresses.subnet}`);

    const labels = Object.entries(options.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    const taints = (options.taints ?? []).map(
      (t) => `${t.key}${t.value === undefined ? '' : `=${t.value}`}:${t.effect}`,
    );
    ns = startNamespace({
      fs,
      assets: bin,
      kubeletArgs: [
        `--config=${NODE_PATHS.kubeletConfig}`,
        `--kubeconfig=${NODE_PATHS.kubeconfig}`,
        `--root-dir=${NODE_PATHS.kubeletRoot}`,
        `--hostname-override=${name}`,
        `--node-ip=${addresses.nodeIp}`,
        ...(labels.length === 0 ? [] : [`--node-labels=${labels.join(',')}`]),
        ...(taints.length === 0 ? [] : [`--register-with-taints=${taints.join(',')}`]),
        `-v=${options.verbosity ?? 2}`,
      ],
    });
    await writeFile(path.join(slot.dir, NAMESPACE_PID), String(ns.child.pid ?? ''));
    const namespace = ns;
    const failed = new AbortController();
    const seen = new Set<string>();
    namespace.onLine((line) => {
      if (failed.signal.aborted) return;
      if (line === undefined) {
        failed.abort(new Fatal(`the node's namespace ended: ${namespace.stderr() || 'no message'}`));
        return;
      }
      seen.add(line);
      const exit = EXITED.exec(line);
      if (exit === null) return;
      const component = line.startsWith('kubelet') ? 'kubelet' : 'containerd';
      failed.abort(new Fatal(`${component} exited with code ${exit[1]}: ${lastError(logFile(component))}`));
    });
    const until = async (what: string, done: () => Promise<boolean> | boolean): Promise<void> => {
      const left = timeoutMs - (Date.now() - started);
      await waitFor(what, async () => ((await done()) ? true : undefined), {
        timeoutMs: Math.max(left, 1),
        intervalMs: 100,
        signal: failed.signal,
      }).catch((err: unknown) => {
        if (err instanceof Fatal) throw err;
        throw new Error(`${(err as Error).message}; kubelet: ${lastError(logFile('kubelet'))}`, { cause: err });
      });
    };
    await until('containerd', () => seen.has(CONTAINERD_READY));
    step('containerd started');
    const ctr = (args: readonly string[]): Promise<string> =>
      run('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', ...args], { timeoutMs: 300_000 });
    for (const archive of [pause, ...(options.images ?? [])]) await ctr(['images', 'import', archive]);
    step(`${1 + (options.images?.length ?? 0)} images loaded`);
    namespace.startKubelet();
    await until('the kubelet to start', () => seen.has(KUBELET_STARTED));
    await until(`node ${name} Ready`, async () => {
      const node = await rest.request('GET', `/api/v1/nodes/${name}`).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw err;
      });
      if (node === undefined) return false;
      const status = node.status as { conditions?: { type: string; status: string }[] } | undefined;
      const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      if (!ready || options.waitSchedulable === false) return ready;
      const spec = node.spec as { taints?: { key: string }[] } | undefined;
      return !(spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/not-ready');
    });
    step(`node ${name} Ready`);
  } catch (err) {
    await rest.close();
    await stop().catch(() => undefined);
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`node ${name} did not come up: ${message}`, { cause: err });
  }
  await rest.close();
  let stopped: Promise<void> | undefined;
  return {
    name,
    root: fs,
    ip: addresses.nodeIp,
    containerdSocket,
    onNode: on,
    async loadImage(archive) {
      await run('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', 'images', 'import', archive], {
        timeoutMs: 300_000,
      });
    },
    logFile,
    stop: () => (stopped ??= stop()),
  };
}

/** A failure that ends waiting at once (a component exited), rather than a condition not met yet. */
class Fatal extends Error {}
