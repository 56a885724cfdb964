// The deployment artefacts: deploy/local-path-storage.yaml, examples/*.yaml and the Helm chart in deploy/chart/.
// Every document parses and validates against the Kubernetes OpenAPI schemas (no cluster needed), the objects refer
// to each other correctly, and the ConfigMap's config.json and helperPod.yaml pass the provisioner's own checks.
// The chart is checked without helm (none here): its values keys against upstream's chart 0.0.37, and each template
// as Go-template text (balanced actions and blocks, known includes and values).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import {
  ConfigMap,
  Namespace,
  type IContainer,
  PersistentVolumeClaim,
  Pod,
  ServiceAccount,
  type IConfigMap,
  type IPersistentVolumeClaim,
  type IPod,
  type IServiceAccount,
} from 'kubernetes-models/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
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
import { StorageClass, type IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { parseCommandLine, type LocalPathOptions } from '../../src/cli/options.js';
import {
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  chooseBasePath,
  parseConfig,
  selectClassConfig,
  storageModeOf,
  type Config,
} from '../../src/config/index.js';
import { HelperPodTemplateError, loadHelperPodTemplate, validateHelperPodTemplate } from '../../src/helper-pod/template.js';
import { parseVolumeParameters } from '../../src/volume/parameters.js';
import { folderFromPattern } from '../../src/volume/path-pattern.js';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
const MANIFEST = 'deploy/local-path-storage.yaml';
const chartDir = join(packageDir, 'deploy/chart/local-path-provisioner');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
}

/** A kubernetes-models class: its static apiVersion and kind, and instances that validate against the schema. */
type ModelClass<T> = { apiVersion: string; kind: string } & (new (data?: T) => { validate(): void });

function entry<T>(model: ModelClass<T>): [string, (doc: object) => void] {
  return [`${model.apiVersion}/${model.kind}`, (doc) => new model(doc as T).validate()];
}

/** Every kind allowed in the manifests. A document of any other kind fails the test instead of going unchecked. */
const validators = new Map([
  entry(Namespace),
  entry(ServiceAccount),
  entry(ClusterRole),
  entry(ClusterRoleBinding),
  entry(Role),
  entry(RoleBinding),
  entry(Deployment),
  entry(ConfigMap),
  entry(Pod),
  entry(StorageClass),
  entry(PersistentVolumeClaim),
]);

function validate(doc: Manifest): void {
  const run = validators.get(`${doc.apiVersion}/${doc.kind}`);
  if (run === undefined) throw new Error(`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
  run(doc);
}

function loadText(file: string, text: string): Manifest[] {
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${file}: not a YAML stream`);
  const out: Manifest[] = [];
  for (const [i, doc] of docs.entries()) {
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length > 0) throw new Error(`${file} document ${i + 1}: ${problems.map((p) => p.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null) continue; // an empty document, as kubectl skips it
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${file} document ${i + 1}: not a mapping`);
    out.push(value as Manifest);
  }
  return out;
}

const exampleFiles = readdirSync(join(packageDir, 'examples'))
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .map((f) => `examples/${f}`);
const files = [MANIFEST, ...exampleFiles];
/** Parse errors are kept for the per-file test to report, so one bad file does not hide the other tests. */
const parseErrors = new Map<string, Error>();
const byFile = new Map(
  files.map((f): [string, Manifest[]] => {
    try {
      return [f, loadText(f, readFileSync(join(packageDir, f), 'utf8'))];
    } catch (e) {
      parseErrors.set(f, e instanceof Error ? e : new Error(String(e)));
      return [f, []];
    }
  }),
);

function all<T>(file: string, kind: string): T[] {
  return (byFile.get(file) ?? []).filter((d) => d.kind === kind) as T[];
}

