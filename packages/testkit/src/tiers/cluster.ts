/**
 * One face for the two servers a test can run against: the in-process testkit (fast, hermetic, with fault
 * injection) and a real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, with the
 * simulated kubelet as a client). A test written against {@link Cluster} runs on both.
 */
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { DEFAULT_NAMESPACES } from '../store/store.js';
import { startApiServer, type NodeSpec, type Testkit, type TestkitOptions } from '../testkit.js';

/**
 * The tiers: `testkit` (in-process), `real` (a real control plane from `KUBEBUILDER_ASSETS`, the simulated kubelet)
 * and `node` (the same control plane with real nodes: kubelet, containerd, runc).
 */
export type TierName = 'testkit' | 'real' | 'node';

/** What a test needs of a cluster. */
export interface ClusterOptions {
  /** Simulated nodes, each with a kubelet that runs the pods bound to it. Default one node, `node-1`; `[]` for none. */
  nodes?: readonly NodeSpec[];
  /** Namespaces to create besides `default`, `kube-system`, `kube-public` and `kube-node-lease`. Default none. */
  namespaces?: readonly string[];
  /**
   * Options of the testkit tier's server (binder, scheduler, kubelet, HTTP, storage). The real tier always runs
   * kube-controller-manager and kube-scheduler, and a kubelet for `nodes`. Default the testkit's defaults.
   */
  testkit?: Omit<TestkitOptions, 'nodes'>;
  /**
   * OCI archives (`buildah push IMAGE oci-archive:FILE:IMAGE`) loaded into every node on the node tier, besides the
   * busybox image it always has. The other tiers run no images and ignore them. Default none.
   */
  images?: readonly string[];
}

/** A cluster of either tier. */
export interface Cluster {
  readonly tier: TierName;
  /** The API server's URL. */
  readonly url: string;
  /** client-node configuration with full rights (namespace `default`). */
  readonly kubeConfig: KubeConfig;
  /** The nodes and the folders that are (or stand for) their filesystems on this machine. */
  readonly nodes: readonly { name: string; root: string }[];
  /** Where `nodePath` (an absolute path on the node) is on this machine. */
  onNode(node: string, nodePath: string): string;
  /** Writes a kubeconfig file for kubectl and child processes; returns its path. */
  writeKubeconfig(file: string): Promise<string>;
  /** The in-process server, on the `testkit` tier (its store, fault injection, request counts). */
  readonly testkit: Testkit | undefined;
  /** The control plane, on the `real` tier (other users, service accounts, logs). */
  readonly controlPlane: ControlPlane | undefined;
  /** Takes the API server down, keeping its data: clients get connection errors until {@link startApiServer}. */
  stopApiServer(): Promise<void>;
  /** Brings the API server back on the same address after {@link stopApiServer}. */
  startApiServer(): Promise<void>;
  /** Compacts the API server's history: a list or watch from an older resourceVersion then gets 410 Gone. */
  compact(): Promise<void>;
  /** Stops what this cluster started; on the real tier, also deletes what the test created (see `RealTier`). */
  stop(): Promise<void>;
}

/** Where `nodePath` of node `node` is on this machine, given the nodes' roots. */
export function nodePathOn(nodes: readonly { name: string; root: string }[], node: string, nodePath: string): string {
  const n = nodes.find((x) => x.name === node);
  if (n === undefined)
    throw new Error(`no simulated node ${node} (there are: ${nodes.map((x) => x.name).join(', ') || 'none'})`);
  return path.join(n.root, nodePath);
}

/** A testkit-tier cluster: a new in-process server of its own. */
export async function startTestkitCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const kit = await startApiServer({
    ...options.testkit,
    ...(options.nodes === undefined ? {} : { nodes: options.nodes }),
    storage: {
      ...options.testkit?.storage,
      namespaces: [
        ...new Set([...(options.testkit?.storage?.namespaces ?? DEFAULT_NAMESPACES), ...(options.namespaces ?? [])]),
      ],
    },
  });
  return {
    tier: 'testkit',
    url: kit.url,
    kubeConfig: kit.kubeConfig,
    nodes: kit.nodes,
    onNode: (node, nodePath) => nodePathOn(kit.nodes, node, nodePath),
    writeKubeconfig: (file) => kit.writeKubeconfig(file),
    testkit: kit,
    controlPlane: undefined,
    stopApiServer: () => kit.server.close(),
    startApiServer: () => kit.server.listen(),
    compact: async () => kit.store.compact(),
    stop: () => kit.stop(),
  };
}
