/**
 * A hollow node, as kubemark calls a node whose kubelet is simulated and joins a real control plane: the simulated
 * kubelet as a client of any API server (a real control plane from `startControlPlane`, the testkit's own server, a
 * cluster). It registers its nodes and keeps them Ready with a Lease and status heartbeats (`node-agent.ts`), serves
 * pod logs to kube-apiserver (`log-server.ts`), and runs the pods bound to its nodes with the same kubelet as the
 * in-process testkit (`src/sim/kubelet/`), reading through list+watch caches and writing through the API
 * (`api-cluster.ts`).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../process/wait-for.js';
import {
  startKubeletLoop,
  type KubeletHandle,
  type KubeletLoop,
  type KubeletNode,
  type PodRunOptions,
} from '../sim/kubelet/kubelet.js';
import { nodeObject } from '../sim/nodes.js';
import type { Taint } from '../sim/types.js';
import { ApiCluster } from './api-cluster.js';
import { startLogServer, type LogServer } from './log-server.js';
import { NodeAgent } from './node-agent.js';
import { RestClient } from '../client/rest.js';

/** A node of {@link startKubelet}. */
export interface KubeletNodeOptions {
  /** Node name; also its `kubernetes.io/hostname` label. */
  name: string;
  /** Directory standing for the node's filesystem (`/` of the node); created if missing. Default: a new temporary directory, removed by `stop()`. */
  root?: string;
  /** Extra labels (e.g. `topology.kubernetes.io/zone`); they win over the well-known ones. Default none. */
  labels?: Record<string, string>;
  /** Capacity (= allocatable) entries overriding the defaults (cpu 4, memory 8Gi, ephemeral-storage 100Gi, pods 110). Default none. */
  capacity?: Record<string, string>;
  /** Taints the Node is created with, e.g. `{ key: 'dedicated', value: 'storage', effect: 'NoSchedule' }`. Default none. */
  taints?: Taint[];
}

/** Options of {@link startKubelet}. */
export interface KubeletOptions extends PodRunOptions {
  /** Where the API server is and who the kubelet is there. It needs to write nodes, leases and pod status, delete pods, and list and watch pods, claims, volumes, ConfigMaps and Secrets in every namespace (an administrator will do). */
  kubeConfig: KubeConfig;
  /** The nodes to register and run pods for. */
  nodes: readonly KubeletNodeOptions[];
  /** `spec.leaseDurationSeconds` of each node's Lease in `kube-node-lease`; it is renewed every quarter of that. Default 40 (renewed every 10 s), as the kubelet. */
  leaseDurationSeconds?: number;
  /** How often each node's status is posted again with fresh heartbeat times, in ms. Default 60 000 (the kubelet: every 5 min, the Lease being the main heartbeat). */
  statusReportMs?: number;
  /** How long start-up may take (first lists, registration, and the not-ready taint's removal), in ms. Default 60 000. */
  startTimeoutMs?: number;
  /**
   * Resolve only once every node has lost the `node.kubernetes.io/not-ready` taint that the TaintNodesByCondition
   * admission plugin puts on new Nodes (kube-controller-manager removes it within about 150 ms). Turn
   * it off for a control plane without kube-controller-manager, where the taint stays. Default true.
   */
  waitSchedulable?: boolean;
  /** Interval of the full resync of the pods (every pod reconsidered), in ms. Default 1000. */
  resyncMs?: number;
  /** Told about background failures (watches, renewals, status writes), which are retried. Default: ignored. */
  onError?: (error: unknown, context: string) => void;
}

/** A running {@link startKubelet}. */
export interface Kubelet extends KubeletHandle {
  /** The nodes with their root directories. */
  readonly nodes: readonly KubeletNode[];
  /** Port of the log endpoint on 127.0.0.1 (every node's `daemonEndpoints.kubeletEndpoint.Port`). */
  readonly logPort: number;
  /** Stops the pods (SIGKILL), the renewals, the watches and the log endpoint, and removes temporary node roots. The Node objects stay, as a stopped kubelet leaves them. */
  stop(): Promise<void>;
}

