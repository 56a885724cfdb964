// The manifests in deploy/: every document parses, validates against the Kubernetes OpenAPI schemas (no cluster
// needed), and the objects refer to each other correctly.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifestFiles, manifestValidator, rulesAllow, type Manifest } from '@kprov/testkit';
import { describeManifestFiles } from '@kprov/testkit/vitest';
import ValidationError from '@kubernetes-models/validate/runtime/validation_error';
import {
  PersistentVolumeClaim,
  Pod,
  ServiceAccount,
  type IPersistentVolumeClaim,
  type IPod,
  type IServiceAccount,
} from 'kubernetes-models/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  type IClusterRole,
  type IClusterRoleBinding,
  type IRole,
  type IRoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { StorageClass, type IStorageClass } from 'kubernetes-models/storage.k8s.io/v1';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { parseOptions, type CliOptions } from '../src/index.js';

const deployDir = fileURLToPath(new URL('../deploy/', import.meta.url));
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Every kind allowed in deploy/. A document of any other kind fails the test instead of going unchecked. */
const validate = manifestValidator([
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
  Deployment,
  Pod,
  StorageClass,
  PersistentVolumeClaim,
]);

const files = readdirSync(deployDir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const manifests = loadManifestFiles(deployDir, files);
const { byFile } = manifests;

function only<T>(file: string, kind: string): T {
  const found = (byFile.get(file) ?? []).filter((d) => d.kind === kind);
  expect(found, `${file} holds exactly one ${kind}`).toHaveLength(1);
  return found[0] as T;
}

function all<T>(file: string, kind: string): T[] {
  return (byFile.get(file) ?? []).filter((d) => d.kind === kind) as T[];
}

describe('deploy/ manifests', () => {
  it('has the five files of the guide, each with documents', () => {
    expect(files).toEqual(['claim.yaml', 'class.yaml', 'deployment.yaml', 'rbac.yaml', 'test-pod.yaml']);
    for (const [file, docs] of byFile) expect(docs.length, file).toBeGreaterThan(0);
  });

  describeManifestFiles(manifests, validate, ValidationError);

  it('rejects a pod whose container has no name', () => {
    const pod = structuredClone(only<IPod>('test-pod.yaml', 'Pod'));
    delete (pod.spec!.containers[0] as { name?: string }).name;
    expect(() => validate(pod)).toThrow(/containers\/0 must have required property '?name'?/);
  });

  it('rejects a document of a kind it has no schema for', () => {
    expect(() => validate({ apiVersion: 'v1', kind: 'Podd', metadata: { name: 'x' } })).toThrow(/no schema/);
  });

  it('names each object once per kind and namespace', () => {
    const keys = [...byFile.values()].flat().map((d) => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  describe('cross-references', () => {
    // Looked up inside each test, so a missing object fails that test rather than the whole file.
    const deployment = (): IDeployment => only<IDeployment>('deployment.yaml', 'Deployment');
    const podSpec = (): NonNullable<IPod['spec']> => deployment().spec!.template.spec!;
    const container = (): NonNullable<IPod['spec']>['containers'][number] => podSpec().containers[0]!;
    const podNamespace = (): string => deployment().metadata?.namespace ?? 'default';
    /** The container's args and env as kprov-hostpath parses them (downward API values filled in). */
    const cli = (): CliOptions => {
      const env: Record<string, string | undefined> = {};
      for (const e of container().env ?? []) {
        const field = e.valueFrom?.fieldRef?.fieldPath;
        env[e.name] = field === 'metadata.namespace' ? podNamespace() : field === 'spec.nodeName' ? 'node-1' : e.value;
      }
      const parsed = parseOptions(container().args ?? [], env);
      if (parsed.kind !== 'run')
        throw new Error(`deployment.yaml args: ${parsed.kind === 'error' ? parsed.message : '--help'}`);
      return parsed.options;
    };

    it('the provisioner pod runs as a ServiceAccount defined in rbac.yaml, in its namespace', () => {
      const account = only<IServiceAccount>('rbac.yaml', 'ServiceAccount');
      expect(podSpec().serviceAccountName).toBe(account.metadata?.name);
      expect(account.metadata?.namespace ?? 'default').toBe(podNamespace());
    });

    it('the provisioner pod runs the image built from the Dockerfile, at the package version', () => {
      expect(podSpec().containers).toHaveLength(1);
      expect(container().image).toBe(`ghcr.io/kprov/hostpath-example:${packageJson.version}`);
    });

    it('the provisioner pod gets NODE_NAME and POD_NAMESPACE from the downward API', () => {
      const env = new Map((container().env ?? []).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath]));
      expect(env.get('NODE_NAME')).toBe('spec.nodeName');
      expect(env.get('POD_NAMESPACE')).toBe('metadata.namespace');
    });

    it("the provisioner pod's args are flags kprov-hostpath accepts, passed to the image's entrypoint", () => {
      expect(container().command, 'no command: the args go to the ENTRYPOINT').toBeUndefined();
      const options = cli();
      expect(options.nodeName).toBe('node-1');
      expect(options.leaderElection).toBe(true);
    });

    it('the pv directory is mounted from the host at the same path', () => {
      const { pvDir, hostRoot } = cli();
      expect(pvDir).toBe('/tmp/hostpath-provisioner');
      expect(hostRoot, 'the PV path is the node path only when the host root is /').toBe('/');
      const mount = (container().volumeMounts ?? []).find((m) => m.mountPath === pvDir);
      expect(mount, `a volume mounted at ${pvDir}`).toBeDefined();
      const volume = (podSpec().volumes ?? []).find((v) => v.name === mount?.name);
      expect(volume?.hostPath?.path).toBe(pvDir);
    });

    it('the liveness and readiness probes target the --http-endpoint port', () => {
      const endpoint = cli().httpEndpoint;
      expect(endpoint, '--http-endpoint is set').toBeDefined();
      const port = (container().ports ?? []).find((p) => p.containerPort === endpoint?.port);
      expect(port, 'a container port for the http endpoint').toBeDefined();
      expect([port?.name, port?.containerPort]).toContain(container().livenessProbe?.httpGet?.port);
      expect(container().livenessProbe?.httpGet?.path).toBe('/healthz');
      expect([port?.name, port?.containerPort]).toContain(container().readinessProbe?.httpGet?.port);
      expect(container().readinessProbe?.httpGet?.path).toBe('/readyz');
    });

    it('the Deployment selects its own pods', () => {
      const d = deployment();
      expect(d.spec?.replicas).toBe(1);
      expect(d.spec?.template.metadata?.labels).toMatchObject(d.spec?.selector.matchLabels ?? { missing: 'labels' });
    });

    it('the class is provisioned by example.com/hostpath, the name the provisioner runs under', () => {
      const storageClass = only<IStorageClass>('class.yaml', 'StorageClass');
      expect(storageClass.metadata?.name).toBe('example-hostpath');
      expect(storageClass.provisioner).toBe('example.com/hostpath');
      expect(cli().provisionerName).toBe(storageClass.provisioner);
    });

    it('the claim asks for the class, and the test pod mounts the claim', () => {
      const storageClass = only<IStorageClass>('class.yaml', 'StorageClass');
      const claim = only<IPersistentVolumeClaim>('claim.yaml', 'PersistentVolumeClaim');
      expect(claim.metadata?.name).toBe('hostpath-claim');
      expect(claim.spec?.storageClassName).toBe(storageClass.metadata?.name);
      expect(claim.spec?.accessModes).toEqual(['ReadWriteMany']);
      expect(claim.spec?.resources?.requests?.storage).toBe('1Mi');

      const testPod = only<IPod>('test-pod.yaml', 'Pod');
      expect(testPod.metadata?.name).toBe('test-pod');
      expect(testPod.metadata?.namespace).toBe(claim.metadata?.namespace);
      expect(testPod.spec?.restartPolicy).toBe('Never');
      const volume = (testPod.spec?.volumes ?? []).find((v) => v.persistentVolumeClaim !== undefined);
      expect(volume?.persistentVolumeClaim?.claimName).toBe(claim.metadata?.name);
      const testContainer = testPod.spec!.containers[0]!;
      expect(testContainer.image).toMatch(/^busybox(:|$)/);
      // A node given the image without a registry (ctr images import, kind load) runs it.
      expect(testContainer.imagePullPolicy).toBe('IfNotPresent');
      expect(testContainer.volumeMounts).toContainEqual({ name: volume?.name, mountPath: '/mnt' });
      expect([...(testContainer.command ?? []), ...(testContainer.args ?? [])].join(' ')).toContain(
        'touch /mnt/SUCCESS && exit 0 || exit 1',
      );
    });

    it('RBAC binds the service account to every permission the provisioner uses', () => {
      const account = only<IServiceAccount>('rbac.yaml', 'ServiceAccount');
      const isAccount = (s: { kind: string; name: string; namespace?: string }): boolean =>
        s.kind === 'ServiceAccount' && s.name === account.metadata?.name && s.namespace === account.metadata?.namespace;

      const clusterRoles = all<IClusterRole>('rbac.yaml', 'ClusterRole');
      const clusterRules = all<IClusterRoleBinding>('rbac.yaml', 'ClusterRoleBinding')
        .filter((b) => (b.subjects ?? []).some(isAccount) && b.roleRef.kind === 'ClusterRole')
        .flatMap((b) => clusterRoles.find((r) => r.metadata?.name === b.roleRef.name)?.rules ?? []);
      const cluster: [string, string, string[]][] = [
        ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch']],
        ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update']],
        ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
        ['', 'events', ['create', 'update', 'patch', 'list', 'watch']],
      ];
      for (const [group, resource, verbs] of cluster) {
        for (const verb of verbs)
          expect(rulesAllow(clusterRules, group, resource, verb), `${verb} ${resource}`).toBe(true);
      }

      // The Lease lives in POD_NAMESPACE, the pod's namespace: a Role there, bound to the account.
      const roles = all<IRole>('rbac.yaml', 'Role');
      const leaseRules = all<IRoleBinding>('rbac.yaml', 'RoleBinding')
        .filter((b) => (b.metadata?.namespace ?? 'default') === podNamespace() && (b.subjects ?? []).some(isAccount))
        .flatMap((b) =>
          b.roleRef.kind === 'Role'
            ? (roles.find((r) => r.metadata?.name === b.roleRef.name && r.metadata?.namespace === b.metadata?.namespace)
                ?.rules ?? [])
            : (clusterRoles.find((r) => r.metadata?.name === b.roleRef.name)?.rules ?? []),
        );
      for (const verb of ['get', 'create', 'update']) {
        expect(rulesAllow(leaseRules, 'coordination.k8s.io', 'leases', verb), `${verb} leases`).toBe(true);
      }
    });

    it('every binding refers to a role defined in rbac.yaml', () => {
      const names = (kind: string): (string | undefined)[] =>
        all<Manifest>('rbac.yaml', kind).map((r) => r.metadata?.name);
      const bindings = [
        ...all<IClusterRoleBinding>('rbac.yaml', 'ClusterRoleBinding'),
        ...all<IRoleBinding>('rbac.yaml', 'RoleBinding'),
      ];
      expect(bindings.length).toBeGreaterThan(0);
      for (const b of bindings) {
        expect(b.roleRef.apiGroup).toBe('rbac.authorization.k8s.io');
        expect(names(b.roleRef.kind), `${b.kind} ${b.metadata?.name}`).toContain(b.roleRef.name);
      }
    });
  });
});