function only<T>(file: string, kind: string): T {
  const found = all<T>(file, kind);
  expect(found, `${file} holds exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

/** Whether one of `rules` grants `verb` on `resource` of API group `group` (wildcards included). */
function allows(rules: IPolicyRule[] | undefined, group: string, resource: string, verb: string): boolean {
  const has = (list: string[] | undefined, v: string): boolean =>
    list !== undefined && (list.includes(v) || list.includes('*'));
  return (rules ?? []).some((r) => has(r.apiGroups, group) && has(r.resources, resource) && has(r.verbs, verb));
}

function expectAllowed(rules: IPolicyRule[], grants: [string, string, string[]][]): void {
  for (const [group, resource, verbs] of grants) {
    for (const verb of verbs) expect(allows(rules, group, resource, verb), `${verb} ${group}/${resource}`).toBe(true);
  }
}

/** Runs `sh -n` on a script: a syntax error fails the test. */
function shellSyntax(script: string): void {
  execFileSync('sh', ['-n'], { input: script, stdio: ['pipe', 'pipe', 'pipe'] });
}

const CONFIGMAP_KEYS = ['config.json', 'helperPod.yaml', 'setup', 'teardown'];

// ---- deploy/local-path-storage.yaml, looked up inside each test so a missing object fails that test only
const account = (): IServiceAccount => only<IServiceAccount>(MANIFEST, 'ServiceAccount');
const deployment = (): IDeployment => only<IDeployment>(MANIFEST, 'Deployment');
const podSpec = (): NonNullable<NonNullable<IDeployment['spec']>['template']['spec']> => deployment().spec!.template.spec!;
const container = (): IContainer => podSpec().containers[0]!;
const configMap = (file = MANIFEST): IConfigMap => only<IConfigMap>(file, 'ConfigMap');
const data = (file = MANIFEST): Record<string, string> => configMap(file).data ?? {};
const mainConfig = (): Config => parseConfig(data()['config.json'] ?? '', '/etc/config/config.json');
const mainClass = (): IStorageClass => only<IStorageClass>(MANIFEST, 'StorageClass');

/** The container's command as local-path-provisioner parses it (downward API values filled in). */
function cli(extraEnv: Record<string, string> = {}): LocalPathOptions {
  const [program, ...argv] = container().command ?? [];
  expect(program, 'the command is upstream\'s binary name, on the image\'s PATH').toBe('local-path-provisioner');
  const env: Record<string, string | undefined> = {};
  for (const e of container().env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    env[e.name] = field === 'metadata.namespace' ? (deployment().metadata?.namespace ?? 'default') : e.value;
  }
  const parsed = parseCommandLine([...argv, ...(container().args ?? [])], { ...env, ...extraEnv });
  if (parsed.kind !== 'start') throw new Error(`the Deployment's command does not start the provisioner: ${parsed.kind}`);
  return parsed.options;
}

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

  describe.each(files)('%s', (file) => {
    const docs = byFile.get(file) ?? [];

    it('parses as YAML', () => {
      const error = parseErrors.get(file);
      if (error !== undefined) throw error;
      expect(docs.length).toBeGreaterThan(0);
    });

    it.each(docs.map((d) => [`${d.kind} ${d.metadata?.name ?? '(no name)'}`, d] as const))(
      '%s validates against the Kubernetes schema',
      (_, doc) => {
        expect(doc.metadata?.name, 'metadata.name').toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
        expect(() => validate(doc)).not.toThrow();
      },
    );

    it.each(docs.map((d) => [`${d.kind} ${d.metadata?.name ?? '(no name)'}`, d] as const))(
      'a broken copy of %s fails validation',
      (_, doc) => {
        // Proves the schema check is wired for this kind (an unregistered validator would accept anything).
        const broken = { ...structuredClone(doc), metadata: 'not an object' } as unknown as Manifest;
        expect(() => validate(broken)).toThrow(ValidationError);
      },
    );

    it.each(all<IConfigMap>(file, 'ConfigMap').map((c) => [c.metadata?.name, c] as const))(
      'ConfigMap %s: the four keys, config.json, helperPod.yaml and the scripts are usable',
      (_, cm) => {
        const d = cm.data ?? {};
        expect(Object.keys(d).sort()).toEqual(CONFIGMAP_KEYS);
        expect(() => parseConfig(d['config.json']!, '/etc/config/config.json')).not.toThrow();
        // The template is a valid Pod for the API server too (the provisioner fills in name, node, volumes).
        const template = parseYaml(d['helperPod.yaml']!) as Manifest;
        expect(() => validate(template)).not.toThrow();
        for (const key of ['setup', 'teardown']) {
          expect(d[key], key).toMatch(/^#!\/bin\/sh\nset -eu\n/);
          expect(() => shellSyntax(d[key]!), `${key}: sh -n`).not.toThrow();
        }
      },
    );
  });

  it('rejects a Deployment without containers and a document of a kind it has no schema for', () => {
    const broken = structuredClone(deployment());
    broken.spec!.template.spec!.containers = [{ image: 'x' } as never];
    expect(() => validate(broken as Manifest)).toThrow(/must have required property '?name'?/);
    expect(() => validate({ apiVersion: 'v1', kind: 'Podd', metadata: { name: 'x' } })).toThrow(/no schema/);
  });

  it('names each object once per kind and namespace in the manifest', () => {
    const keys = (byFile.get(MANIFEST) ?? []).map((d) => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBe(9);
  });

  describe('the manifest keeps upstream\'s names', () => {
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

    it('config.json: upstream\'s single default entry, /opt/local-path-provisioner', () => {
      const config = mainConfig();
      expect(config.storageClassConfigs.size).toBe(0);
      expect([...(config.defaultConfig?.nodePathMap ?? new Map<string, readonly string[]>())]).toEqual([
        [DEFAULT_PATH_FOR_NON_LISTED_NODES, ['/opt/local-path-provisioner']],
      ]);
    });

    it('helperPod.yaml passes the template checks, with upstream\'s container name and toleration', () => {
      const pod = loadHelperPodTemplate(data()['helperPod.yaml']!, false);
      expect(() => validateHelperPodTemplate(pod, false)).not.toThrow();
      expect(pod.spec?.containers.map((c) => c.name)).toEqual(['helper-pod']); // its logs are read by that name
      expect(pod.spec?.priorityClassName).toBe('system-node-critical');
      expect(pod.spec?.tolerations).toEqual([
        { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
      ]);
    });

    it('the scripts are upstream\'s', () => {
      expect(data().setup).toBe('#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"');
      expect(data().teardown).toBe('#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"');
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
      const mount = (container().volumeMounts ?? []).find((m) => m.mountPath === options.configMountPath);
      expect(mount, 'a volume at CONFIG_MOUNT_PATH').toBeDefined();
      expect(options.config?.startsWith(mount!.mountPath)).toBe(true);
      const volume = (podSpec().volumes ?? []).find((v) => v.name === mount?.name);
      expect(volume?.configMap?.name).toBe(configMap().metadata?.name);
      expect(volume?.configMap?.items, 'every key mounted').toBeUndefined();
      expect(Object.keys(data())).toContain(options.config!.slice(mount!.mountPath.length));
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
      s.kind === 'ServiceAccount' && s.name === account().metadata?.name && s.namespace === account().metadata?.namespace;

    it('every binding refers to a role of the manifest and binds the ServiceAccount', () => {
      const names = (kind: string): (string | undefined)[] => all<Manifest>(MANIFEST, kind).map((r) => r.metadata?.name);
      const bindings = [...all<IClusterRoleBinding>(MANIFEST, 'ClusterRoleBinding'), ...all<IRoleBinding>(MANIFEST, 'RoleBinding')];
      expect(bindings).toHaveLength(2);
      for (const b of bindings) {
        expect(b.roleRef.apiGroup).toBe('rbac.authorization.k8s.io');
        expect(names(b.roleRef.kind), `${b.kind} ${b.metadata?.name}`).toContain(b.roleRef.name);
        expect((b.subjects ?? []).some(isAccount), `${b.kind} ${b.metadata?.name} binds the account`).toBe(true);
      }
    });

    it('cluster-wide: PVC update (reschedule), PV patch (finalizer), events, classes, nodes, helper logs', () => {
      const roles = all<IClusterRole>(MANIFEST, 'ClusterRole');
      const rules = all<IClusterRoleBinding>(MANIFEST, 'ClusterRoleBinding')
        .filter((b) => (b.subjects ?? []).some(isAccount) && b.roleRef.kind === 'ClusterRole')
        .flatMap((b) => roles.find((r) => r.metadata?.name === b.roleRef.name)?.rules ?? []);
      expectAllowed(rules, [
        ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update']],
        ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch', 'update']],
        ['', 'events', ['create', 'patch']],
        ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
        ['', 'nodes', ['get', 'list', 'watch']],
        ['', 'configmaps', ['get', 'list', 'watch']],
        ['', 'pods', ['get', 'list', 'watch']],
        ['', 'pods/log', ['get']],
      ]);
    });

    it('in the namespace: helper pods and the leader election Lease', () => {
      const namespace = deployment().metadata?.namespace;
      const roles = all<IRole>(MANIFEST, 'Role');
      const rules = all<IRoleBinding>(MANIFEST, 'RoleBinding')
        .filter((b) => b.metadata?.namespace === namespace && (b.subjects ?? []).some(isAccount) && b.roleRef.kind === 'Role')
        .flatMap((b) => roles.find((r) => r.metadata?.name === b.roleRef.name && r.metadata?.namespace === namespace)?.rules ?? []);
      expectAllowed(rules, [
        ['', 'pods', ['get', 'create', 'delete']],
        ['coordination.k8s.io', 'leases', ['get', 'create', 'update']],
      ]);
      expect(cli().leaderElectionNamespace).toBe(namespace);
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
        expect(() => parseVolumeParameters({ parameters: c.parameters, storageClassAnnotations: c.metadata?.annotations })).not.toThrow();
      }
    });

    it('every claim names a class of the manifest or the examples', () => {
      const claims = files.flatMap((f) => all<IPersistentVolumeClaim>(f, 'PersistentVolumeClaim'));
      expect(claims.length).toBeGreaterThanOrEqual(5);
      for (const claim of claims) expect(classNamed(claim.spec?.storageClassName), claim.metadata?.name).toBeDefined();
    });

    it('pod.yaml is upstream\'s volume-test, mounting the claim of pvc.yaml', () => {
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

    it('pvc-with-node.yaml: the nodePath is one of the node\'s paths in the default config, the node is annotated', () => {
      const claim = only<IPersistentVolumeClaim>('examples/pvc-with-node.yaml', 'PersistentVolumeClaim');
      const node = claim.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
      expect(node).toBeTruthy();
      const storageClass = classNamed(claim.spec?.storageClassName)!;
      const { nodePath } = parseVolumeParameters({ parameters: storageClass.parameters });
      expect(nodePath).toBeDefined();
      const base = chooseBasePath(selectClassConfig(mainConfig(), storageClass.metadata!.name!), { nodeName: node!, nodePath });
      expect(base).toMatchObject({ mode: 'local', path: nodePath });
    });

    it('path-pattern.yaml: the pattern passes the safe checks and gives <namespace>/<name>', () => {
      const claim = only<IPersistentVolumeClaim>('examples/path-pattern.yaml', 'PersistentVolumeClaim');
      const { pathPattern, allowUnsafePathPattern } = parseVolumeParameters({
        parameters: classNamed(claim.spec?.storageClassName)?.parameters,
      });
      expect(allowUnsafePathPattern).toBe(false);
      const folder = folderFromPattern(pathPattern!, { pvName: 'pvc-1', pvc: { name: claim.metadata?.name, namespace: claim.metadata?.namespace } }, false);
      expect(folder).toBe(`${claim.metadata?.namespace}/${claim.metadata?.name}`);
    });

    describe.each(['examples/shared-rwx.yaml', 'examples/quota.yaml'])('%s replaces the ConfigMap', (file) => {
      it('same name and namespace, and local-path keeps its config', () => {
        expect(configMap(file).metadata).toEqual(configMap().metadata);
        const config = parseConfig(data(file)['config.json']!, '/etc/config/config.json');
        expect(config.storageClassConfigs.size, 'storageClassConfigs are used').toBeGreaterThan(0);
        expect(selectClassConfig(config, 'local-path')).toEqual(selectClassConfig(mainConfig(), 'local-path'));
        for (const c of all<IStorageClass>(file, 'StorageClass')) {
          expect(config.storageClassConfigs.has(c.metadata!.name!), `${c.metadata?.name} in storageClassConfigs`).toBe(true);
        }
      });
    });

    it('shared-rwx.yaml: a shared class with an RWX claim; the other keys are the manifest\'s', () => {
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
      expect((pod.spec?.volumes ?? []).map((v) => v.hostPath?.path).sort()).toEqual(['/dev', '/etc/projects', '/etc/projid']);
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

// ---- the Helm chart

/** Upstream chart 0.0.37's values keys (reference section 5.3) that values.yaml sets. */
const UPSTREAM_VALUES = [
  'replicaCount', 'commonLabels', 'namespaceOverride', 'nameOverride', 'fullnameOverride',
  'image.repository', 'image.tag', 'image.pullPolicy', 'helperImage.repository', 'helperImage.tag',
  'defaultSettings.registrySecret', 'privateRegistry.registryUrl', 'privateRegistry.registryUser',
  'privateRegistry.registryPasswd', 'imagePullSecrets',
  'storageClass.create', 'storageClass.defaultClass', 'storageClass.defaultVolumeType', 'storageClass.name',
  'storageClass.reclaimPolicy', 'storageClass.volumeBindingMode', 'storageClass.allowedTopologies',
  'storageClass.annotations', 'storageClass.userPattern', 'storageClass.groupPattern', 'storageClass.permPattern',
  'nodePathMap', 'podAnnotations', 'podSecurityContext', 'hostUsers', 'securityContext', 'resources',
  'helperPod.resources', 'rbac.create', 'serviceAccount.create', 'nodeSelector', 'tolerations', 'affinity',
  'priorityClassName', 'podDisruptionBudget.enabled', 'configmap.name', 'configmap.setup', 'configmap.teardown',
  'configmap.helperPod.namespaceOverride', 'configmap.helperPod.name', 'configmap.helperPod.annotations',
  'configmap.helperPod.tolerations', 'configmap.helperPod.priorityClassName', 'debug', 'extraArgs',
  'health.enabled', 'health.port', 'health.startupProbe', 'health.livenessProbe', 'health.readinessProbe',
];
/** Upstream's keys that are unset by default: present in values.yaml as comments only. */
const UPSTREAM_COMMENTED = [
  'storageClass.provisionerName', 'storageClass.pathPattern', 'storageClass.nodeAffinityKey', 'sharedFileSystemPath',
  'storageClassConfigs', 'serviceAccount.name', 'podDisruptionBudget.maxUnavailable',
  'podDisruptionBudget.minAvailable', 'podDisruptionBudget.unhealthyPodEvictionPolicy', 'workerThreads',
  'provisioningRetryCount', 'deletionRetryCount',
];
/** Our additions. */
const OUR_VALUES = ['leaderElection.enabled'];

const TEMPLATES = [
  'NOTES.txt', '_helpers.tpl', 'clusterrole.yaml', 'clusterrolebinding.yaml', 'configmap.yaml', 'deployment.yaml',
  'pdb.yaml', 'registry-secret.yaml', 'role.yaml', 'rolebinding.yaml', 'serviceaccount.yaml', 'storageclass.yaml',
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
  for (const k of path.split('.')) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A Go template action, `{{ ... }}`, with its trim markers and comments removed. */
interface Action {
  body: string;
  line: number;
}

/**
 * Splits Go-template text into its actions as text/template's lexer does: an action ends at the first `}}` outside a
 * quoted string ("...", `...`, '.'); `{{/* ... *\/}}` is a comment. Throws on an unterminated or nested action, or a
 * `}}` in the text outside any action (legal for Go, but in these templates always a mistake).
 */
function scanActions(text: string): Action[] {
  const actions: Action[] = [];
  const lineAt = (i: number): number => text.slice(0, i).split('\n').length;
  let i = 0;
  for (;;) {
    const open = text.indexOf('{{', i);
    const plain = text.slice(i, open === -1 ? undefined : open);
    if (plain.includes('}}')) throw new Error(`line ${lineAt(i + plain.indexOf('}}'))}: "}}" outside an action`);
    if (open === -1) return actions;
    let j = open + 2;
    if (text.startsWith('- ', j)) j += 2;
    if (text.startsWith('/*', j)) {
      const end = text.indexOf('*/', j + 2);
      if (end === -1) throw new Error(`line ${lineAt(open)}: unterminated comment`);
      const close = /^\s*-?\s*}}/.exec(text.slice(end + 2));
      if (close === null) throw new Error(`line ${lineAt(open)}: comment not closed by "}}"`);
      i = end + 2 + close[0].length;
      continue;
    }
    let body = '';
    for (;;) {
      if (j >= text.length) throw new Error(`line ${lineAt(open)}: unterminated action`);
      const ch = text[j]!;
      if (text.startsWith('}}', j)) break;
      if (text.startsWith('{{', j)) throw new Error(`line ${lineAt(open)}: "{{" inside an action`);
      if (ch === '"' || ch === '`' || ch === "'") {
        let k = j + 1;
        while (k < text.length && text[k] !== ch) {
          if (text[k] === '\n' && ch !== '`') throw new Error(`line ${lineAt(j)}: unterminated quoted string`);
          k += ch === '`' ? 1 : text[k] === '\\' ? 2 : 1;
        }
        if (k >= text.length) throw new Error(`line ${lineAt(j)}: unterminated quoted string`);
        body += text.slice(j, k + 1);
        j = k + 1;
        continue;
      }
      body += ch;
      j += 1;
    }
    actions.push({ body: body.replace(/\s-$/, '').trim(), line: lineAt(open) });
    i = j + 2;
  }
}

/** Checks that if/range/with/define/block and end pair up (else only inside if/with/range). */
function checkBlocks(actions: Action[]): void {
  const stack: Action[] = [];
  for (const a of actions) {
    const word = /^[a-z]+/.exec(a.body)?.[0];
    if (word === 'if' || word === 'range' || word === 'with' || word === 'define' || word === 'block') stack.push(a);
    else if (word === 'else') {
      const top = /^[a-z]+/.exec(stack.at(-1)?.body ?? '')?.[0];
      if (top !== 'if' && top !== 'with' && top !== 'range') throw new Error(`line ${a.line}: else outside if/with/range`);
    } else if (word === 'end' && stack.pop() === undefined) throw new Error(`line ${a.line}: end without a block`);
  }
  if (stack.length > 0) throw new Error(`line ${stack.at(-1)!.line}: "${stack.at(-1)!.body}" has no end`);
}

const templateText = (name: string): string => readFileSync(join(chartDir, 'templates', name), 'utf8');
const defined = new Set(scanActions(templateText('_helpers.tpl')).flatMap((a) => /^define\s+"([^"]+)"/.exec(a.body)?.[1] ?? []));

/** A template with its actions blanked out, parsed as YAML: enough for the templates whose structure is static. */
function staticYaml(name: string): Manifest {
  const text = templateText(name)
    .split('\n')
    .filter((l) => !/^\s*{{[^}]*}}\s*$/.test(l))
    .join('\n')
    .replace(/{{[^}]*}}/g, 'x');
  return parseYaml(text) as Manifest;
}

describe('deploy/chart/local-path-provisioner', () => {
  it('Chart.yaml: upstream\'s chart name, our version', () => {
    const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, string>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'local-path-provisioner', appVersion: packageJson.version });
    expect(chart.version).toBe(packageJson.version);
  });

  it('values.yaml has every key of upstream\'s chart, and only ours besides', () => {
    const present = keyPaths(values);
    for (const key of [...UPSTREAM_VALUES, ...OUR_VALUES]) expect(present, key).toContain(key);
    const known = new Set([...UPSTREAM_VALUES, ...OUR_VALUES]);
    const unknown = present.filter((p) => !known.has(p) && ![...known].some((k) => k.startsWith(`${p}.`) || p.startsWith(`${k}.`)));
    expect(unknown).toEqual([]);
    for (const key of UPSTREAM_COMMENTED) {
      expect(lookup(key), `${key} is unset`).toBeUndefined();
      expect(valuesText, `${key} is shown in a comment`).toMatch(new RegExp(`^\\s*#\\s*${key.split('.').at(-1)}:`, 'm'));
    }
  });

  it('values.yaml defaults match the manifest: image, scripts, config, probes, ConfigMap and helper pod', () => {
    expect(lookup('image.repository')).toBe('ghcr.io/kprov/local-path');
    expect(String(lookup('image.tag'))).toBe(packageJson.version);
    expect(lookup('configmap.name')).toBe(configMap().metadata?.name);
    expect(lookup('configmap.setup')).toBe(data().setup);
    expect(lookup('configmap.teardown')).toBe(data().teardown);
    expect(lookup('configmap.helperPod.name')).toBe('helper-pod');
    expect(`${String(lookup('helperImage.repository'))}:${String(lookup('helperImage.tag'))}`).toBe(
      `${String(loadHelperPodTemplate(data()['helperPod.yaml']!, false).spec?.containers[0]?.image)}:latest`,
    );
    const config = parseConfig(JSON.stringify({ nodePathMap: lookup('nodePathMap') }));
    expect(config).toEqual(mainConfig());
    expect(lookup('health.port')).toBe(cli().healthPort);
    expect(lookup('health.startupProbe')).toEqual(container().startupProbe);
    expect(lookup('health.livenessProbe')).toEqual(container().livenessProbe);
    expect(lookup('health.readinessProbe')).toEqual(container().readinessProbe);
    expect(lookup('leaderElection.enabled')).toBe(true);
    expect(lookup('replicaCount')).toBe(1);
  });

  it('has upstream\'s set of templates', () => {
    expect(readdirSync(join(chartDir, 'templates')).sort()).toEqual(TEMPLATES);
  });

  describe.each(TEMPLATES)('templates/%s', (name) => {
    it('is Go-template text with balanced actions and blocks, known includes and known values', () => {
      const actions = scanActions(templateText(name));
      expect(actions.length).toBeGreaterThan(0);
      checkBlocks(actions);
      for (const a of actions) {
        for (const m of a.body.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)) {
          expect(defined, `line ${a.line}`).toContain(m[1]);
        }
        for (const m of a.body.matchAll(/\.Values((?:\.[A-Za-z_]\w*)+)/g)) {
          const key = m[1]!.slice(1);
          const known = lookup(key) !== undefined || UPSTREAM_COMMENTED.includes(key) || keyPaths(values).includes(key);
          expect(known, `line ${a.line}: .Values.${key}`).toBe(true);
        }
      }
    });
  });

  it('the lexer catches broken templates', () => {
    expect(() => scanActions('a: {{ .Values.x }')).toThrow(/unterminated action/);
    expect(() => scanActions('a: {{ .Values.x }} }}')).toThrow(/outside an action/);
    expect(() => scanActions('a: {{ "}}" }}')).not.toThrow();
    expect(() => checkBlocks(scanActions('{{ if .a }}x{{ with .b }}y{{ end }}'))).toThrow(/has no end/);
    expect(() => checkBlocks(scanActions('{{ end }}'))).toThrow(/without a block/);
  });

  it('the chart\'s RBAC has the manifest\'s fixes: PVC update, PV patch, events, Leases', () => {
    const clusterRole = staticYaml('clusterrole.yaml') as IClusterRole;
    expect(clusterRole.kind).toBe('ClusterRole');
    expect(clusterRole.rules).toEqual(all<IClusterRole>(MANIFEST, 'ClusterRole')[0]?.rules);
    const role = staticYaml('role.yaml') as IRole;
    expect(role.kind).toBe('Role');
    expect(role.rules).toEqual(all<IRole>(MANIFEST, 'Role')[0]?.rules);
    for (const binding of ['clusterrolebinding.yaml', 'rolebinding.yaml']) {
      expect(staticYaml(binding).kind).toBe(binding === 'rolebinding.yaml' ? 'RoleBinding' : 'ClusterRoleBinding');
    }
  });

  it('the chart\'s Deployment passes the flags upstream\'s chart passes, plus leader election, and mounts the ConfigMap', () => {
    const text = templateText('deployment.yaml');
    for (const flag of ['start', '--config', '--service-account-name', '--provisioner-name', '--helper-image', '--configmap-name']) {
      expect(text).toMatch(new RegExp(`^\\s*- ${flag}$`, 'm'));
    }
    expect(text).toContain('- --leader-election={{ .Values.leaderElection.enabled }}');
    expect(text).toContain('fieldPath: metadata.namespace');
    expect(text).toMatch(/name: CONFIG_MOUNT_PATH\n\s*value: \/etc\/config\//);
    expect(text).toMatch(/mountPath: \/etc\/config\//);
    expect(templateText('configmap.yaml').match(/^ {2}([\w.]+): \|-$/gm)?.map((l) => l.trim().slice(0, -4))).toEqual([
      'config.json',
      'setup',
      'teardown',
      'helperPod.yaml',
    ]);
  });
});