/**
 * Starts a simulated kubelet against the API server of `options.kubeConfig`; see the module comment. Resolves once
 * the caches have their first lists and every node is registered (and, see {@link KubeletOptions.waitSchedulable},
 * schedulable).
 *
 * @throws Error naming what it waited for when start-up takes longer than `startTimeoutMs`; whatever was started is
 *   stopped again (Nodes already registered stay).
 */
export async function startKubelet(options: KubeletOptions): Promise<Kubelet> {
  const onError = options.onError ?? (() => undefined);
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(0, deadline - Date.now());
  const temporary: string[] = [];
  const nodes: KubeletNode[] = [];
  const stoppers: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const s of stoppers.reverse()) await s();
    stoppers.length = 0;
    for (const dir of temporary) await rm(dir, { recursive: true, force: true });
  };

  try {
    for (const n of options.nodes) {
      let root = n.root;
      if (root === undefined) {
        root = await mkdtemp(path.join(tmpdir(), `kprov-${n.name}-`));
        temporary.push(root);
      } else await mkdir(root, { recursive: true });
      nodes.push({ name: n.name, root });
    }
    const rest = new RestClient(options.kubeConfig);
    stoppers.push(() => rest.close());
    const names = nodes.map((n) => n.name);
    const cluster = new ApiCluster({ rest, watch: new Watch(options.kubeConfig), nodes: names, onError });
    cluster.start();
    stoppers.push(() => cluster.stop());
    // The log endpoint must be up before registration (its port is in the Node), the loop only comes after it.
    const running: { loop?: KubeletLoop } = {};
    const logs: LogServer = await startLogServer(
      (ns, pod, c, previous) =>
        running.loop?.findLog(ns, pod, c, previous) ?? { code: 404, message: `pod "${pod}" does not exist` },
      names,
    );
    stoppers.push(() => logs.close());

    const agents = options.nodes.map((n) => {
      const node = nodeObject({
        name: n.name,
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        kubeletPort: logs.port,
        ...(n.labels === undefined ? {} : { labels: n.labels }),
        ...(n.capacity === undefined ? {} : { capacity: n.capacity }),
        ...(n.taints === undefined ? {} : { taints: n.taints }),
      });
      return new NodeAgent({
        rest,
        node,
        leaseDurationSeconds: options.leaseDurationSeconds ?? 40,
        statusReportMs: options.statusReportMs ?? 60_000,
        onNode: (obj) => cluster.setNode(obj),
        onError,
      });
    });
    stoppers.push(async () => {
      await Promise.all(agents.map(async (a) => a.stop()));
    });
    await Promise.all(
      agents.map(async (agent, i) => {
        await waitFor(`node ${names[i] ?? ''} registered`, async () => agent.register().then(() => true), {
          timeoutMs: left(),
          intervalMs: 500,
        });
        agent.start();
      }),
    );
    const synced = (): true | undefined => {
      if (cluster.synced) return true;
      // Quoted by waitFor if time runs out (a 403 for want of permissions, say).
      if (cluster.lastError !== undefined) throw cluster.lastError;
      return undefined;
    };
    await waitFor('the first lists of pods, claims, volumes, ConfigMaps and Secrets', synced, {
      timeoutMs: left(),
      intervalMs: 50,
    });

    const started = startKubeletLoop(cluster, {
      ...options,
      nodes,
      resyncMs: options.resyncMs ?? 1000,
      onError: (err, key) => onError(err, `pod ${key}`),
    });
    running.loop = started;
    stoppers.push(() => started.stop());
    if (options.waitSchedulable ?? true) await Promise.all(agents.map(async (a) => a.waitSchedulable(left())));

    return {
      nodes,
      logPort: logs.port,
      readLog: (namespace, pod, container, opts) => started.readLog(namespace, pod, container, opts),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
