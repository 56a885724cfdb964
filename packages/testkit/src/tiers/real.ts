/**
 * The real tier: one control plane shared by the tests of a file (starting one takes seconds), each test getting a
 * clean cluster: its namespaces, a kubelet for its nodes, and on stop everything it created deleted again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from '../control-plane/control-plane.js';
import { startKubelet, type Kubelet } from '../kubelet/start.js';
import { nodePathOn, type Cluster, type ClusterOptions } from './cluster.js';
import { resetToBaseline, takeBaseline } from './reset.js';
import { RestClient, statusOf } from '../client/rest.js';

/** Options of {@link RealTier}. */
export interface RealTierOptions {
  /**
   * Options of the shared control plane. Default: {@link startControlPlane}'s, except kube-controller-manager's
   * `--pvclaimbinder-sync-period` of 2 s (a pre-bound volume is bound within seconds, not 15) and a client limit
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

  constructor(private readonly options: RealTierOptions = {}) {}

  /** The shared control plane, started on first use. */
  async controlPlane(): Promise<ControlPlane> {
    this.plane ??= startControlPlane({
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
    const withKcm = this.options.controlPlane?.controllerManager ?? true;
    for (const ns of options.namespaces ?? []) await ensureNamespace(cp, ns, withKcm);
    const nodeSpecs = options.nodes ?? [{ name: 'node-1' }];
    const unready = nodeSpecs.find((n) => n.ready === false);
    if (unready !== undefined)
      throw new Error(`RealTier: node ${unready.name} is asked to be not Ready, which only the testkit tier simulates`);
    let kubelet: Kubelet | undefined;
    try {
      kubelet =
        nodeSpecs.length === 0
          ? undefined
          : await startKubelet({
              kubeConfig: kc,
              nodes: nodeSpecs.map((n) => ({
                name: n.name,
                ...(n.root === undefined ? {} : { root: n.root }),
                ...(n.labels === undefined ? {} : { labels: n.labels }),
              })),
              waitSchedulable: withKcm,
            });
    } catch (err) {
      await resetToBaseline(kc, this.baseline ?? new Set());
      throw err;
    }
    const nodes = kubelet?.nodes ?? [];
    const baseline = this.baseline ?? new Set();
    let apiDown = false;
    const cluster: Cluster = {
      tier: 'real',
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
          await kubelet?.stop();
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
 * Creates `name` if missing (waiting out a deletion in progress) and, when kube-controller-manager runs, waits for
 * its `default` ServiceAccount, without which pods are refused.
 */
async function ensureNamespace(cp: ControlPlane, name: string, serviceAccount: boolean): Promise<void> {
  const rest = new RestClient(cp.kubeConfig);
  const deadline = Date.now() + NAMESPACE_WAIT_MS;
  try {
    for (;;) {
      const created = await rest
        .request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })
        .then(
          () => true,
          (err: unknown) => {
            if (statusOf(err) !== 409) throw err;
            return false;
          },
        );
      if (created) break;
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
  } finally {
    await rest.close();
  }
}
