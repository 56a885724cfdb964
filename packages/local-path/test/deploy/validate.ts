// Checks shared by the tests of deploy/local-path-storage.yaml, the examples and the rendered Helm chart: schema
// validation with kubernetes-models, the ConfigMap's keys through the provisioner's own parsers, the Deployment's
// command through the binary's parseCommandLine, and the RBAC grants the provisioner needs.
import { execFileSync } from 'node:child_process';
import { manifestValidator, rulesAllow, type Manifest } from '@kprov/testkit';
import { expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  ConfigMap,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  Secret,
  ServiceAccount,
  type IContainer,
} from 'kubernetes-models/v1';
import { DaemonSet, Deployment, type IDaemonSet, type IDeployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  type IClusterRole,
  type IClusterRoleBinding,
  type IPolicyRule,
  type IRole,
  type IRoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { StorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { parseCommandLine, type LocalPathOptions } from '../../src/cli/options.js';
import { parseConfig } from '../../src/config/index.js';
import { loadHelperPodTemplate, validateHelperPodTemplate } from '../../src/executor/helper-pod/template.js';

export { OBJECT_NAME, type Manifest } from '@kprov/testkit';

/** Validates `doc` against the Kubernetes OpenAPI schema of its apiVersion and kind: every kind allowed in the manifests and the chart. */
export const validate = manifestValidator([
  Namespace,
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  Deployment,
  DaemonSet,
  ConfigMap,
  Pod,
  StorageClass,
  PersistentVolumeClaim,
  Secret,
  PodDisruptionBudget,
]);

export function expectAllowed(rules: IPolicyRule[], grants: [string, string, string[]][]): void {
  for (const [group, resource, verbs] of grants) {
    for (const verb of verbs)
      expect(rulesAllow(rules, group, resource, verb), `${verb} ${group}/${resource}`).toBe(true);
  }
}

/** What the provisioner does cluster-wide: PVC update and patch (reschedule), PV patch (finalizer), events, classes, nodes, logs. */
export const CLUSTER_GRANTS: [string, string, string[]][] = [
  ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update', 'patch']],
  ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch', 'update']],
  ['', 'events', ['create', 'patch']],
  ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
  ['', 'nodes', ['get', 'list', 'watch']],
  ['', 'configmaps', ['get', 'list', 'watch']],
  ['', 'pods', ['get', 'list', 'watch']],
  ['', 'pods/log', ['get']],
];

/** What node mode does cluster-wide: the same, without helper pod logs. */
export const NODE_MODE_CLUSTER_GRANTS: [string, string, string[]][] = CLUSTER_GRANTS.filter(
  ([, r]) => r !== 'pods/log',
);

/** Whether any of `rules` lets the account create pods (node mode never should). */
export function allowsPodCreate(rules: IPolicyRule[]): boolean {
  return rulesAllow(rules, '', 'pods', 'create');
}

/** What it does in its own namespace: helper pods and the leader election Lease. */
export const NAMESPACE_GRANTS: [string, string, string[]][] = [
  ['', 'pods', ['get', 'create', 'delete']],
  ['coordination.k8s.io', 'leases', ['get', 'create', 'update']],
];

/** The rules bound to the ServiceAccount `account`: cluster-wide, and in `namespace` through Roles. */
export function grantedRules(
  objects: readonly Manifest[],
  account: { name: string; namespace: string },
  namespace: string,
): { cluster: IPolicyRule[]; namespaced: IPolicyRule[] } {
  const ofKind = <T>(kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];
  const binds = (b: IClusterRoleBinding | IRoleBinding): boolean =>
    (b.subjects ?? []).some(
      (s) => s.kind === 'ServiceAccount' && s.name === account.name && s.namespace === account.namespace,
    );
  const clusterRoles = ofKind<IClusterRole>('ClusterRole');
  const roles = ofKind<IRole>('Role');
  const cluster = ofKind<IClusterRoleBinding>('ClusterRoleBinding')
    .filter((b) => binds(b) && b.roleRef.kind === 'ClusterRole')
    .flatMap((b) => clusterRoles.find((r) => r.metadata?.name === b.roleRef.name)?.rules ?? []);
  const namespaced = ofKind<IRoleBinding>('RoleBinding')
    .filter((b) => b.metadata?.namespace === namespace && binds(b) && b.roleRef.kind === 'Role')
    .flatMap(
      (b) => roles.find((r) => r.metadata?.name === b.roleRef.name && r.metadata?.namespace === namespace)?.rules ?? [],
    );
  return { cluster, namespaced };
}

/** Runs `sh -n` on a script: a syntax error throws. */
export function shellSyntax(script: string): void {
  execFileSync('sh', ['-n'], { input: script, stdio: ['pipe', 'pipe', 'pipe'] });
}

export const CONFIGMAP_KEYS = ['config.json', 'helperPod.yaml', 'setup', 'teardown'];

/**
 * The provisioner's own checks on its ConfigMap: the four keys, config.json, helperPod.yaml and the two scripts.
 * `allowUnsafeHelperPod` (default false) is ALLOW_UNSAFE_HELPER_POD_TEMPLATE, for a privileged template.
 */
export function expectUsableConfigMapData(d: Record<string, string>, allowUnsafeHelperPod = false): void {
  expect(Object.keys(d).sort()).toEqual(CONFIGMAP_KEYS);
  expect(() => parseConfig(d['config.json']!, '/etc/config/config.json')).not.toThrow();
  // The template is a valid Pod for the API server too (the provisioner fills in name, node, volumes).
  expect(() => validate(parseYaml(d['helperPod.yaml']!) as Manifest)).not.toThrow();
  expect(() =>
    validateHelperPodTemplate(loadHelperPodTemplate(d['helperPod.yaml']!, allowUnsafeHelperPod), allowUnsafeHelperPod),
  ).not.toThrow();
  for (const key of ['setup', 'teardown']) {
    expect(d[key], key).toMatch(/^#!\/bin\/sh\nset -eu\n/);
    expect(() => shellSyntax(d[key]!), `${key}: sh -n`).not.toThrow();
  }
}

/** The Deployment's (or DaemonSet's) single container. */
export function containerOf(deployment: IDeployment | IDaemonSet): IContainer {
  const containers = deployment.spec?.template.spec?.containers ?? [];
  expect(containers, 'one container').toHaveLength(1);
  return containers[0]!;
}

/**
 * The container's command and args as local-path-provisioner parses them (downward API values filled in:
 * `metadata.namespace`, and `spec.nodeName` as `node-1`).
 */
export function startOptions(
  deployment: IDeployment | IDaemonSet,
  extraEnv: Record<string, string> = {},
): LocalPathOptions {
  const container = containerOf(deployment);
  const [program, ...argv] = container.command ?? [];
  expect(program, "the command is upstream's binary name, on the image's PATH").toBe('local-path-provisioner');
  const env: Record<string, string | undefined> = {};
  for (const e of container.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    env[e.name] =
      field === 'metadata.namespace'
        ? (deployment.metadata?.namespace ?? 'default')
        : field === 'spec.nodeName'
          ? 'node-1'
          : e.value;
  }
  const parsed = parseCommandLine([...argv, ...(container.args ?? [])], { ...env, ...extraEnv });
  if (parsed.kind !== 'start')
    throw new Error(`the Deployment's command does not start the provisioner: ${parsed.kind}`);
  return parsed.options;
}

/** The ConfigMap volume mounted at the options' CONFIG_MOUNT_PATH, which must hold config.json and the template. */
export function mountedConfigMapName(deployment: IDeployment, options: LocalPathOptions): string | undefined {
  const container = containerOf(deployment);
  const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === options.configMountPath);
  expect(mount, 'a volume at CONFIG_MOUNT_PATH').toBeDefined();
  expect(options.config?.startsWith(mount!.mountPath)).toBe(true);
  const volume = (deployment.spec?.template.spec?.volumes ?? []).find((v) => v.name === mount?.name);
  expect(volume?.configMap?.items, 'every key mounted').toBeUndefined();
  return volume?.configMap?.name;
}
