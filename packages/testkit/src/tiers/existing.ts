/**
 * The real tier on a cluster that is already running, as envtest's `USE_EXISTING_CLUSTER=true`: the cluster of the
 * current kubeconfig (`KUBECONFIG`, else `~/.kube/config`) instead of a control plane of our own. It may be a
 * user's cluster, so what a test's cluster cleans on stop is only what the test can be shown to have made:
 *
 * - the namespaces it asked for, created with the label {@link CREATED_FOR_TEST_LABEL} and deleted with all they
 *   hold (a namespace that exists without that label is refused, never taken over);
 * - its simulated nodes (a Node of the same name that the tier did not make is refused), and their Leases;
 * - elsewhere, objects of the kinds the real tier cleans that were not there when the test's cluster started,
 *   except Events and Leases (other controllers write those all the time), objects whose owner was already there
 *   (a pod of one of the cluster's DaemonSets), and volumes bound to a claim that was already there.
 *
 * An object someone else creates, without an owner, in the minutes a test runs would still be taken for the test's:
 * run it against a cluster meant for tests (kind, k3d, a CI cluster). Nothing is cleaned when the tier starts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { RestClient, statusOf, type JsonObject } from '../client/rest.js';
import { installCRDs, type CRDInstallOptions } from '../control-plane/crds.js';
import { startKubelet, type Kubelet } from '../hollow-node/start.js';
import { nodePathOn, type Cluster, type ClusterOptions } from './cluster.js';
import { ensureNamespace } from './real.js';
import { resetToBaseline, takeBaseline, type ResetScope } from './reset.js';

/** The label of the namespaces and Nodes the tier makes on an existing cluster, and deletes again. */
export const CREATED_FOR_TEST_LABEL = 'testkit.kprov.io/created-for-test';

/** How long the namespaces of a test may take to be deleted, in ms. */
const NAMESPACE_DELETE_MS = 45_000;

/** Options of {@link ExistingClusterTier}. */
export interface ExistingClusterTierOptions {
  /** The cluster. Default the current context of `KUBECONFIG`, else `~/.kube/config` (client-node's `loadFromDefault`). */
  kubeConfig?: KubeConfig;
  /** CRDs installed (or replaced) when the tier starts, and left installed. Default none. */
  crds?: CRDInstallOptions;
}

/** Says why a call that needs a control plane of our own cannot be made here. */
function notHere(what: string): Promise<never> {
  return Promise.reject(
    new Error(
      `${what} is not possible on an existing cluster (KPROV_USE_EXISTING_CLUSTER): the tier does not run its API server; skip the test there (cluster.controlPlane is undefined)`,
    ),
  );
}

/** The real tier on the current kubeconfig's cluster; see the module comment. One cluster at a time. */
export class ExistingClusterTier {
  private readonly kc: KubeConfig;
  private connected: Promise<void> | undefined;
  private active: Cluster | undefined;

  constructor(private readonly options: ExistingClusterTierOptions = {}) {
    if (options.kubeConfig !== undefined) this.kc = options.kubeConfig;
    else {
      this.kc = new KubeConfig();
      this.kc.loadFromDefault();
    }
  }

  /** Where the cluster is: `<context> (<server>)`. */
  describe(): string {
    return `${this.kc.getCurrentContext()} (${this.kc.getCurrentCluster()?.server ?? 'no server'})`;
  }

  /**
   * Checks that the cluster answers and installs the CRDs; once.
   *
   * @throws Error naming the context and server when the cluster does not answer.
   */
  async connect(): Promise<void> {
    this.connected ??= (async () => {
      const rest = new RestClient(this.kc);
      try {
        await rest.request('GET', '/version');
      } catch (err) {
        throw new Error(
          `the existing cluster ${this.describe()} does not answer: ${err instanceof Error ? err.message : String(err)}; check KUBECONFIG or unset KPROV_USE_EXISTING_CLUSTER`,
          { cause: err },
        );
      } finally {
        await rest.close();
      }
      if (this.options.crds !== undefined) await installCRDs(this.kc, this.options.crds);
    })();
    return this.connected;
  }

