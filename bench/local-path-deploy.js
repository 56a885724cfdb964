// What users deploy, read from packages/local-path/deploy/local-path-storage.yaml: the local-path-config ConfigMap
// (config.json, setup, teardown, helperPod.yaml), the ServiceAccount its helper pods run as (a real
// kube-apiserver refuses pods of a missing one) and the local-path StorageClass, so the bench runs those.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './common.js';

export const LOCAL_PATH_CLI = join(ROOT, 'packages/local-path/dist/cli.js');
export const DEPLOY_YAML = join(ROOT, 'packages/local-path/deploy/local-path-storage.yaml');

// `yaml` is a dependency of the local-path package, not of the root one: resolve it from there.
const localPathRequire = createRequire(join(ROOT, 'packages/local-path/package.json'));
const yaml = await import(pathToFileURL(localPathRequire.resolve('yaml')).href);

/**
 * The namespace, ConfigMap, ServiceAccount and StorageClass of the deploy manifest, plus the base path its `config.json` gives
 * every node (`DEFAULT_PATH_FOR_NON_LISTED_NODES`) and the `mkdir -m` mode of its setup script.
 */
export async function deployObjects() {
  const docs = yaml
    .parseAllDocuments(await readFile(DEPLOY_YAML, 'utf8'))
    .map((d) => d.toJS())
    .filter((o) => o !== null);
  const configMap = docs.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === 'local-path-config');
  const storageClass = docs.find((o) => o.kind === 'StorageClass' && o.metadata?.name === 'local-path');
  const serviceAccount = docs.find((o) => o.kind === 'ServiceAccount');
  if (configMap === undefined || storageClass === undefined || serviceAccount === undefined) {
    throw new Error(
      `${DEPLOY_YAML} lacks the ConfigMap local-path-config, the StorageClass local-path or a ServiceAccount; the local-path bench runs what it deploys`,
    );
  }
  const namespace = configMap.metadata.namespace;
  const config = JSON.parse(configMap.data['config.json']);
  const basePath = config.nodePathMap?.find((e) => e.node === 'DEFAULT_PATH_FOR_NON_LISTED_NODES')?.paths?.[0];
  if (typeof basePath !== 'string') {
    throw new Error(
      `${DEPLOY_YAML}: config.json has no DEFAULT_PATH_FOR_NON_LISTED_NODES path; the bench spreads claims over nodes it does not list`,
    );
  }
  const mode = /mkdir -m (0?[0-7]{3,4})/.exec(configMap.data.setup ?? '')?.[1];
  if (mode === undefined)
    throw new Error(
      `${DEPLOY_YAML}: the setup script has no "mkdir -m MODE", which the bench checks every directory against`,
    );
  return { namespace, configMap, serviceAccount, storageClass, basePath, dirMode: Number.parseInt(mode, 8) };
}
