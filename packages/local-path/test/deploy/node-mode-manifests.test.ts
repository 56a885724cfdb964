// The node-mode manifests, deploy/local-path-storage-node-mode.yaml and deploy/kutti/provisioner-localvolume.yaml:
// every document validates against the Kubernetes schemas. The node-mode DaemonSet's command parses as node mode with
// the node's name from the downward API, the base paths are mounted at their own paths, and the RBAC grants what node
// mode needs and no right to create pods; kutti's manifest is kutti's own with our image, and its environment starts
// node mode as kutti. node-mode-run.test.ts and test/main/kutti.test.ts run them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifestFiles } from '@kprov/testkit';
import { describeManifestFiles } from '@kprov/testkit/vitest';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import { parseAllDocuments } from 'yaml';
import type { IConfigMap, IServiceAccount } from 'kubernetes-models/v1';
import type { IDaemonSet, IDeployment } from 'kubernetes-models/apps/v1';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { parseCommandLine } from '../../src/cli/options.js';
import { chooseBasePath, parseConfig, selectClassConfig } from '../../src/config/index.js';
import { KUTTI_PROVISIONER_NAME } from '../../src/executor/node/kutti.js';
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
import packageJson from '../../package.json' with { type: 'json' };

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
  const deployment = (): IDeployment => only<IDeployment>(KUTTI, 'Deployment');

  it("is kutti's deploy/kubernetes/provisioner.yaml (v0.2.2) with our image: its objects and environment", () => {
    expect((manifests.byFile.get(KUTTI) ?? []).map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual([
      'ClusterRole/kutti-provisioner',
      'ServiceAccount/kutti-provisioner',
      'ClusterRoleBinding/kutti-provisioner',
      'Deployment/kutti-provisioner',
      'StorageClass/kutti-delete',
      'StorageClass/kutti-retain',
    ]);
    expect(deployment().metadata?.namespace).toBe('kube-system');
    expect(deployment().spec?.replicas).toBe(1);
    expect(deployment().spec?.template.spec?.serviceAccount).toBe('kutti-provisioner');
    const container = containerOf(deployment());
    // Only the image is ours: no command, arguments, probes or other variables.
    expect(container).toEqual({
      name: 'provisioner',
      image: `ghcr.io/kprov/local-path:${packageJson.version}`,
      volumeMounts: [{ mountPath: '/kutti/vols', name: 'kuttivolsroot' }],
      env: [
        { name: 'KUTTI_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'KUTTI_ROOT_PATH', value: '/kutti/vols' },
      ],
    });
    expect(deployment().spec?.template.spec?.volumes).toEqual([
      { name: 'kuttivolsroot', hostPath: { path: '/kutti/vols', type: 'DirectoryOrCreate' } },
    ]);
  });

  it("started as the Deployment starts the image (no arguments, kutti's environment), runs node mode as kutti", () => {
    const parsed = parseCommandLine([], { KUTTI_NODE_NAME: 'node-1', KUTTI_ROOT_PATH: '/kutti/vols' });
    expect(parsed.kind).toBe('start');
    expect(parsed.kind === 'start' ? parsed.options : undefined).toMatchObject({
      nodeMode: true,
      nodeName: 'node-1',
      kuttiRootPath: '/kutti/vols',
      provisionerName: KUTTI_PROVISIONER_NAME,
    });
  });

  it('has the StorageClasses of kutti: kutti-delete (the default class) and kutti-retain, without parameters', () => {
    const classes = all<IStorageClass>(KUTTI, 'StorageClass').map((c) => ({
      name: c.metadata?.name,
      provisioner: c.provisioner,
      reclaimPolicy: c.reclaimPolicy,
      volumeBindingMode: c.volumeBindingMode,
      annotations: c.metadata?.annotations,
      parameters: c.parameters,
    }));
    const common = {
      provisioner: KUTTI_PROVISIONER_NAME,
      volumeBindingMode: 'WaitForFirstConsumer',
      parameters: undefined,
    };
    expect(classes).toEqual([
      {
        name: 'kutti-delete',
        reclaimPolicy: 'Delete',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        ...common,
      },
      { name: 'kutti-retain', reclaimPolicy: 'Retain', annotations: undefined, ...common },
    ]);
  });

  it("binds kutti's ClusterRole, which grants what node mode uses there (no Role)", () => {
    const { cluster, namespaced } = rulesOf(KUTTI);
    expect(namespaced).toEqual([]);
    expectAllowed(cluster, [
      ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update']],
      ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch', 'update']],
      ['', 'events', ['create', 'patch']],
      ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
      ['', 'nodes', ['get', 'list']],
    ]);
  });
});

function manifestsOf(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(`${packageDir}${file}`, 'utf8')).map((d) => d.toJS() as Manifest);
}
