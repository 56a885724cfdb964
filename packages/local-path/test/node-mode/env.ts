/**
 * A cluster of the running test's tier with one node-mode provisioner per simulated node (as a DaemonSet runs
 * them), each seeing its node's disk as its `--host-root`, under real ProvisionControllers without leader election.
 * What a test may change: the nodes, `config.json`, the ConfigMap's scripts (read at each use, so a test can change
 * them), kutti compatibility, the provisioner name and the retry delay.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { currentTier } from '@kprov/testkit/vitest';
import { ItemExponentialFailureRateLimiter, ProvisionController } from '@kprov/provisioner-lib';
import { parseConfig, type Config } from '../../src/config/index.js';
import { PENDING_DIR } from '../../src/executor/node/pending.js';
import type { NodeScripts } from '../../src/executor/node/scripts.js';
import { NodeOrphanReconciler } from '../../src/executor/node/orphan-reconciler.js';
import type { NodeModeOptions } from '../../src/executor/node/executor.js';
import { LocalPathProvisioner, type LocalPathProvisionerOptions } from '../../src/provisioner/provisioner.js';
import { BASE_PATH, configJson, NAMESPACE, PROVISIONER_NAME } from '../provisioner/helpers.js';

/**
 * The node-mode provisioner of `node` (what each pod of the DaemonSet runs, `--host-root` its disk): no helper pod,
 * `extra` added (its `nodeMode` merged into the node's).
 */
export function nodeModeProvisioner(
  kubeConfig: Cluster['kubeConfig'],
  config: () => Config,
  node: { readonly name: string; readonly root: string },
  extra: Partial<Omit<LocalPathProvisionerOptions, 'nodeMode'>> & { nodeMode?: Partial<NodeModeOptions> } = {},
): LocalPathProvisioner {
  const { nodeMode, ...rest } = extra;
  return new LocalPathProvisioner({
    kubeConfig,
    namespace: NAMESPACE,
    config,
    helperPodTemplate: () => {
      throw new Error('node mode runs no helper pod');
    },
    serviceAccountName: 'unused',
    provisionerName: PROVISIONER_NAME,
    ...rest,
    nodeMode: { nodeName: node.name, hostRoot: node.root, ...nodeMode },
  });
}

/** What a test may change. */
export interface NodeSetup {
  /** Node names. Default `["node-1"]`. */
  nodes?: string[];
  /** `config.json` text. Default deploy/local-path-storage.yaml's. */
  config?: string;
  /** The ConfigMap's scripts, as the provisioners find them at each use. Default none (the built-in behaviour). */
  scripts?: NodeScripts;
  /** kuttiproject/provisioner-localvolume compatibility. Default false. */
  kutti?: boolean;
  /** Default {@link PROVISIONER_NAME}. */
  provisionerName?: string;
  /** A failed claim or volume is retried after this many ms. Default 200. */
  retryMs?: number;
}

export interface NodeEnv {
  cluster: Cluster;
  read: ObjectReader;
  core: CoreV1Api;
  storage: StorageV1Api;
  /** The provisioner of each node. */
  provisioners: Map<string, LocalPathProvisioner>;
  /** The scripts the provisioners use from now on. */
  scripts: NodeScripts;
  /** `warn(pv, message, reason)` calls, with the node of the provisioner. */
  warnings: { node: string; pv: string; message: string; reason: string }[];
  /** Where a node path is on a simulated node's disk. */
  onNode: (node: string, nodePath: string) => string;
  /** A reconciler of node-mode orphans for `node`. */
  reconciler: (node: string) => NodeOrphanReconciler;
  /** Entries of `dir` (a node path) on `node`'s disk, without the pending records' folder; `[]` when it is missing. */
  entries: (node: string, dir?: string) => string[];
  /** The pending records on `node` (file names). */
  pending: (node: string) => string[];
}

/** Starts the environment on the running test's tier; stopped after the test. */
export async function nodeEnv(setup: NodeSetup = {}): Promise<NodeEnv> {
  const tier = currentTier();
  const names = setup.nodes ?? ['node-1'];
  const cluster = await tier.start({ nodes: names.map((name) => ({ name })), namespaces: [NAMESPACE] });
  const kc = cluster.kubeConfig;
  const config = parseConfig(setup.config ?? configJson());
  const provisionerName = setup.provisionerName ?? PROVISIONER_NAME;
  const provisioners = new Map<string, LocalPathProvisioner>();
  const warnings: NodeEnv['warnings'] = [];
  const env: NodeEnv = {
    cluster,
    read: new ObjectReader(kc),
    core: kc.makeApiClient(CoreV1Api),
    storage: kc.makeApiClient(StorageV1Api),
    provisioners,
    scripts: setup.scripts ?? {},
    warnings,
    onNode: (node, nodePath) => cluster.onNode(node, nodePath),
    reconciler: (node) =>
      new NodeOrphanReconciler({
        kubeConfig: kc,
        provisioner: provisioners.get(node)!,
        nodeName: node,
        hostRoot: cluster.nodes.find((n) => n.name === node)!.root,
        config: () => config,
      }),
    entries: (node, dir = BASE_PATH) => {
      const p = cluster.onNode(node, dir);
      return existsSync(p) ? readdirSync(p).filter((n) => n !== PENDING_DIR) : [];
    },
    pending: (node) => {
      const p = path.join(cluster.onNode(node, BASE_PATH), PENDING_DIR);
      return existsSync(p) ? readdirSync(p) : [];
    },
  };
  for (const node of cluster.nodes) {
    const provisioner = nodeModeProvisioner(kc, () => config, node, {
      provisionerName,
      nodeMode: { scripts: () => env.scripts, kutti: setup.kutti },
      warn: (pv, message, reason) => warnings.push({ node: node.name, pv: pv.metadata?.name ?? '', message, reason }),
    });
    provisioners.set(node.name, provisioner);
    const retryMs = setup.retryMs ?? 200;
    const controller = new ProvisionController({
      kubeConfig: kc,
      provisionerName,
      provisioner,
      leaderElection: false,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(retryMs, retryMs),
    });
    controller.on('provisioned', (_claim, pv) => void provisioner.volumeSaved(pv));
    const abort = new AbortController();
    const running = controller.run(abort.signal);
    tier.defer(async () => {
      abort.abort();
      await running.catch(() => undefined);
    });
  }
  return env;
}
