// The deployment artefacts deploy/local-path-storage.yaml and examples/*.yaml: every document parses and validates
// against the Kubernetes OpenAPI schemas (no cluster needed), the objects refer to each other correctly, and the
// ConfigMap's config.json and helperPod.yaml pass the provisioner's own checks. The Helm chart is rendered and
// checked the same way in chart.test.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifestFiles } from '@kprov/testkit';
import { describeManifestFiles } from '@kprov/testkit/vitest';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import type { IConfigMap, IContainer, IPersistentVolumeClaim, IPod, IServiceAccount } from 'kubernetes-models/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IClusterRoleBinding, IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import type { LocalPathOptions } from '../../src/cli/options.js';
import {
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  chooseBasePath,
  parseConfig,
  selectClassConfig,
  storageModeOf,
  type Config,
} from '../../src/config/index.js';
import {
  HelperPodTemplateError,
  loadHelperPodTemplate,
  validateHelperPodTemplate,
} from '../../src/executor/helper-pod/template.js';
import { parseVolumeParameters } from '../../src/volume/parameters.js';
import { folderFromPattern } from '../../src/volume/path-pattern.js';
import { SETUP_SCRIPT, TEARDOWN_SCRIPT } from '../provisioner/helpers.js';
import {
  CLUSTER_GRANTS,
  NAMESPACE_GRANTS,
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
const MANIFEST = 'deploy/local-path-storage.yaml';

const exampleFiles = readdirSync(join(packageDir, 'examples'))
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .map((f) => `examples/${f}`);
const files = [MANIFEST, ...exampleFiles];
const manifests = loadManifestFiles(packageDir, files);
const { byFile } = manifests;

function all<T>(file: string, kind: string): T[] {
  return (byFile.get(file) ?? []).filter((d) => d.kind === kind) as T[];
}

function only<T>(file: string, kind: string): T {
  const found = all<T>(file, kind);
  expect(found, `${file} holds exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

// ---- deploy/local-path-storage.yaml, looked up inside each test so a missing object fails that test only
const account = (): IServiceAccount => only<IServiceAccount>(MANIFEST, 'ServiceAccount');
const deployment = (): IDeployment => only<IDeployment>(MANIFEST, 'Deployment');
const podSpec = (): NonNullable<NonNullable<IDeployment['spec']>['template']['spec']> =>
  deployment().spec!.template.spec!;
const container = (): IContainer => podSpec().containers[0]!;
const configMap = (file = MANIFEST): IConfigMap => only<IConfigMap>(file, 'ConfigMap');
const data = (file = MANIFEST): Record<string, string> => configMap(file).data ?? {};
const mainConfig = (): Config => parseConfig(data()['config.json'] ?? '', '/etc/config/config.json');
const mainClass = (): IStorageClass => only<IStorageClass>(MANIFEST, 'StorageClass');

/** The container's command as local-path-provisioner parses it (downward API values filled in). */
const cli = (extraEnv: Record<string, string> = {}): LocalPathOptions => startOptions(deployment(), extraEnv);

describe('deploy/local-path-storage.yaml and examples/', () => {
  it('has the manifest and the examples of upstream, each with documents', () => {
    expect(exampleFiles).toEqual([
      'examples/path-pattern.yaml',
      'examples/pod.yaml',
      'examples/pvc-with-node.yaml',
      'examples/pvc.yaml',
      'examples/quota.yaml',
      'examples/shared-rwx.yaml',
    ]);
    for (const [file, docs] of byFile) expect(docs.length, file).toBeGreaterThan(0);
  });

  describeManifestFiles(manifests, validate, ValidationError);

  describe.each(files.filter((f) => all(f, 'ConfigMap').length > 0))('%s', (file) => {
    it.each(all<IConfigMap>(file, 'ConfigMap').map((c) => [c.metadata?.name, c] as const))(
      'ConfigMap %s: the four keys, config.json, helperPod.yaml and the scripts are usable',
      (_, cm) => expectUsableConfigMapData(cm.data ?? {}, file === 'examples/quota.yaml'),
    );
  });

  it('rejects a Deployment without containers and a document of a kind it has no schema for', () => {
    const broken = structuredClone(deployment());
    broken.spec!.template.spec!.containers = [{ image: 'x' } as never];
    expect(() => validate(broken as Manifest)).toThrow(/must have required property '?name'?/);
    expect(() => validate({ apiVersion: 'v1', kind: 'Podd', metadata: { name: 'x' } })).toThrow(/no schema/);
  });

  it('names each object once per kind and namespace in the manifest', () => {
    const keys = (byFile.get(MANIFEST) ?? []).map(
      (d) => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`,
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBe(9);
  });

  describe("the manifest keeps upstream's names", () => {
    it('namespace, service account, ConfigMap, class and provisioner name', () => {
      expect(only<Manifest>(MANIFEST, 'Namespace').metadata?.name).toBe('local-path-storage');
      for (const d of byFile.get(MANIFEST) ?? []) {
        if (!['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'StorageClass'].includes(d.kind)) {
          expect(d.metadata?.namespace, `${d.kind} ${d.metadata?.name}`).toBe('local-path-storage');
        }
      }
      expect(account().metadata?.name).toBe('local-path-provisioner-service-account');
      expect(deployment().metadata?.name).toBe('local-path-provisioner');
      expect(configMap().metadata?.name).toBe('local-path-config');
      expect(mainClass()).toMatchObject({
        metadata: { name: 'local-path' },
        provisioner: 'rancher.io/local-path',
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      });
    });

    it("config.json: upstream's single default entry, /opt/local-path-provisioner", () => {
      const config = mainConfig();
      expect(config.storageClassConfigs.size).toBe(0);
      expect([...(config.defaultConfig?.nodePathMap ?? new Map<string, readonly string[]>())]).toEqual([
        [DEFAULT_PATH_FOR_NON_LISTED_NODES, ['/opt/local-path-provisioner']],
      ]);
    });

    it("helperPod.yaml passes the template checks, with upstream's container name and toleration", () => {
      const pod = loadHelperPodTemplate(data()['helperPod.yaml']!, false);
      expect(() => validateHelperPodTemplate(pod, false)).not.toThrow();
      expect(pod.spec?.containers.map((c) => c.name)).toEqual(['helper-pod']); // its logs are read by that name
      expect(pod.spec?.priorityClassName).toBe('system-node-critical');
      expect(pod.spec?.tolerations).toEqual([
        { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
      ]);
    });

    it("the scripts are upstream's, refusing a path through a symbolic link", () => {
      expect(`${data().setup}\n`).toBe(SETUP_SCRIPT);
      expect(`${data().teardown}\n`).toBe(TEARDOWN_SCRIPT);
    });
  });

  describe('the Deployment', () => {
    it('runs our image at the package version, as the ServiceAccount of the manifest', () => {
      expect(podSpec().containers).toHaveLength(1);
      expect(container().image).toBe(`ghcr.io/kprov/local-path:${packageJson.version}`);
      expect(podSpec().serviceAccountName).toBe(account().metadata?.name);
      expect(account().metadata?.namespace).toBe(deployment().metadata?.namespace);
    });

    it('selects the pods of its template', () => {
      const labels = deployment().spec?.template.metadata?.labels ?? {};
      expect(deployment().spec?.selector.matchLabels).toEqual({ app: 'local-path-provisioner' });
      expect(labels).toMatchObject(deployment().spec!.selector.matchLabels!);
    });

    it('has leader election on, so its replicas (1 or 2) never provision a claim twice', () => {
      expect([1, 2]).toContain(deployment().spec?.replicas);
      const options = cli();
      expect(options.leaderElection).toBe(true);
      expect(options.leaderElectionNamespace).toBe('local-path-storage');
      expect(options.debug).toBe(true);
    });

    it('gets POD_NAMESPACE from the downward API and CONFIG_MOUNT_PATH as upstream', () => {
      const env = new Map((container().env ?? []).map((e) => [e.name, e]));
      expect(env.get('POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
      expect(env.get('CONFIG_MOUNT_PATH')?.value).toBe('/etc/config/');
      const options = cli();
      expect(options.namespace).toBe(deployment().metadata?.namespace);
      expect(options.configMountPath).toBe('/etc/config/');
    });

    it('reads config.json and helperPod.yaml from the mounted ConfigMap, and names it and the ServiceAccount', () => {
      const options = cli();
      expect(options.config).toBe('/etc/config/config.json');
      expect(mountedConfigMapName(deployment(), options)).toBe(configMap().metadata?.name);
      expect(Object.keys(data())).toContain(options.config!.slice(options.configMountPath!.length));
      expect(Object.keys(data())).toContain('helperPod.yaml');
      expect(options.configmapName).toBe(configMap().metadata?.name);
      expect(options.serviceAccountName).toBe(account().metadata?.name);
      expect(options.provisionerName).toBe(mainClass().provisioner);
    });

    it('probes /health (startup, liveness) and /ready (readiness) on the health port', () => {
      const { healthPort } = cli();
      const port = (container().ports ?? []).find((p) => p.name === 'health');
      expect(port?.containerPort).toBe(healthPort);
      const c = container();
      for (const [probe, path] of [
        [c.startupProbe, '/health'],
        [c.livenessProbe, '/health'],
        [c.readinessProbe, '/ready'],
      ] as const) {
        expect(probe?.httpGet?.path).toBe(path);
        expect([port?.name, port?.containerPort]).toContain(probe?.httpGet?.port);
      }
    });
  });

  describe('RBAC', () => {
    const isAccount = (s: { kind: string; name: string; namespace?: string }): boolean =>
      s.kind === 'ServiceAccount' &&
      s.name === account().metadata?.name &&
      s.namespace === account().metadata?.namespace;

    it('every binding refers to a role of the manifest and binds the ServiceAccount', () => {
      const names = (kind: string): (string | undefined)[] =>
        all<Manifest>(MANIFEST, kind).map((r) => r.metadata?.name);
      const bindings = [
        ...all<IClusterRoleBinding>(MANIFEST, 'ClusterRoleBinding'),
        ...all<IRoleBinding>(MANIFEST, 'RoleBinding'),
      ];
      expect(bindings).toHaveLength(2);
      for (const b of bindings) {
        expect(b.roleRef.apiGroup).toBe('rbac.authorization.k8s.io');
        expect(names(b.roleRef.kind), `${b.kind} ${b.metadata?.name}`).toContain(b.roleRef.name);
        expect((b.subjects ?? []).some(isAccount), `${b.kind} ${b.metadata?.name} binds the account`).toBe(true);
      }
    });

    const rules = (): ReturnType<typeof grantedRules> =>
      grantedRules(
        byFile.get(MANIFEST) ?? [],
        { name: account().metadata!.name!, namespace: account().metadata!.namespace! },
        deployment().metadata!.namespace!,
      );

    it('cluster-wide: PVC update (reschedule), PV patch (finalizer), events, classes, nodes, helper logs', () => {
      expectAllowed(rules().cluster, CLUSTER_GRANTS);
    });

    it('in the namespace: helper pods and the leader election Lease', () => {
      expectAllowed(rules().namespaced, NAMESPACE_GRANTS);
      expect(cli().leaderElectionNamespace).toBe(deployment().metadata?.namespace);
    });
  });

  describe('examples', () => {
    const classes = (): IStorageClass[] => files.flatMap((f) => all<IStorageClass>(f, 'StorageClass'));
    const classNamed = (name: string | undefined): IStorageClass | undefined =>
      classes().find((c) => c.metadata?.name === name);

    it('every class is ours (the provisioner name of the manifest) with parameters the provisioner accepts', () => {
      const names = classes().map((c) => c.metadata?.name);
      expect(new Set(names).size, 'class names are unique').toBe(names.length);
      for (const c of classes()) {
        expect(c.provisioner, c.metadata?.name).toBe(mainClass().provisioner);
        expect(() =>
          parseVolumeParameters({ parameters: c.parameters, storageClassAnnotations: c.metadata?.annotations }),
        ).not.toThrow();
      }
    });

    it('every claim names a class of the manifest or the examples', () => {
      const claims = files.flatMap((f) => all<IPersistentVolumeClaim>(f, 'PersistentVolumeClaim'));
      expect(claims.length).toBeGreaterThanOrEqual(5);
      for (const claim of claims) expect(classNamed(claim.spec?.storageClassName), claim.metadata?.name).toBeDefined();
    });

    it("pod.yaml is upstream's volume-test, mounting the claim of pvc.yaml", () => {
      const claim = only<IPersistentVolumeClaim>('examples/pvc.yaml', 'PersistentVolumeClaim');
      expect(claim.metadata?.name).toBe('local-path-pvc');
      expect(claim.spec).toMatchObject({ accessModes: ['ReadWriteOnce'], storageClassName: 'local-path' });
      const pod = only<IPod>('examples/pod.yaml', 'Pod');
      expect(pod.metadata?.name).toBe('volume-test');
      expect(pod.metadata?.namespace).toBe(claim.metadata?.namespace);
      const volume = (pod.spec?.volumes ?? []).find((v) => v.persistentVolumeClaim !== undefined);
      expect(volume?.persistentVolumeClaim?.claimName).toBe(claim.metadata?.name);
      expect(pod.spec?.containers[0]?.volumeMounts).toContainEqual({ name: volume?.name, mountPath: '/data' });
    });

    it("pvc-with-node.yaml: the nodePath is one of the node's paths in the default config, the node is annotated", () => {
      const claim = only<IPersistentVolumeClaim>('examples/pvc-with-node.yaml', 'PersistentVolumeClaim');
      const node = claim.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
      expect(node).toBeTruthy();
      const storageClass = classNamed(claim.spec?.storageClassName)!;
      const { nodePath } = parseVolumeParameters({ parameters: storageClass.parameters });
      expect(nodePath).toBeDefined();
      const base = chooseBasePath(selectClassConfig(mainConfig(), storageClass.metadata!.name!), {
        nodeName: node!,
        nodePath,
      });
      expect(base).toMatchObject({ mode: 'local', path: nodePath });
    });

    it('path-pattern.yaml: the pattern passes the safe checks and gives <namespace>/<name>', () => {
      const claim = only<IPersistentVolumeClaim>('examples/path-pattern.yaml', 'PersistentVolumeClaim');
      const { pathPattern, allowUnsafePathPattern } = parseVolumeParameters({
        parameters: classNamed(claim.spec?.storageClassName)?.parameters,
      });
      expect(allowUnsafePathPattern).toBe(false);
      const folder = folderFromPattern(
        pathPattern!,
        { pvName: 'pvc-1', pvc: { name: claim.metadata?.name, namespace: claim.metadata?.namespace } },
        false,
      );
      expect(folder).toBe(`${claim.metadata?.namespace}/${claim.metadata?.name}`);
    });

    describe.each(['examples/shared-rwx.yaml', 'examples/quota.yaml'])('%s replaces the ConfigMap', (file) => {
      it('same name and namespace, and local-path keeps its config', () => {
        expect(configMap(file).metadata).toEqual(configMap().metadata);
        const config = parseConfig(data(file)['config.json']!, '/etc/config/config.json');
        expect(config.storageClassConfigs.size, 'storageClassConfigs are used').toBeGreaterThan(0);
        expect(selectClassConfig(config, 'local-path')).toEqual(selectClassConfig(mainConfig(), 'local-path'));
        for (const c of all<IStorageClass>(file, 'StorageClass')) {
          expect(config.storageClassConfigs.has(c.metadata!.name!), `${c.metadata?.name} in storageClassConfigs`).toBe(
            true,
          );
        }
      });
    });

    it("shared-rwx.yaml: a shared class with an RWX claim; the other keys are the manifest's", () => {
      const file = 'examples/shared-rwx.yaml';
      const config = parseConfig(data(file)['config.json']!, '/etc/config/config.json');
      const claim = only<IPersistentVolumeClaim>(file, 'PersistentVolumeClaim');
      expect(claim.spec?.accessModes).toEqual(['ReadWriteMany']);
      const classConfig = selectClassConfig(config, claim.spec!.storageClassName!);
      expect(storageModeOf(classConfig)).toBe('shared');
      expect(classConfig.sharedFileSystemPath).toMatch(/^\/./);
      for (const key of ['setup', 'teardown', 'helperPod.yaml']) expect(data(file)[key], key).toBe(data()[key]);
    });

    it('quota.yaml: the privileged template needs ALLOW_UNSAFE_HELPER_POD_TEMPLATE, which its comment sets', () => {
      const file = 'examples/quota.yaml';
      const template = data(file)['helperPod.yaml']!;
      expect(() => loadHelperPodTemplate(template, false)).toThrow(HelperPodTemplateError);
      const pod = loadHelperPodTemplate(template, true);
      expect(pod.spec?.containers.map((c) => c.name)).toEqual(['helper-pod']);
      expect((pod.spec?.volumes ?? []).map((v) => v.hostPath?.path).sort()).toEqual([
        '/dev',
        '/etc/projects',
        '/etc/projid',
      ]);
      const text = readFileSync(join(packageDir, file), 'utf8');
      const set = /set env deployment\/(\S+) (ALLOW_UNSAFE_HELPER_POD_TEMPLATE)=(\S+)/.exec(text);
      expect(set?.[1]).toBe(deployment().metadata?.name);
      expect(cli({ [set![2]!]: set![3]! }).allowUnsafeHelperPodTemplate).toBe(true);
      const claim = only<IPersistentVolumeClaim>(file, 'PersistentVolumeClaim');
      const config = parseConfig(data(file)['config.json']!, '/etc/config/config.json');
      expect(storageModeOf(selectClassConfig(config, claim.spec!.storageClassName!))).toBe('local');
      expect(data(file).setup).toContain('bhard=$VOL_SIZE_BYTES');
    });
  });
});