  /** A cluster for one test; its `stop()` deletes what the test made (see the module comment). */
  async start(options: ClusterOptions = {}): Promise<Cluster> {
    if (this.active !== undefined)
      throw new Error('ExistingClusterTier: a cluster of this tier is still running; stop it before starting another');
    await this.connect();
    const kc = this.kc;
    const baseline = await takeBaseline(kc);
    const rest = new RestClient(kc);
    const namespaces: string[] = [];
    const nodeNames = (options.nodes ?? [{ name: 'node-1' }]).map((n) => n.name);
    let kubelet: Kubelet | undefined;
    const mine = (obj: JsonObject | undefined): boolean =>
      (obj?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[CREATED_FOR_TEST_LABEL] !==
      undefined;

    const scope: ResetScope = (plural, item, created) => {
      const m = item.metadata;
      if (plural === 'nodes') return nodeNames.includes(m.name);
      if (plural === 'leases') return m.namespace === 'kube-node-lease' && nodeNames.includes(m.name);
      if (plural === 'events') return false;
      if (m.namespace !== undefined && namespaces.includes(m.namespace)) return true;
      if ((m.ownerReferences ?? []).some((o) => o.uid === undefined || !created.has(o.uid))) return false;
      const claim = item.spec?.claimRef?.uid;
      return plural !== 'persistentvolumes' || claim === undefined || created.has(claim);
    };
    const cleanUp = async (): Promise<void> => {
      await kubelet?.stop();
      await resetToBaseline(kc, baseline, 30_000, scope);
      for (const ns of namespaces)
        await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch((err: unknown) => {
          if (statusOf(err) !== 404) throw err;
        });
      const deadline = Date.now() + NAMESPACE_DELETE_MS;
      for (const ns of namespaces) {
        while (
          await rest.request('GET', `/api/v1/namespaces/${ns}`).then(
            () => true,
            () => false,
          )
        ) {
          if (Date.now() > deadline)
            throw new Error(`namespace ${ns} of the test is still there ${NAMESPACE_DELETE_MS} ms after its deletion`);
          await sleep(250);
        }
      }
    };

    try {
      for (const ns of options.namespaces ?? []) {
        const there = await rest.request('GET', `/api/v1/namespaces/${ns}`).catch(() => undefined);
        if (there !== undefined && !mine(there))
          throw new Error(
            `namespace ${ns} already exists on the existing cluster ${this.describe()} and the tier did not make it: it only uses (and deletes) namespaces it creates; delete it or run the suite elsewhere`,
          );
        namespaces.push(ns);
        await ensureNamespace(kc, ns, true, { [CREATED_FOR_TEST_LABEL]: 'true' });
      }
      for (const spec of options.nodes ?? [{ name: 'node-1' }]) {
        if (spec.ready === false)
          throw new Error(`node ${spec.name} is asked to be not Ready, which only the testkit tier simulates`);
        const there = await rest.request('GET', `/api/v1/nodes/${spec.name}`).catch(() => undefined);
        if (there !== undefined && !mine(there))
          throw new Error(
            `a Node ${spec.name} already exists on the existing cluster ${this.describe()}: the tier registers simulated nodes only under names that are free`,
          );
      }
      const specs = options.nodes ?? [{ name: 'node-1' }];
      kubelet =
        specs.length === 0
          ? undefined
          : await startKubelet({
              kubeConfig: kc,
              nodes: specs.map((n) => ({
                name: n.name,
                ...(n.root === undefined ? {} : { root: n.root }),
                labels: { ...n.labels, [CREATED_FOR_TEST_LABEL]: 'true' },
              })),
            });
    } catch (err) {
      await cleanUp().finally(() => rest.close());
      throw err;
    }
    const nodes = kubelet?.nodes ?? [];
    const cluster: Cluster = {
      tier: 'real',
      url: kc.getCurrentCluster()?.server ?? '',
      kubeConfig: kc,
      nodes,
      onNode: (node, nodePath) => nodePathOn(nodes, node, nodePath),
      writeKubeconfig: async (file) => {
        await mkdir(path.dirname(path.resolve(file)), { recursive: true });
        await writeFile(file, kc.exportConfig(), { mode: 0o600 });
        return file;
      },
      testkit: undefined,
      controlPlane: undefined,
      stopApiServer: () => notHere('stopApiServer()'),
      startApiServer: () => notHere('startApiServer()'),
      compact: () => notHere('compact()'),
      stop: async () => {
        if (this.active !== cluster) return;
        try {
          await cleanUp();
        } finally {
          this.active = undefined;
          await rest.close();
        }
      },
    };
    this.active = cluster;
    return cluster;
  }

  /** Nothing to stop: the cluster is not ours. */
  async close(): Promise<void> {
    this.connected = undefined;
  }
}
