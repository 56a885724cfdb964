/**
 * The real tier: one control plane shared by the tests of a file (starting one takes seconds), each test getting a
 * clean cluster: its namespaces, its nodes (the simulated kubelet's, or real ones on the node tier: a
 * {@link NodeSource}), and on stop everything it created deleted again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from '../control-plane/control-plane.js';
import { startKubelet } from '../hollow-node/start.js';
import type { NodeSpec } from '../testkit.js';
import { nodePathOn, type Cluster, type ClusterOptions, type TierName } from './cluster.js';
import { resetToBaseline, takeBaseline } from './reset.js';
import { RestClient, statusOf } from '../client/rest.js';

/** The nodes of one test on a real control plane. */
export interface TestNodes {
  /** Each node's name and the folder that is its filesystem on this machine. */
  readonly nodes: readonly { name: string; root: string }[];
  /** Stops them (their Node objects stay, for the reset to delete). */
  stop(): Promise<void>;
}

/** Where a tier on a real control plane gets the nodes of each test. */
export interface NodeSource {
  /** The tier's name. */
  readonly tier: TierName;
  /**
   * Starts `nodes` for one test against `cp`; `schedulable`: wait for the not-ready taint to go (only
   * kube-controller-manager removes it). `images` are OCI archives for nodes that run images.
   */
  start(
    cp: ControlPlane,
    nodes: readonly NodeSpec[],
    options: { schedulable: boolean; images: readonly string[] },
  ): Promise<TestNodes>;
}

/** The real tier's nodes: the simulated kubelet, as a client of the control plane. */
export const SIMULATED_NODES: NodeSource = {
  tier: 'real',
  async start(cp, specs, { schedulable }) {
    const unready = specs.find((n) => n.ready === false);
    if (unready !== undefined)
      throw new Error(`RealTier: node ${unready.name} is asked to be not Ready, which only the testkit tier simulates`);
    const kubelet = await startKubelet({
      kubeConfig: cp.kubeConfig,
      nodes: specs.map((n) => ({
        name: n.name,
        ...(n.root === undefined ? {} : { root: n.root }),
        ...(n.labels === undefined ? {} : { labels: n.labels }),
      })),
      waitSchedulable: schedulable,
    });
    return { nodes: kubelet.nodes, stop: () => kubelet.stop() };
  },
};

/** Options of {@link RealTier}. */
export interface RealTierOptions {
  /**
   * Options of the shared control plane. Default: {@link startControlPlane}'s, except that kube-controller-manager
   * and kube-scheduler are required (the tier's tests need the PV binder and the scheduler: `controllerManager: true`,
   * `scheduler: true`), kube-controller-manager's `--pvclaimbinder-sync-period` of 2 s (a pre-bound volume is bound within seconds, not 15) and a client limit
   * of 100 requests/s with a burst of 200 (bursts of claims are bound as fast as they come).
   */
  controlPlane?: ControlPlaneOptions;
}

const NAMESPACE_WAIT_MS = 30_000;

/** A real control plane shared by consecutive tests; see the module comment. One cluster at a time. */
export class RealTier {
  private plane: Promise<ControlPlane> | undefined;
  private baseline: Set<string> | undefined;
  private active: Cluster | undefined;

  /** `source`: where each test's nodes come from. Default the simulated kubelet ({@link SIMULATED_NODES}). */
  constructor(
    private readonly options: RealTierOptions = {},
    private readonly source: NodeSource = SIMULATED_NODES,
  ) {}

  /** The shared control plane, started on first use. */
  async controlPlane(): Promise<ControlPlane> {
    this.plane ??= startControlPlane({
      controllerManager: true,
      scheduler: true,
      pvClaimBinderSyncPeriod: '2s',
      controllerManagerQps: { qps: 100, burst: 200 },
      ...this.options.controlPlane,
    }).then(async (cp) => {
      this.baseline = await takeBaseline(cp.kubeConfig);
      return cp;
    });
    return this.plane;
  }

  /** A clean cluster on the shared control plane; its `stop()` deletes what the test created. */
  async start(options: ClusterOptions = {}): Promise<Cluster> {
    if (this.active !== undefined)
      throw new Error('RealTier: a cluster of this tier is still running; stop it before starting another');
    const cp = await this.controlPlane();
    const kc = cp.kubeConfig;
    const withKcm = cp.binaries.includes('kube-controller-manager');
    for (const ns of options.namespaces ?? []) await ensureNamespace(kc, ns, withKcm);
    const nodeSpecs = options.nodes ?? [{ name: 'node-1' }];
    let testNodes: TestNodes | undefined;
    try {
      testNodes =
        nodeSpecs.length === 0
          ? undefined
          : await this.source.start(cp, nodeSpecs, { schedulable: withKcm, images: options.images ?? [] });
    } catch (err) {
      await resetToBaseline(kc, this.baseline ?? new Set());
      throw err;
    }
    const nodes = testNodes?.nodes ?? [];
    const baseline = this.baseline ?? new Set();
    let apiDown = false;
    const cluster: Cluster = {
      tier: this.source.tier,
      url: cp.url,
      kubeConfig: kc,
      nodes,
      onNode: (node, nodePath) => nodePathOn(nodes, node, nodePath),
      writeKubeconfig: (file) => cp.writeKubeconfig(file),
      testkit: undefined,
      controlPlane: cp,
      stopApiServer: async () => {
        apiDown = true;
        await cp.stopApiServer();
      },
      startApiServer: async () => {
        await cp.startApiServer();
        apiDown = false;
      },
      compact: async () => {
        await cp.compact();
      },
      stop: async () => {
        if (this.active !== cluster) return;
        try {
          await testNodes?.stop();
          if (apiDown) await cp.startApiServer();
          await resetToBaseline(kc, baseline);
        } finally {
          this.active = undefined;
        }
      },
    };
    this.active = cluster;
    return cluster;
  }

  /** Stops the shared control plane (after the last test of the file). */
  async close(): Promise<void> {
    const plane = this.plane;
    this.plane = undefined;
    if (plane !== undefined) await (await plane).stop();
  }
}

/**
 * Creates `name` if missing (waiting out a deletion in progress), with `labels`, and, when kube-controller-manager
 * runs, waits for its `default` ServiceAccount, without which pods are refused. Resolves with whether it created it.
 */
export async function ensureNamespace(
  kc: KubeConfig,
  name: string,
  serviceAccount: boolean,
  labels: Record<string, string> = {},
): Promise<boolean> {
  const rest = new RestClient(kc);
  let made = false;
  const deadline = Date.now() + NAMESPACE_WAIT_MS;
  try {
    for (;;) {
      const created = await rest
        .request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } },
        })
        .then(
          () => true,
          (err: unknown) => {
            if (statusOf(err) !== 409) throw err;
            return false;
          },
        );
      if (created) {
        made = true;
        break;
      }
      const ns = await rest.request('GET', `/api/v1/namespaces/${name}`).catch(() => undefined);
      if (ns !== undefined && (ns.status as { phase?: string } | undefined)?.phase !== 'Terminating') break;
      if (Date.now() > deadline)
        throw new Error(`namespace ${name} is still terminating after ${NAMESPACE_WAIT_MS} ms`);
      await sleep(200);
    }
    while (
      serviceAccount &&
      !(await rest.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`).then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > deadline)
        throw new Error(
          `namespace ${name} has no default ServiceAccount after ${NAMESPACE_WAIT_MS} ms: is kube-controller-manager running?`,
        );
      await sleep(100);
    }
    return made;
  } finally {
    await rest.close();
  }
}
