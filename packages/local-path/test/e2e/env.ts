/**
 * Like `../provisioner/helpers.ts`'s `startEnv`, but with a chosen `config.json`, node roots and random source, for
 * upstream's e2e scenarios that need another config than deploy/local-path-storage.yaml's.
 */
import path from 'node:path';
import { startApiServer, type NodeSpec, type Testkit } from '@kprov/testkit';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { ProvisionController } from '@kprov/provisioner-lib';
import { parseConfig, type RandomSource } from '../../src/config/index.js';
import { loadHelperPodTemplate } from '../../src/helper-pod/template.js';
import { LocalPathProvisioner } from '../../src/provisioner/provisioner.js';
import { HELPER_POD_YAML, NAMESPACE, PROVISIONER_NAME, SETUP_SCRIPT, TEARDOWN_SCRIPT } from '../provisioner/helpers.js';

export interface E2eSetup {
  /** `config.json` of the ConfigMap. */
  config: unknown;
  nodes?: NodeSpec[];
  random?: RandomSource;
}

export interface E2eEnv {
  kit: Testkit;
  core: CoreV1Api;
  storage: StorageV1Api;
  controller: ProvisionController;
  /** Where a node path is on a simulated node's disk. */
  onNode: (node: string, nodePath: string) => string;
  stop: () => Promise<void>;
}

export async function startE2eEnv(setup: E2eSetup): Promise<E2eEnv> {
  const kit = await startApiServer({
    nodes: setup.nodes ?? [{ name: 'node-1' }],
    storage: { namespaces: ['default', 'kube-system', NAMESPACE] },
  });
  const core = kit.kubeConfig.makeApiClient(CoreV1Api);
  const storage = kit.kubeConfig.makeApiClient(StorageV1Api);
  const configText = JSON.stringify(setup.config);
  await core.createNamespacedConfigMap({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'local-path-config', namespace: NAMESPACE },
      data: { 'config.json': configText, setup: SETUP_SCRIPT, teardown: TEARDOWN_SCRIPT, 'helperPod.yaml': HELPER_POD_YAML },
    },
  });
  const config = parseConfig(configText);
  const template = loadHelperPodTemplate(HELPER_POD_YAML, false);
  const provisioner = new LocalPathProvisioner({
    kubeConfig: kit.kubeConfig,
    namespace: NAMESPACE,
    config: () => config,
    helperPodTemplate: () => template,
    serviceAccountName: 'local-path-provisioner-service-account',
    provisionerName: PROVISIONER_NAME,
    pollIntervalMs: 50,
    random: setup.random,
  });
  const controller = new ProvisionController({ kubeConfig: kit.kubeConfig, provisionerName: PROVISIONER_NAME, provisioner, leaderElection: false });
  const abort = new AbortController();
  const running = controller.run(abort.signal);
  const roots = new Map(kit.nodes.map((n) => [n.name, n.root]));
  return {
    kit,
    core,
    storage,
    controller,
    onNode: (node, nodePath) => path.join(roots.get(node)!, nodePath),
    stop: async () => {
      abort.abort();
      await running.catch(() => undefined);
      await kit.stop();
    },
  };
}
