/**
 * The manifests of deploy/ and the Helm chart: they parse, their ConfigMap is a config the binary takes whole, the
 * DaemonSet mounts it where the binary reads it and each discovery directory where the config says, and the chart
 * (rendered by helm itself, `helm template`, with the helm @kprov/testkit's findHelm finds) renders the same shapes
 * from upstream's values: its default values.yaml and examples, a class's `allowedTopologies` (YAML or a string
 * template), the Service and ServiceMonitor of `serviceMonitor`, a plain-string `image`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helmTemplate } from '@kprov/testkit';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildConfig, DEFAULT_CONFIG_DIR } from '../../src/config/config.js';
import { parseConfigTexts } from '../../src/config/source.js';

type Obj = { kind: string; metadata?: { name?: string; namespace?: string }; [k: string]: unknown };

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const CHART = `${DEPLOY}chart/local-static-provisioner`;

/** `helm template <releaseName> <chart> --namespace <namespace> -f <values>`. */
async function render(releaseName: string, namespace: string, values: Record<string, unknown> = {}): Promise<Obj[]> {
  const objects = await helmTemplate(CHART, { releaseName, namespace, values });
  return objects as unknown as Obj[];
}

/**
 * Upstream's chart values.yaml (local-static-provisioner 2.9.0) as it comes, comments left out: what `helm show values`
 * of upstream's chart gives, and so what a values file written from it holds.
 */
const UPSTREAM_DEFAULTS = {
  nameOverride: '',
  fullnameOverride: '',
  rbac: { create: true, extraRules: [] },
  serviceAccount: { create: true, name: '' },
  setPVOwnerRef: false,
  useJobForCleaning: false,
  useNodeNameOnly: false,
  additionalVolumes: [],
  mountDevVolume: true,
  additionalVolumeMounts: [],
  enableWindows: false,
  classes: [
    {
      name: 'fast-disks',
      hostDir: '/mnt/fast-disks',
      volumeMode: 'Filesystem',
      accessMode: 'ReadWriteOnce',
      fsType: 'ext4',
      namePattern: '*',
      allowedTopologies: null,
      blockCleanerCommand: ['/scripts/shred.sh', '2'],
    },
  ],
  podAnnotations: {},
  podLabels: {},
  image: 'registry.k8s.io/sig-storage/local-volume-provisioner:v{{ .Chart.AppVersion }}',
  imagePullSecrets: [],
  nodeSelector: {},
  nodeSelectorWindows: {},
  tolerations: [],
  removeNodeNotReadyTaint: false,
  provisionerNotReadyNodeTaintKey: 'sig-storage-local-static-provisioner/agent-not-ready',
  affinity: {},
  resources: {},
  securityContext: {},
  privileged: true,
  hostPID: false,
  livenessProbe: {
    tcpSocket: { port: 'metrics' },
    initialDelaySeconds: 10,
    periodSeconds: 60,
    timeoutSeconds: 5,
    failureThreshold: 3,
  },
  readinessProbe: {},
  startupProbe: {},
  initContainers: [],
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
  serviceMonitor: { enabled: false, interval: '10s', namespace: null, additionalLabels: {}, relabelings: [] },
};

/** The chart's appVersion. */
function appVersion(): string {
  const chart = parseAllDocuments(readFileSync(`${CHART}/Chart.yaml`, 'utf8'))[0]!.toJS() as { appVersion: string };
  return chart.appVersion;
}

/** The StorageClasses of `objects` by name. */
function storageClasses(objects: Obj[]): Record<string, Obj> {
  return Object.fromEntries(objects.filter((o) => o.kind === 'StorageClass').map((o) => [o.metadata!.name!, o]));
}

interface PodSpec {
  imagePullSecrets?: { name: string }[];
  containers: { image: string; imagePullPolicy?: string; env?: { name: string; value?: string }[] }[];
}

/** The pod spec of a DaemonSet or a Deployment. */
function podSpec(workload: Obj): PodSpec {
  return (workload.spec as { template: { spec: PodSpec } }).template.spec;
}

