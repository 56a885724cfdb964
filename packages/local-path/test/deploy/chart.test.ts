// The Helm chart deploy/chart/local-path-provisioner, rendered by helm itself (`helm template local-path-provisioner
// <chart> --namespace local-path-storage [-f values]`, with the helm @kprov/testkit's findHelm finds): every object
// validates against the Kubernetes schemas, the chart renders the kinds of upstream's chart, agrees with
// deploy/local-path-storage.yaml (RBAC, ConfigMap, the Deployment's command, the class), and each values key users
// rely on renders valid objects with the value applied. `pnpm check` also runs `helm lint --strict` on the chart.
import { readFileSync, readdirSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { helmTemplate, parseManifests } from '@kprov/testkit';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import type { IConfigMap, ISecret, IServiceAccount } from 'kubernetes-models/v1';
import type { IDaemonSet, IDeployment } from 'kubernetes-models/apps/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type {
  IClusterRole,
  IClusterRoleBinding,
  IRole,
  IRoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { parseConfig, selectClassConfig, storageModeOf } from '../../src/config/index.js';
import { loadHelperPodTemplate } from '../../src/executor/helper-pod/template.js';
import {
  CLUSTER_GRANTS,
  NAMESPACE_GRANTS,
  NODE_MODE_CLUSTER_GRANTS,
  OBJECT_NAME,
  allowsPodCreate,
  containerOf,
  expectAllowed,
  expectUsableConfigMapData,
  grantedRules,
  mountedConfigMapName,
  startOptions,
  validate,
  type Manifest,
} from './validate.js';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
const chartDir = join(packageDir, 'deploy/chart/local-path-provisioner');
const RELEASE = 'local-path-provisioner';
const NAMESPACE = 'local-path-storage';

/** The objects of deploy/local-path-storage.yaml, which the chart should agree with. */
const manifest = parseManifests(
  'deploy/local-path-storage.yaml',
  readFileSync(join(packageDir, 'deploy/local-path-storage.yaml'), 'utf8'),
);
const manifestOnly = <T>(kind: string): T => manifest.find((d) => d.kind === kind) as T;

type Values = Record<string, unknown>;

/**
 * `helm template` leaves NOTES.txt out (helm install prints it): it is rendered from a copy of the chart with one
 * template more, which includes NOTES.txt into a document of its own.
 */
const notesChart = await mkdtemp(join(tmpdir(), 'kprov-chart-notes-'));
afterAll(() => rm(notesChart, { recursive: true, force: true }));
await cp(chartDir, notesChart, { recursive: true });
await writeFile(
  join(notesChart, 'templates/notes-as-document.yaml'),
  'notes: {{ include "local-path-provisioner/templates/NOTES.txt" . | toJson }}\n',
);

/** What `helm template` rendered for one set of values, and the NOTES.txt `helm install` would print with them. */
class Rendered {
  private renderedNotes: Promise<string> | undefined;

  constructor(
    readonly objects: Manifest[],
    private readonly releaseName: string,
    private readonly values: Values,
  ) {}

  /** NOTES.txt, rendered on first use. */
  notes(): Promise<string> {
    this.renderedNotes ??= helmTemplate(notesChart, {
      releaseName: this.releaseName,
      namespace: NAMESPACE,
      values: this.values,
      extraArgs: ['--show-only', 'templates/notes-as-document.yaml'],
    }).then(([doc]) => (doc as unknown as { notes: string }).notes);
    return this.renderedNotes;
  }

  all<T>(kind: string): T[] {
    return this.objects.filter((o) => o.kind === kind) as T[];
  }

  only<T>(kind: string): T {
    const found = this.all<T>(kind);
    expect(found, `exactly one ${kind}`).toHaveLength(1);
    return found[0]!;
  }

  kinds(): string[] {
    return this.objects.map((o) => o.kind).sort();
  }

  get deployment(): IDeployment {
    return this.only<IDeployment>('Deployment');
  }

  get configData(): Record<string, string> {
    return this.only<IConfigMap>('ConfigMap').data ?? {};
  }

  /** Every object validates, and is named as the API server requires. */
  expectValid(): void {
    for (const o of this.objects) {
      expect(o.metadata?.name, `${o.kind} metadata.name`).toMatch(OBJECT_NAME);
      expect(() => validate(o), `${o.kind} ${o.metadata?.name}`).not.toThrow();
    }
    expectUsableConfigMapData(this.configData);
    const keys = this.objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`);
    expect(new Set(keys).size, 'each object once').toBe(keys.length);
  }
}

const renders = new Map<string, Promise<Rendered>>();

/** `helm template <releaseName> <chart> --namespace local-path-storage -f <values>`, once per release and values. */
function render(values: Values = {}, releaseName = RELEASE): Promise<Rendered> {
  const key = JSON.stringify([releaseName, values]);
  let rendered = renders.get(key);
  if (rendered === undefined) {
    rendered = helmTemplate(chartDir, { releaseName, namespace: NAMESPACE, values }).then(
      (objects) => new Rendered(objects, releaseName, values),
    );
    renders.set(key, rendered);
  }
  return rendered;
}

const BASE_KINDS = [
  'ClusterRole',
  'ClusterRoleBinding',
  'ConfigMap',
  'Deployment',
  'Role',
  'RoleBinding',
  'ServiceAccount',
  'StorageClass',
];

const defaults = await render();

describe('the chart with its default values', () => {
  const r = defaults;

  it("renders only the kinds of upstream's chart (section 5.3): no PodDisruptionBudget or Secret unless asked", () => {
    expect(r.kinds()).toEqual(BASE_KINDS);
  });

  it.each(r.objects.map((o) => [`${o.kind} ${o.metadata?.name}`, o] as const))(
    '%s validates against the Kubernetes schema',
    (_, o) => {
      expect(o.metadata?.name).toMatch(OBJECT_NAME);
      expect(() => validate(o)).not.toThrow();
      expect(() => validate({ ...structuredClone(o), metadata: 'not an object' } as unknown as Manifest)).toThrow(
        ValidationError,
      );
    },
  );

  it('puts every namespaced object in the release namespace, labelled as a Helm release', () => {
    for (const o of r.objects) {
      const clusterScoped = ['ClusterRole', 'ClusterRoleBinding', 'StorageClass'].includes(o.kind);
      expect(o.metadata?.namespace, `${o.kind}`).toBe(clusterScoped ? undefined : NAMESPACE);
      expect(o.metadata?.labels, `${o.kind}`).toMatchObject({
        'app.kubernetes.io/instance': RELEASE,
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/name': 'local-path-provisioner',
        'app.kubernetes.io/version': packageJson.version,
        'helm.sh/chart': `local-path-provisioner-${packageJson.version}`,
      });
    }
  });

  it('has the RBAC rules of the manifest (PVC update, PV patch, Leases), bound to the ServiceAccount it creates', () => {
    expect(r.only<IClusterRole>('ClusterRole').rules).toEqual(manifestOnly<IClusterRole>('ClusterRole').rules);
    expect(r.only<IRole>('Role').rules).toEqual(manifestOnly<IRole>('Role').rules);
    const account = r.only<IServiceAccount>('ServiceAccount').metadata!;
    const rules = grantedRules(r.objects, { name: account.name!, namespace: account.namespace! }, NAMESPACE);
    expectAllowed(rules.cluster, CLUSTER_GRANTS);
    expectAllowed(rules.namespaced, NAMESPACE_GRANTS);
    for (const b of [...r.all<IClusterRoleBinding>('ClusterRoleBinding'), ...r.all<IRoleBinding>('RoleBinding')]) {
      expect(r.all<Manifest>(b.roleRef.kind).map((x) => x.metadata?.name)).toContain(b.roleRef.name);
    }
  });

  it("ConfigMap: the manifest's config.json, scripts and helper pod, and it passes the provisioner's checks", () => {
    expectUsableConfigMapData(r.configData);
    const manifestData = manifestOnly<IConfigMap>('ConfigMap').data!;
    expect(r.only<IConfigMap>('ConfigMap').metadata?.name).toBe('local-path-config');
    expect(parseConfig(r.configData['config.json']!)).toEqual(parseConfig(manifestData['config.json']!));
    expect(r.configData.setup).toBe(manifestData.setup);
    expect(r.configData.teardown).toBe(manifestData.teardown);
    const pod = loadHelperPodTemplate(r.configData['helperPod.yaml']!, false);
    const manifestPod = loadHelperPodTemplate(manifestData['helperPod.yaml']!, false);
    expect(pod.spec).toEqual({
      ...manifestPod.spec,
      containers: [{ ...manifestPod.spec!.containers[0], image: 'docker.io/library/busybox:latest' }],
    });
  });

  it('Deployment: the binary parses its command, which names the ConfigMap, ServiceAccount and class of the chart', () => {
    const d = r.deployment;
    const options = startOptions(d);
    expect(containerOf(d).image).toBe(`ghcr.io/kprov/local-path:${packageJson.version}`);
    expect(options.config).toBe('/etc/config/config.json');
    expect(options.configMountPath).toBe('/etc/config/');
    expect(mountedConfigMapName(d, options)).toBe(r.only<IConfigMap>('ConfigMap').metadata?.name);
    expect(options.configmapName).toBe(r.only<IConfigMap>('ConfigMap').metadata?.name);
    expect(options.serviceAccountName).toBe(r.only<IServiceAccount>('ServiceAccount').metadata?.name);
    expect(d.spec?.template.spec?.serviceAccountName).toBe(options.serviceAccountName);
    expect(options.provisionerName).toBe(r.only<IStorageClass>('StorageClass').provisioner);
    expect(options.namespace).toBe(NAMESPACE);
    expect(options.leaderElection).toBe(true);
    expect(options.leaderElectionNamespace).toBe(NAMESPACE);
    expect(options.debug).toBe(false);
    expect(options.healthPort).toBe(8080);
    expect(containerOf(d).ports).toEqual([{ name: 'health', containerPort: 8080, protocol: 'TCP' }]);
    const manifestContainer = containerOf(manifestOnly<IDeployment>('Deployment'));
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
      expect(containerOf(d)[probe], probe).toEqual(manifestContainer[probe]);
    }
    expect(d.spec?.replicas).toBe(1);
    expect(d.spec?.template.metadata?.labels).toMatchObject(d.spec!.selector.matchLabels!);
  });

  it("StorageClass: the manifest's name, binding mode and reclaim policy; upstream chart's provisioner name", () => {
    const sc = r.only<IStorageClass>('StorageClass');
    const m = manifestOnly<IStorageClass>('StorageClass');
    expect(sc.metadata?.name).toBe(m.metadata?.name);
    expect(sc.volumeBindingMode).toBe(m.volumeBindingMode);
    expect(sc.reclaimPolicy).toBe(m.reclaimPolicy);
    expect(sc.provisioner).toBe(`cluster.local/${RELEASE}`); // upstream chart's default, unlike the raw manifest
    expect(sc.allowVolumeExpansion).toBe(true);
    expect(sc.metadata?.annotations).toEqual({
      'storageclass.kubernetes.io/is-default-class': 'false',
      defaultVolumeType: 'hostPath',
    });
    expect(sc.parameters).toBeUndefined();
  });

  it('NOTES.txt names the release, its namespace, provisioner and class', async () => {
    const notes = await r.notes();
    expect(notes).toContain(`${RELEASE} is installed in namespace ${NAMESPACE}.`);
    expect(notes).toContain(`Provisioner name: cluster.local/${RELEASE}`);
    expect(notes).toContain('StorageClass: local-path\n');
    expect(notes).toContain('Leader election: on (replicas: 1)');
  });

  it('a release name that contains the chart name is the full name; another one is prefixed to it', async () => {
    const other = await render({}, 'storage');
    expect(other.deployment.metadata?.name).toBe('storage-local-path-provisioner');
    expect(other.only<IStorageClass>('StorageClass').provisioner).toBe('cluster.local/storage-local-path-provisioner');
  });
});

describe('mode: node', () => {
  it("runs on every node, tainted ones too, at system-node-critical, as the manifest's DaemonSet; values add or replace", async () => {
    const spec = async (v: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const s = (await render({ mode: 'node', ...v })).only<IDaemonSet>('DaemonSet').spec!.template.spec!;
      return { tolerations: s.tolerations, priorityClassName: s.priorityClassName };
    };
    const everyTaint = { operator: 'Exists' };
    expect(await spec({})).toEqual({ tolerations: [everyTaint], priorityClassName: 'system-node-critical' });
    const own = { key: 'CriticalAddonsOnly', operator: 'Exists' };
    expect(await spec({ tolerations: [own], priorityClassName: 'storage' })).toEqual({
      tolerations: [everyTaint, own],
      priorityClassName: 'storage',
    });
    expect(await spec({ nodeMode: { tolerations: [], priorityClassName: '' } })).toEqual({
      tolerations: undefined,
      priorityClassName: undefined,
    });
  });

  it('renders a DaemonSet in node mode instead of the Deployment, and no Role: no pod may be created', async () => {
    const r = await render({ mode: 'node' });
    r.expectValid();
    expect(r.kinds()).toEqual(
      [...BASE_KINDS.filter((k) => !['Deployment', 'Role', 'RoleBinding'].includes(k)), 'DaemonSet'].sort(),
    );
    const account = r.only<IServiceAccount>('ServiceAccount');
    const { cluster, namespaced } = grantedRules(
      r.objects,
      { name: account.metadata!.name!, namespace: NAMESPACE },
      NAMESPACE,
    );
    expectAllowed(cluster, NODE_MODE_CLUSTER_GRANTS);
    expect(allowsPodCreate([...cluster, ...namespaced])).toBe(false);
    expect(await r.notes()).toContain('Node mode: a DaemonSet');
  });

  it("the DaemonSet's command is node mode with NODE_NAME from spec.nodeName and each hostPath at its own path", async () => {
    const r = await render({ mode: 'node', nodeMode: { hostPaths: ['/opt/local-path-provisioner', '/data1'] } });
    r.expectValid();
    const ds = r.only<IDaemonSet>('DaemonSet');
    const options = startOptions(ds);
    expect(options).toMatchObject({ nodeMode: true, nodeName: 'node-1', config: '/etc/config/config.json' });
    expect(options.hostRoot).toBeUndefined();
    const env = containerOf(ds).env ?? [];
    expect(env.find((e) => e.name === 'NODE_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
    const mounts = Object.fromEntries((containerOf(ds).volumeMounts ?? []).map((m) => [m.name, m.mountPath]));
    const volumes = ds.spec!.template.spec!.volumes ?? [];
    for (const p of ['/opt/local-path-provisioner', '/data1']) {
      const volume = volumes.find((v) => v.hostPath?.path === p);
      expect(volume?.hostPath?.type).toBe('DirectoryOrCreate');
      expect(mounts[volume!.name]).toBe(p);
    }
    expect(ds.spec?.selector.matchLabels).toEqual(ds.spec?.template.metadata?.labels && ds.spec.selector.matchLabels);
  });
});

describe('values users set', () => {
  it("storageClass.provisionerName: rancher.io/local-path takes over the manifest's volumes", async () => {
    const r = await render({ storageClass: { provisionerName: 'rancher.io/local-path' } });
    r.expectValid();
    expect(r.only<IStorageClass>('StorageClass').provisioner).toBe(
      manifestOnly<IStorageClass>('StorageClass').provisioner,
    );
    expect(startOptions(r.deployment).provisionerName).toBe('rancher.io/local-path');
  });

  it('storageClass.create: false renders no StorageClass', async () => {
    const r = await render({ storageClass: { create: false } });
    r.expectValid();
    expect(r.kinds()).toEqual(BASE_KINDS.filter((k) => k !== 'StorageClass'));
    expect(await r.notes()).not.toContain('StorageClass');
  });

  it('storageClass: defaultClass, name, reclaimPolicy, binding mode, annotations, topologies and patterns', async () => {
    const topology = [{ matchLabelExpressions: [{ key: 'kubernetes.io/hostname', values: ['node-1'] }] }];
    const r = await render({
      storageClass: {
        defaultClass: true,
        name: 'fast',
        reclaimPolicy: 'Retain',
        volumeBindingMode: 'Immediate',
        annotations: { team: 'storage' },
        allowedTopologies: topology,
        pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}',
        nodeAffinityKey: 'topology.kubernetes.io/zone',
      },
    });
    r.expectValid();
    expect(r.only<IStorageClass>('StorageClass')).toMatchObject({
      metadata: {
        name: 'fast',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true', team: 'storage' },
      },
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'Immediate',
      allowedTopologies: topology,
      parameters: {
        pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}',
        nodeAffinityKey: 'topology.kubernetes.io/zone',
      },
    });
    expect(await r.notes()).toContain('StorageClass: fast (default)');
  });

  it('nodePathMap: config.json holds the given nodes and paths', async () => {
    const nodePathMap = [
      { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] },
      { node: 'node-1', paths: ['/data1', '/data2'] },
      { node: 'node-2', paths: [] },
    ];
    const r = await render({ nodePathMap });
    r.expectValid();
    const config = parseConfig(r.configData['config.json']!);
    expect(Object.fromEntries(config.defaultConfig!.nodePathMap)).toEqual({
      DEFAULT_PATH_FOR_NON_LISTED_NODES: ['/opt/local-path-provisioner'],
      'node-1': ['/data1', '/data2'],
      'node-2': [],
    });
  });

  it('sharedFileSystemPath (with nodePathMap: []): config.json is in shared mode', async () => {
    const r = await render({
      nodePathMap: [],
      sharedFileSystemPath: '/mnt/shared',
      storageClass: { volumeBindingMode: 'Immediate' },
    });
    r.expectValid();
    const config = parseConfig(r.configData['config.json']!);
    expect(storageModeOf(selectClassConfig(config, 'local-path'))).toBe('shared');
    expect(config.defaultConfig?.sharedFileSystemPath).toBe('/mnt/shared');
  });

  it('storageClassConfigs: one class per entry, each with its own config', async () => {
    const r = await render({
      storageClassConfigs: {
        'local-path': {
          storageClass: { create: true },
          nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/lp'] }],
        },
        'local-path-shared': {
          storageClass: { create: true, volumeBindingMode: 'Immediate' },
          sharedFileSystemPath: '/mnt/shared',
        },
        'not-created': { storageClass: { create: false }, sharedFileSystemPath: '/mnt/other' },
      },
    });
    r.expectValid();
    expect(r.all<IStorageClass>('StorageClass').map((c) => [c.metadata?.name, c.volumeBindingMode])).toEqual([
      ['local-path', 'WaitForFirstConsumer'],
      ['local-path-shared', 'Immediate'],
    ]);
    const config = parseConfig(r.configData['config.json']!);
    expect(storageModeOf(selectClassConfig(config, 'local-path'))).toBe('local');
    expect(storageModeOf(selectClassConfig(config, 'local-path-shared'))).toBe('shared');
    expect(config.storageClassConfigs.has('not-created')).toBe(true);
    expect(await r.notes()).toContain('StorageClasses: local-path, local-path-shared, not-created');
  });

  it('configmap.helperPod: tolerations, annotations and namespaceOverride land in a template that passes the checks', async () => {
    const toleration = { key: 'dedicated', operator: 'Equal', value: 'storage', effect: 'NoSchedule' };
    const r = await render({
      configmap: {
        helperPod: { tolerations: [toleration], annotations: { 'x/y': 'z' }, namespaceOverride: 'helpers' },
      },
    });
    r.expectValid();
    const pod = loadHelperPodTemplate(r.configData['helperPod.yaml']!, false);
    expect(pod.spec?.tolerations).toEqual([
      { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
      toleration,
    ]);
    expect(pod.metadata).toMatchObject({ namespace: 'helpers', annotations: { 'x/y': 'z' } });
  });

  it("helperPod.resources and image.pullPolicy reach the helper pod's container", async () => {
    const resources = { requests: { cpu: '10m', memory: '16Mi' } };
    const r = await render({ helperPod: { resources }, image: { pullPolicy: 'Always' } });
    r.expectValid();
    const c = loadHelperPodTemplate(r.configData['helperPod.yaml']!, false).spec!.containers[0]!;
    expect(c).toMatchObject({ resources, imagePullPolicy: 'Always' });
  });

  it("imagePullSecrets and a registry secret: the Secret, the ServiceAccount's and the pod's pull secrets", async () => {
    const r = await render({
      imagePullSecrets: [{ name: 'pull' }],
      defaultSettings: { registrySecret: 'registry' },
      privateRegistry: { registryUrl: 'registry.example:5000', registryUser: 'user', registryPasswd: 'secret' },
    });
    r.expectValid();
    expect(r.kinds()).toEqual([...BASE_KINDS, 'Secret'].sort());
    const secret = r.only<ISecret>('Secret');
    expect(secret).toMatchObject({
      metadata: { name: 'registry', namespace: NAMESPACE },
      type: 'kubernetes.io/dockerconfigjson',
    });
    const config = JSON.parse(Buffer.from(secret.data!['.dockerconfigjson']!, 'base64').toString('utf8')) as unknown;
    expect(config).toEqual({
      auths: { 'registry.example:5000': { auth: Buffer.from('user:secret').toString('base64') } },
    });
    expect(r.only<IServiceAccount>('ServiceAccount').imagePullSecrets).toEqual([
      { name: 'pull' },
      { name: 'registry' },
    ]);
    expect(r.deployment.spec?.template.spec?.imagePullSecrets).toEqual([{ name: 'pull' }]);
    expect(containerOf(r.deployment).image).toBe(
      `registry.example:5000/ghcr.io/kprov/local-path:${packageJson.version}`,
    );
    expect(startOptions(r.deployment).helperImage).toBe('registry.example:5000/docker.io/library/busybox:latest');
  });

  it("replicaCount: 2 with a PodDisruptionBudget that selects the provisioner's pods; leader election stays on", async () => {
    const r = await render({ replicaCount: 2, podDisruptionBudget: { enabled: true, minAvailable: 1 } });
    r.expectValid();
    expect(r.deployment.spec?.replicas).toBe(2);
    const pdb = r.only<IPodDisruptionBudget>('PodDisruptionBudget');
    expect(pdb.spec?.minAvailable).toBe(1);
    expect(r.deployment.spec?.template.metadata?.labels).toMatchObject(pdb.spec!.selector!.matchLabels!);
    expect(startOptions(r.deployment).leaderElection).toBe(true);
    expect(await r.notes()).toContain('Leader election: on (replicas: 2)');
  });

  it('debug, workerThreads, retry counts, extraArgs and leaderElection.enabled reach the command line', async () => {
    const r = await render({
      debug: true,
      workerThreads: 8,
      provisioningRetryCount: 3,
      deletionRetryCount: 5,
      extraArgs: ['--kube-api-qps=20'],
      leaderElection: { enabled: false },
    });
    r.expectValid();
    expect(startOptions(r.deployment)).toMatchObject({
      debug: true,
      workerThreads: 8,
      provisioningRetryCount: 3,
      deletionRetryCount: 5,
      kubeApiQps: 20,
      leaderElection: false,
    });
  });

  it('pod settings: podAnnotations, resources, nodeSelector, tolerations, affinity, priorityClassName, security contexts', async () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }],
        },
      },
    };
    const values = {
      podAnnotations: { 'prometheus.io/scrape': 'true' },
      resources: { limits: { cpu: '100m', memory: '128Mi' } },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
      affinity,
      priorityClassName: 'system-cluster-critical',
      podSecurityContext: { runAsNonRoot: true },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
      hostUsers: false,
    };
    const r = await render(values);
    r.expectValid();
    const spec = r.deployment.spec!.template.spec!;
    expect(r.deployment.spec?.template.metadata?.annotations).toEqual(values.podAnnotations);
    expect(spec).toMatchObject({
      nodeSelector: values.nodeSelector,
      tolerations: values.tolerations,
      affinity,
      priorityClassName: values.priorityClassName,
      securityContext: values.podSecurityContext,
      hostUsers: false,
    });
    expect(containerOf(r.deployment)).toMatchObject({
      resources: values.resources,
      securityContext: values.securityContext,
    });
  });

  it('health.enabled: false drops the port, the probes and HEALTH_PORT', async () => {
    const r = await render({ health: { enabled: false } });
    r.expectValid();
    const c = containerOf(r.deployment);
    expect([c.ports, c.startupProbe, c.livenessProbe, c.readinessProbe]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect((c.env ?? []).map((e) => e.name)).toEqual(['POD_NAMESPACE', 'CONFIG_MOUNT_PATH']);
  });

  it('rbac.create and serviceAccount.create false: no RBAC, no account, and the command names the given account', async () => {
    const r = await render({ rbac: { create: false }, serviceAccount: { create: false, name: 'existing' } });
    r.expectValid();
    expect(r.kinds()).toEqual(['ConfigMap', 'Deployment', 'StorageClass']);
    expect(startOptions(r.deployment).serviceAccountName).toBe('existing');
    expect(r.deployment.spec?.template.spec?.serviceAccountName).toBe('existing');
  });

  it('commonLabels, fullnameOverride and namespaceOverride apply to every object', async () => {
    const r = await render({
      commonLabels: { team: 'storage' },
      fullnameOverride: 'lpp',
      namespaceOverride: 'storage-system',
    });
    r.expectValid();
    for (const o of r.objects) expect(o.metadata?.labels?.team, o.kind).toBe('storage');
    expect(r.deployment.metadata).toMatchObject({ name: 'lpp', namespace: 'storage-system' });
    const account = r.only<IServiceAccount>('ServiceAccount').metadata!;
    expect(account).toMatchObject({ name: 'lpp', namespace: 'storage-system' });
    const rules = grantedRules(r.objects, { name: 'lpp', namespace: 'storage-system' }, 'storage-system');
    expectAllowed(rules.cluster, CLUSTER_GRANTS);
    expectAllowed(rules.namespaced, NAMESPACE_GRANTS);
  });
});

// ---- values.yaml and templates/ as text: what rendering cannot show

/** Upstream chart 0.0.37's values keys (reference section 5.3) that values.yaml sets. */
const UPSTREAM_VALUES = [
  'replicaCount',
  'commonLabels',
  'namespaceOverride',
  'nameOverride',
  'fullnameOverride',
  'image.repository',
  'image.tag',
  'image.pullPolicy',
  'helperImage.repository',
  'helperImage.tag',
  'defaultSettings.registrySecret',
  'privateRegistry.registryUrl',
  'privateRegistry.registryUser',
  'privateRegistry.registryPasswd',
  'imagePullSecrets',
  'storageClass.create',
  'storageClass.defaultClass',
  'storageClass.defaultVolumeType',
  'storageClass.name',
  'storageClass.reclaimPolicy',
  'storageClass.volumeBindingMode',
  'storageClass.allowedTopologies',
  'storageClass.annotations',
  'storageClass.userPattern',
  'storageClass.groupPattern',
  'storageClass.permPattern',
  'nodePathMap',
  'podAnnotations',
  'podSecurityContext',
  'hostUsers',
  'securityContext',
  'resources',
  'helperPod.resources',
  'rbac.create',
  'serviceAccount.create',
  'nodeSelector',
  'tolerations',
  'affinity',
  'priorityClassName',
  'podDisruptionBudget.enabled',
  'configmap.name',
  'configmap.setup',
  'configmap.teardown',
  'configmap.helperPod.namespaceOverride',
  'configmap.helperPod.name',
  'configmap.helperPod.annotations',
  'configmap.helperPod.tolerations',
  'configmap.helperPod.priorityClassName',
  'debug',
  'extraArgs',
  'health.enabled',
  'health.port',
  'health.startupProbe',
  'health.livenessProbe',
  'health.readinessProbe',
];
/** Upstream's keys that are unset by default: present in values.yaml as comments only. */
const UPSTREAM_COMMENTED = [
  'storageClass.provisionerName',
  'storageClass.pathPattern',
  'storageClass.nodeAffinityKey',
  'sharedFileSystemPath',
  'storageClassConfigs',
  'serviceAccount.name',
  'podDisruptionBudget.maxUnavailable',
  'podDisruptionBudget.minAvailable',
  'podDisruptionBudget.unhealthyPodEvictionPolicy',
  'workerThreads',
  'provisioningRetryCount',
  'deletionRetryCount',
];
/** Our additions. */
const OUR_VALUES = [
  'leaderElection.enabled',
  'mode',
  'nodeMode.hostPaths',
  'nodeMode.tolerations',
  'nodeMode.priorityClassName',
];

const TEMPLATES = [
  'NOTES.txt',
  '_helpers.tpl',
  'clusterrole.yaml',
  'clusterrolebinding.yaml',
  'configmap.yaml',
  'daemonset.yaml',
  'deployment.yaml',
  'pdb.yaml',
  'registry-secret.yaml',
  'role.yaml',
  'rolebinding.yaml',
  'serviceaccount.yaml',
  'storageclass.yaml',
];

const valuesText = readFileSync(join(chartDir, 'values.yaml'), 'utf8');
const values = parseYaml(valuesText, { uniqueKeys: true }) as Record<string, unknown>;

/** The dotted paths of `value`'s keys, down to the leaves (a non-empty map is not itself a leaf). */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    return prefix === '' ? [] : [prefix];
  }
  return Object.entries(value).flatMap(([k, v]) => [
    ...(prefix === '' ? [] : [prefix]),
    ...keyPaths(v, prefix === '' ? k : `${prefix}.${k}`),
  ]);
}

function lookup(path: string): unknown {
  let v: unknown = values;
  for (const k of path.split('.'))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

describe('deploy/chart/local-path-provisioner as files', () => {
  it("Chart.yaml: upstream's chart name, our version", () => {
    const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'), { uniqueKeys: true }) as Values;
    expect(chart).toMatchObject({
      apiVersion: 'v2',
      name: 'local-path-provisioner',
      appVersion: packageJson.version,
    });
    expect(chart.version).toBe(packageJson.version);
  });

  it("has upstream's set of templates", () => {
    expect(readdirSync(join(chartDir, 'templates')).sort()).toEqual(TEMPLATES);
  });

  it("values.yaml has every key of upstream's chart, and only ours besides", () => {
    const present = keyPaths(values);
    for (const key of [...UPSTREAM_VALUES, ...OUR_VALUES]) expect(present, key).toContain(key);
    const known = new Set([...UPSTREAM_VALUES, ...OUR_VALUES]);
    const unknown = present.filter(
      (p) => !known.has(p) && ![...known].some((k) => k.startsWith(`${p}.`) || p.startsWith(`${k}.`)),
    );
    expect(unknown).toEqual([]);
    for (const key of UPSTREAM_COMMENTED) {
      expect(lookup(key), `${key} is unset`).toBeUndefined();
      expect(valuesText, `${key} is shown in a comment`).toMatch(
        new RegExp(`^\\s*#\\s*${key.split('.').at(-1)}:`, 'm'),
      );
    }
    expect(lookup('image.repository')).toBe('ghcr.io/kprov/local-path');
    expect(String(lookup('image.tag'))).toBe(packageJson.version);
  });

  // A misspelt key renders as empty without an error, so no render test would notice it.
  it.each(TEMPLATES)('templates/%s reads only keys values.yaml has or documents', (name) => {
    const text = readFileSync(join(chartDir, 'templates', name), 'utf8');
    for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_]\w*)+)/g)) {
      const key = m[1]!.slice(1);
      const known = lookup(key) !== undefined || UPSTREAM_COMMENTED.includes(key) || keyPaths(values).includes(key);
      expect(known, `.Values.${key}`).toBe(true);
    }
  });
});
