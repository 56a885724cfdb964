// The node-mode manifests, deploy/local-path-storage-node-mode.yaml and deploy/kutti/provisioner-localvolume.yaml:
// every document validates against the Kubernetes schemas, the DaemonSet's command parses as node mode with the
// node's name from the downward API, the base paths are mounted at their own paths, and the RBAC grants what node
// mode needs and no right to create pods. node-mode-run.test.ts applies them to a cluster and runs them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifestFiles } from '@kprov/testkit';
import { describeManifestFiles } from '@kprov/testkit/vitest';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import { parseAllDocuments } from 'yaml';
import type { IConfigMap, IServiceAccount } from 'kubernetes-models/v1';
import type { IDaemonSet } from 'kubernetes-models/apps/v1';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { chooseBasePath, parseConfig, selectClassConfig } from '../../src/config/index.js';
import { KUTTI_PROVISIONER_NAME } from '../../src/node-mode/kutti.js';
import {
  NODE_MODE_CLUSTER_GRANTS,
  allowsPodCreate,
  containerOf,
  expectAllowed,
  expectUsableConfigMapData,
  grantedRules,
  startOptions,
  validate,
  type Manifest,
} from './validate.js';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const NODE_MODE = 'deploy/local-path-storage-node-mode.yaml';
const KUTTI = 'deploy/kutti/provisioner-localvolume.yaml';
const manifests = loadManifestFiles(packageDir, [NODE_MODE, KUTTI]);

function all<T>(file: string, kind: string): T[] {
  return (manifests.byFile.get(file) ?? []).filter((d) => d.kind === kind) as T[];
}
function only<T>(file: string, kind: string): T {
  const found = all<T>(file, kind);
  expect(found, `${file} holds exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

/** The RBAC of `file` bound to its ServiceAccount. */
function rulesOf(file: string): ReturnType<typeof grantedRules> {
  const account = only<IServiceAccount>(file, 'ServiceAccount').metadata!;
  return grantedRules(
    manifests.byFile.get(file) ?? [],
    { name: account.name!, namespace: account.namespace! },
    account.namespace!,
  );
}

/** hostPath volumes of the DaemonSet mounted at their own paths. */
function hostPathsMountedInPlace(ds: IDaemonSet): string[] {
  const mounts = new Map((containerOf(ds).volumeMounts ?? []).map((m) => [m.name, m.mountPath]));
  return (ds.spec?.template.spec?.volumes ?? [])
    .filter((v) => v.hostPath !== undefined && mounts.get(v.name) === v.hostPath.path)
    .map((v) => v.hostPath!.path);
}

describeManifestFiles(manifests, validate, ValidationError);

describe(NODE_MODE, () => {
  const ds = (): IDaemonSet => only<IDaemonSet>(NODE_MODE, 'DaemonSet');

  it("has the default manifest's names, ConfigMap and StorageClass, and a DaemonSet instead of its Deployment", () => {
    const main = manifestsOf('deploy/local-path-storage.yaml');
    const names = (docs: Manifest[], kind: string): string[] =>
      docs.filter((d) => d.kind === kind).map((d) => `${d.metadata?.namespace ?? ''}/${d.metadata?.name ?? ''}`);
    for (const kind of [
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'StorageClass',
      'ConfigMap',
    ])
      expect(names(manifests.byFile.get(NODE_MODE)!, kind), kind).toEqual(names(main, kind));
    expect(ds().metadata?.name).toBe(main.find((d) => d.kind === 'Deployment')?.metadata?.name);
    expect(only<IConfigMap>(NODE_MODE, 'ConfigMap').data).toEqual(
      (main.find((d) => d.kind === 'ConfigMap') as IConfigMap | undefined)?.data,
    );
    expectUsableConfigMapData(only<IConfigMap>(NODE_MODE, 'ConfigMap').data ?? {});
    expect(only<IStorageClass>(NODE_MODE, 'StorageClass').volumeBindingMode).toBe('WaitForFirstConsumer');
  });

  it('runs node mode with NODE_NAME from spec.nodeName, the mounted config, and no leader election Lease rule', () => {
    const options = startOptions(ds());
    expect(options).toMatchObject({ nodeMode: true, nodeName: 'node-1', config: '/etc/config/config.json' });
    const env = containerOf(ds()).env ?? [];
    expect(env.find((e) => e.name === 'NODE_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
    expect(all(NODE_MODE, 'Role')).toEqual([]);
  });

  it("mounts every base path of the ConfigMap's config.json at its own path", () => {
    const config = parseConfig(only<IConfigMap>(NODE_MODE, 'ConfigMap').data!['config.json']!);
    const base = chooseBasePath(selectClassConfig(config, 'local-path'), { nodeName: 'node-1' }).path;
    expect(hostPathsMountedInPlace(ds())).toEqual([base]);
  });

  it('grants what node mode needs and no right to create pods', () => {
    const { cluster, namespaced } = rulesOf(NODE_MODE);
    expectAllowed(cluster, NODE_MODE_CLUSTER_GRANTS);
    expect(allowsPodCreate([...cluster, ...namespaced])).toBe(false);
  });
});

describe(KUTTI, () => {
  const ds = (): IDaemonSet => only<IDaemonSet>(KUTTI, 'DaemonSet');

  it("keeps kutti's names, environment, root path and provisioner name", () => {
    expect(ds().metadata).toMatchObject({ name: 'kutti-provisioner', namespace: 'kube-system' });
    expect(only<IServiceAccount>(KUTTI, 'ServiceAccount').metadata?.name).toBe('kutti-provisioner');
    const env = containerOf(ds()).env ?? [];
    expect(env.find((e) => e.name === 'KUTTI_NODE_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
    const options = startOptions(ds());
    expect(options).toMatchObject({
      nodeMode: true,
      nodeName: 'node-1',
      kuttiRootPath: '/kutti/vols',
      provisionerName: KUTTI_PROVISIONER_NAME,
      namespace: 'kube-system',
    });
    expect(hostPathsMountedInPlace(ds())).toEqual(['/kutti/vols']);
  });

  it('has the two StorageClasses of kutti: kutti-delete (the default class) and kutti-retain', () => {
    const classes = all<IStorageClass>(KUTTI, 'StorageClass').map((c) => ({
      name: c.metadata?.name,
      provisioner: c.provisioner,
      reclaimPolicy: c.reclaimPolicy,
      volumeBindingMode: c.volumeBindingMode,
      isDefault: c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    }));
    const common = { provisioner: KUTTI_PROVISIONER_NAME, volumeBindingMode: 'WaitForFirstConsumer' };
    expect(classes).toEqual([
      { name: 'kutti-delete', reclaimPolicy: 'Delete', isDefault: true, ...common },
      { name: 'kutti-retain', reclaimPolicy: 'Retain', isDefault: false, ...common },
    ]);
  });

  it('grants what node mode needs and no right to create pods', () => {
    const { cluster, namespaced } = rulesOf(KUTTI);
    expectAllowed(cluster, NODE_MODE_CLUSTER_GRANTS);
    expect(allowsPodCreate([...cluster, ...namespaced])).toBe(false);
  });
});

function manifestsOf(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(`${packageDir}${file}`, 'utf8')).map((d) => d.toJS() as Manifest);
}