/** The pod labels of a DaemonSet or a Deployment. */
function podLabels(workload: Obj): Record<string, string> {
  return (workload.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
}

/** Whether every label of `selector` is in `labels`. */
function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function load(file: string): Obj[] {
  return parseAllDocuments(readFileSync(`${DEPLOY}${file}`, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}

interface Container {
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts: { name: string; mountPath: string; mountPropagation?: string }[];
  securityContext: { privileged: boolean };
  readinessProbe: { httpGet: { path: string } };
}

/** Checks that a DaemonSet runs the binary as its config needs, and returns the config. */
function checkDeployment(daemonSet: Obj, configMap: Obj): void {
  const data = configMap.data as Record<string, string>;
  const { config, errors } = buildConfig(parseConfigTexts(data));
  expect(errors).toEqual([]);
  const pod = (
    daemonSet.spec as {
      template: {
        spec: {
          containers: Container[];
          volumes: { name: string; configMap?: { name: string }; hostPath?: { path: string } }[];
        };
      };
    }
  ).template.spec;
  const container = pod.containers[0]!;
  expect(container.securityContext.privileged).toBe(true);
  expect(container.readinessProbe.httpGet.path).toBe('/ready');
  expect(container.env.find((e) => e.name === 'MY_NODE_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
  expect(container.env.map((e) => e.name)).toEqual(expect.arrayContaining(['MY_NAMESPACE', 'JOB_CONTAINER_IMAGE']));
  const mountOf = (path: string) => container.volumeMounts.find((m) => m.mountPath === path);
  const configVolume = pod.volumes.find((v) => v.name === mountOf(DEFAULT_CONFIG_DIR)?.name);
  expect(configVolume?.configMap?.name).toBe(configMap.metadata?.name);
  for (const cls of Object.values(config.storageClassMap)) {
    const mount = mountOf(cls.mountDir);
    expect(mount?.mountPropagation).toBe('HostToContainer');
    expect(pod.volumes.find((v) => v.name === mount?.name)?.hostPath?.path).toBe(cls.hostDir);
  }
}

describe('deploy/', () => {
  it('has a DaemonSet, its RBAC, its ConfigMap and the StorageClass, which fit together', () => {
    const [daemonSet] = load('daemonset.yaml');
    const [configMap] = load('configmap.yaml');
    const [storageClass] = load('storageclass.yaml');
    const rbac = load('rbac.yaml');
    expect(daemonSet?.kind).toBe('DaemonSet');
    checkDeployment(daemonSet!, configMap!);
    expect(storageClass).toMatchObject({
      kind: 'StorageClass',
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const { config } = buildConfig(parseConfigTexts(configMap!.data as Record<string, string>));
    expect(Object.keys(config.storageClassMap)).toEqual([storageClass!.metadata?.name]);
    expect(rbac.map((o) => o.kind)).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
    ]);
    expect(
      (daemonSet!.spec as { template: { spec: { serviceAccountName: string } } }).template.spec.serviceAccountName,
    ).toBe(rbac[0]!.metadata?.name);
  });
});

describe('the Helm chart', () => {
  it('renders a DaemonSet whose ConfigMap the binary takes whole, with its RBAC and StorageClass', async () => {
    const objects = await render('lsp', 'kube-system');
    const kinds = objects.map((o) => `${o.kind}/${o.metadata?.name ?? ''}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'ConfigMap/lsp-local-static-provisioner-config',
        'DaemonSet/lsp-local-static-provisioner',
        'ClusterRole/lsp-local-static-provisioner-node-clusterrole',
        'ClusterRoleBinding/lsp-local-static-provisioner-node-binding',
        'ServiceAccount/lsp-local-static-provisioner',
        'StorageClass/fast-disks',
      ]),
    );
    expect(kinds.some((k) => k.startsWith('Role/'))).toBe(false);
    const find = (kind: string): Obj => objects.find((o) => o.kind === kind)!;
    checkDeployment(find('DaemonSet'), find('ConfigMap'));
  });

  it("maps upstream's values onto the config keys", async () => {
    const objects = await render('lsp', 'default', {
      nodeLabels: ['topology.kubernetes.io/zone'],
      labelsForPV: { team: 'storage' },
      setPVOwnerRef: true,
      useJobForCleaning: true,
      removeNodeNotReadyTaint: true,
      tolerations: [{ key: 'dedicated', operator: 'Exists' }],
      classes: [
        {
          name: 'nvme',
          hostDir: '/mnt/nvme',
          mountDir: '/discovery/nvme',
          volumeMode: 'Block',
          namePattern: 'nvme*',
          storageClass: { reclaimPolicy: 'Retain', isDefaultClass: true },
        },
      ],
    });
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    const { config, errors } = buildConfig(parseConfigTexts(configMap.data as Record<string, string>));
    expect(errors).toEqual([]);
    expect(config).toMatchObject({
      nodeLabelsForPV: ['topology.kubernetes.io/zone'],
      labelsForPV: { team: 'storage' },
      setPVOwnerRef: true,
      useJobForCleaning: true,
      removeNodeNotReadyTaint: true,
      provisionerNotReadyNodeTaintKey: 'sig-storage-local-static-provisioner/agent-not-ready',
      jobTolerations: [{ key: 'dedicated', operator: 'Exists' }],
      storageClassMap: {
        nvme: { hostDir: '/mnt/nvme', mountDir: '/discovery/nvme', volumeMode: 'Block', namePattern: 'nvme*' },
      },
    });
    expect(objects.find((o) => o.kind === 'StorageClass')).toMatchObject({
      metadata: { name: 'nvme', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      reclaimPolicy: 'Retain',
      provisioner: 'kubernetes.io/no-provisioner',
    });
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['Role', 'RoleBinding']));
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet')!;
    checkDeployment(daemonSet, configMap);
    const tolerations = (daemonSet.spec as { template: { spec: { tolerations: { key: string }[] } } }).template.spec
      .tolerations;
    expect(tolerations.map((t) => t.key)).toEqual([
      'dedicated',
      'sig-storage-local-static-provisioner/agent-not-ready',
    ]);
  });

  it("renders a class's allowedTopologies given as YAML into its StorageClass", async () => {
    const zones = [
      {
        matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['eu-west-1a', 'eu-west-1b'] }],
      },
    ];
    const objects = await render('lsp', 'kube-system', {
      classes: [
        { name: 'zonal', hostDir: '/mnt/zonal', storageClass: true, allowedTopologies: zones },
        { name: 'anywhere', hostDir: '/mnt/anywhere', storageClass: true, allowedTopologies: null },
      ],
    });
    const classes = storageClasses(objects);
    expect(classes.zonal).toMatchObject({ allowedTopologies: zones, volumeBindingMode: 'WaitForFirstConsumer' });
    expect(classes.anywhere).toBeDefined();
    expect(classes.anywhere).not.toHaveProperty('allowedTopologies');
  });

  it("renders a class's allowedTopologies given as a string through tpl, flow or block YAML", async () => {
    const objects = await render('lsp', 'kube-system', {
      zone: 'eu-west-1a',
      classes: [
        {
          name: 'flow',
          hostDir: '/mnt/flow',
          storageClass: { reclaimPolicy: 'Retain' },
          allowedTopologies:
            '[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["{{ .Values.zone }}"]}]}]',
        },
        {
          name: 'block',
          hostDir: '/mnt/block',
          storageClass: true,
          allowedTopologies:
            '- matchLabelExpressions:\n    - key: topology.kubernetes.io/zone\n      values: [{{ .Values.zone | quote }}]\n',
        },
      ],
    });
    const zone = [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['eu-west-1a'] }] }];
    const classes = storageClasses(objects);
    expect(classes.flow).toMatchObject({ allowedTopologies: zone, reclaimPolicy: 'Retain' });
    expect(classes.block).toMatchObject({ allowedTopologies: zone, reclaimPolicy: 'Delete' });
  });

  it('has no Service and no ServiceMonitor by default', async () => {
    const objects = await render('lsp', 'kube-system');
    expect(objects.map((o) => o.kind)).not.toContain('Service');
    expect(objects.map((o) => o.kind)).not.toContain('ServiceMonitor');
  });

  it("renders a Service of the metrics port and a ServiceMonitor from upstream's serviceMonitor values", async () => {
    const relabelings = [
      {
        sourceLabels: ['__meta_kubernetes_pod_node_name'],
        separator: ';',
        regex: '^(.*)$',
        targetLabel: 'nodename',
        replacement: '$1',
        action: 'replace',
      },
    ];
    const objects = await render('lsp', 'kube-system', {
      serviceMonitor: {
        enabled: true,
        interval: '30s',
        namespace: 'monitoring',
        additionalLabels: { release: 'kube-prometheus-stack' },
        relabelings,
      },
      nodeCleanup: { enabled: true, storageClassNames: ['fast-disks'] },
    });
    const service = objects.find((o) => o.kind === 'Service')!;
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor')!;
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet')!;
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    expect(service).toMatchObject({
      apiVersion: 'v1',
      metadata: { name: 'lsp-local-static-provisioner', namespace: 'kube-system' },
      spec: { type: 'ClusterIP', ports: [{ name: 'metrics', port: 8080, targetPort: 'metrics' }] },
    });
    const serviceSpec = service.spec as { selector: Record<string, string> };
    // The provisioner's pods, not node-cleanup's.
    expect(selects(serviceSpec.selector, podLabels(daemonSet))).toBe(true);
    expect(selects(serviceSpec.selector, podLabels(deployment))).toBe(false);
    expect(monitor).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      metadata: {
        name: 'lsp-local-static-provisioner',
        namespace: 'monitoring',
        labels: { release: 'kube-prometheus-stack', 'app.kubernetes.io/instance': 'lsp' },
      },
      spec: {
        jobLabel: 'app.kubernetes.io/name',
        endpoints: [{ port: 'metrics', interval: '30s', scheme: 'http', relabelings }],
        namespaceSelector: { matchNames: ['kube-system'] },
      },
    });
    const monitorSpec = monitor.spec as { selector: { matchLabels: Record<string, string> } };
    expect(
      selects(monitorSpec.selector.matchLabels, (service.metadata as { labels: Record<string, string> }).labels),
    ).toBe(true);
  });

  it("renders upstream's default values.yaml and its examples as upstream's chart does", async () => {
    const defaults = await render('lsp', 'kube-system', UPSTREAM_DEFAULTS);
    const find = (objects: Obj[], kind: string): Obj => objects.find((o) => o.kind === kind)!;
    checkDeployment(find(defaults, 'DaemonSet'), find(defaults, 'ConfigMap'));
    // Upstream's default class has no storageClass: no StorageClass; serviceMonitor is off.
    expect(defaults.map((o) => o.kind)).not.toEqual(expect.arrayContaining(['StorageClass']));
    expect(defaults.map((o) => o.kind)).not.toEqual(expect.arrayContaining(['Service']));
    expect(podSpec(find(defaults, 'DaemonSet')).containers[0]?.image).toBe(
      `registry.k8s.io/sig-storage/local-volume-provisioner:v${appVersion()}`,
    );

    // helm/examples/baremetal-prometheus.yaml of upstream's repository.
    const prometheus = await render('lsp', 'kube-system', {
      classes: [
        {
          name: 'local-storage',
          hostDir: '/mnt/disks',
          blockCleanerCommand: ['/scripts/shred.sh', '2'],
          volumeMode: 'Block',
          storageClass: true,
        },
      ],
      serviceMonitor: { enabled: true },
    });
    checkDeployment(find(prometheus, 'DaemonSet'), find(prometheus, 'ConfigMap'));
    expect(find(prometheus, 'StorageClass').metadata?.name).toBe('local-storage');
    expect(find(prometheus, 'Service')).toBeDefined();
    expect(find(prometheus, 'ServiceMonitor')).toMatchObject({
      metadata: { namespace: 'kube-system' },
      spec: { endpoints: [{ port: 'metrics', interval: '10s' }] },
    });
    expect(find(prometheus, 'ServiceMonitor').spec).not.toHaveProperty('endpoints.0.relabelings');
  });

  it('takes a plain-string image through tpl, with imagePullPolicy and imagePullSecrets, for every container', async () => {
    const objects = await render('lsp', 'kube-system', {
      image: 'mirror.example/sig-storage/local-static:{{ .Chart.AppVersion }}',
      imagePullPolicy: 'Always',
      imagePullSecrets: [{ name: 'mirror' }],
      useJobForCleaning: true,
      nodeCleanup: { enabled: true, storageClassNames: ['fast-disks'] },
    });
    const image = `mirror.example/sig-storage/local-static:${appVersion()}`;
    for (const kind of ['DaemonSet', 'Deployment']) {
      const pod = podSpec(objects.find((o) => o.kind === kind)!);
      expect(pod.imagePullSecrets).toEqual([{ name: 'mirror' }]);
      expect(pod.containers[0]).toMatchObject({ image, imagePullPolicy: 'Always' });
    }
    const env = podSpec(objects.find((o) => o.kind === 'DaemonSet')!).containers[0]!.env!;
    expect(env.find((e) => e.name === 'JOB_CONTAINER_IMAGE')?.value).toBe(image);

    // Without imagePullPolicy, a plain-string image leaves the pull policy to Kubernetes, as upstream's chart does.
    const bare = await render('lsp', 'kube-system', { image: 'mirror.example/local-static:1' });
    const container = podSpec(bare.find((o) => o.kind === 'DaemonSet')!).containers[0]!;
    expect(container.image).toBe('mirror.example/local-static:1');
    expect(container).not.toHaveProperty('imagePullPolicy');
  });

  it("refuses nodeCleanupController.enabled, naming the chart's nodeCleanup values instead of ignoring it", async () => {
    await expect(
      render('lsp', 'kube-system', { nodeCleanupController: { enabled: true, storageClassNames: ['fast-disks'] } }),
    ).rejects.toThrow(/nodeCleanupController.*nodeCleanup\.enabled/s);
    // Left disabled (as in a values file written from that chart's defaults), it is no obstacle.
    const objects = await render('lsp', 'kube-system', { nodeCleanupController: { enabled: false } });
    expect(objects.map((o) => o.kind)).toContain('DaemonSet');
  });
});
