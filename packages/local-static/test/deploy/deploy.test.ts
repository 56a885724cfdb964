/**
 * The manifests of deploy/ and the Helm chart: they parse, their ConfigMap is a config the binary takes whole, the
 * DaemonSet mounts it where the binary reads it and each discovery directory where the config says, and the chart
 * (rendered by helm itself, `helm template`, with the helm @kprov/testkit's findHelm finds) renders the same shapes
 * from upstream's values.
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
});
