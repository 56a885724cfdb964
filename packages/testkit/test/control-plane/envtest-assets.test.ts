/**
 * startControlPlane on a setup-envtest folder (etcd, kube-apiserver and kubectl, no controller-manager or
 * scheduler): it starts what the folder holds, says each step with its time, installs CRDs from files, and refuses
 * with a message saying where to get a binary the caller asks for and the folder lacks.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiException, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetsDir } from '../../src/control-plane/assets.js';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';

const assets = assetsDir();
const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const KUBECTL = ['/usr/local/bin/kubectl', '/usr/bin/kubectl'].find((f) => existsSync(f));

/** A folder as `setup-envtest use` leaves it: etcd, kube-apiserver and (when this machine has one) kubectl. */
async function envtestFolder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-envtest-assets-'));
  for (const b of ['etcd', 'kube-apiserver']) await symlink(path.join(assets ?? '', b), path.join(dir, b));
  if (KUBECTL !== undefined) await symlink(KUBECTL, path.join(dir, 'kubectl'));
  return dir;
}

describe.skipIf(assets === undefined)('startControlPlane on a setup-envtest folder', () => {
  let binDir: string;
  let cp: ControlPlane;
  const steps: { step: string; ms: number }[] = [];
  let wallMs = 0;
  beforeAll(async () => {
    binDir = await envtestFolder();
    const started = Date.now();
    cp = await startControlPlane({
      binDir,
      crds: { paths: [path.join(FIXTURES, 'crds')] },
      onStep: (step, ms) => steps.push({ step, ms }),
    });
    wallMs = Date.now() - started;
  }, 120_000);
  afterAll(async () => {
    await cp?.stop();
    await rm(binDir, { recursive: true, force: true });
  });

  it('runs etcd and kube-apiserver alone, saying each step', async () => {
    expect(cp.binaries).toEqual(['etcd', 'kube-apiserver']);
    expect(steps.map((s) => s.step)).toEqual([
      'credentials made',
      'etcd ready',
      'kube-apiserver ready',
      'namespace default created',
      'kube-controller-manager not started (not in the folder)',
      'kube-scheduler not started (not in the folder)',
      '3 CustomResourceDefinitions Established',
    ]);
    // Each step's own time, not the time since the start: together they are the start's time.
    for (const s of steps) expect(s.ms).toBeGreaterThanOrEqual(0);
    expect(steps.reduce((sum, s) => sum + s.ms, 0)).toBeLessThanOrEqual(wallMs);
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'envtest' } } });
    expect((await core.readNamespacedConfigMap({ namespace: 'default', name: 'envtest' })).metadata?.name).toBe(
      'envtest',
    );
    // Without kube-controller-manager, nothing makes a namespace's default ServiceAccount (as in envtest).
    await core.createNamespace({ body: { metadata: { name: 'no-kcm' } } });
    const sa = await core
      .readNamespacedServiceAccount({ namespace: 'no-kcm', name: 'default' })
      .catch((e: unknown) => e);
    expect(sa).toBeInstanceOf(ApiException);
    expect((sa as ApiException<unknown>).code).toBe(404);
  });

  it('serves the CRDs of every YAML and JSON document of the folder, skipping other kinds', async () => {
    expect([...cp.crds].sort()).toEqual([
      'gadgets.example.kprov.io',
      'sprockets.example.kprov.io',
      'widgets.example.kprov.io',
    ]);
    const custom = cp.kubeConfig.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'example.kprov.io',
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
      body: { apiVersion: 'example.kprov.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3 } },
    });
    // The schema of the file is the one served: size must be at least 1.
    const refused = await custom
      .createNamespacedCustomObject({
        group: 'example.kprov.io',
        version: 'v1',
        namespace: 'default',
        plural: 'widgets',
        body: { apiVersion: 'example.kprov.io/v1', kind: 'Widget', metadata: { name: 'bad' }, spec: { size: 0 } },
      })
      .catch((e: unknown) => e);
    expect((refused as ApiException<unknown>).code).toBe(422);
    await custom.createClusterCustomObject({
      group: 'example.kprov.io',
      version: 'v1alpha1',
      plural: 'gadgets',
      body: { apiVersion: 'example.kprov.io/v1alpha1', kind: 'Gadget', metadata: { name: 'g' } },
    });
  });

  it.skipIf(KUBECTL === undefined)("works with the folder's kubectl", async () => {
    const { stdout } = await promisify(execFile)(path.join(binDir, 'kubectl'), [
      '--kubeconfig',
      cp.kubeconfigPath,
      'get',
      'sprockets',
      '-o',
      'name',
    ]);
    expect(stdout).toBe('');
  });
});

describe.skipIf(assets === undefined)('startControlPlane asked for what a setup-envtest folder lacks', () => {
  let binDir: string;
  beforeAll(async () => {
    binDir = await envtestFolder();
  });
  afterAll(async () => {
    await rm(binDir, { recursive: true, force: true });
  });

  it('names kube-controller-manager, what it is for and the server tarball', async () => {
    const err = await startControlPlane({ binDir, controllerManager: true }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^kube-controller-manager not found or not executable in ${binDir}, but controllerManager: true asks for it \\(it binds claims to volumes`,
      ),
    );
    expect((err as Error).message).toMatch(
      /take kubernetes\/server\/bin\/kube-controller-manager from the Kubernetes server tarball, https:\/\/dl\.k8s\.io\/v1\.\d+\.\d+\/kubernetes-server-linux-amd64\.tar\.gz/,
    );
    expect((err as Error).message).not.toContain('setup-envtest use');
  });

  it('names kube-scheduler the same way', async () => {
    await expect(startControlPlane({ binDir, scheduler: true })).rejects.toThrow(
      /^kube-scheduler not found .* \(it assigns pods to nodes\)\. setup-envtest's assets have only etcd, kube-apiserver and kubectl/,
    );
  });

  it('refuses CRD paths that do not exist, hold no CRD or hold a removed API version, before starting anything', async () => {
    await expect(startControlPlane({ binDir, crds: { paths: ['/no/such/crds'] } })).rejects.toThrow(
      'CRD path /no/such/crds does not exist',
    );
    await expect(startControlPlane({ binDir, crds: { paths: [binDir] } })).rejects.toThrow(
      `CRD path ${binDir} holds no CustomResourceDefinition`,
    );
    await expect(
      startControlPlane({ binDir, crds: { paths: [path.join(FIXTURES, 'crds-v1beta1', 'old.yaml')] } }),
    ).rejects.toThrow(
      /old\.yaml: CustomResourceDefinition olds\.example\.kprov\.io is apiextensions\.k8s\.io\/v1beta1/,
    );
  });
});
