/**
 * The built binary started as kuttiproject/provisioner-localvolume's manifest
 * (deploy/kutti/provisioner-localvolume.yaml) starts the image: without arguments, with kutti's environment
 * (KUTTI_NODE_NAME, KUTTI_ROOT_PATH). On either tier, with the manifest's StorageClasses (and on the real tier as its
 * ServiceAccount, so with kutti's RBAC): it runs in node mode under kutti's provisioner name, makes `local` PVs,
 * deletes kutti's own PVs and their directories, keeps the volumes of kutti-retain, and exits 0 on SIGTERM. Without
 * arguments outside kutti's environment it prints the help and a line saying what to pass, and exits 2; with half of
 * kutti's environment it says which variable is missing.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { HELP, NO_COMMAND_MESSAGE } from '../../src/cli/options.js';
import { KUTTI_PROVISIONER_NAME } from '../../src/executor/node/kutti.js';
import { claim, getVolume, volumeTestPod, WAIT, waitBound, waitSucceeded } from '../provisioner/helpers.js';
import { ensureBuilt } from './binary.js';
import { cleanups, startKit, type Kit } from './harness.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(pkg, 'dist/cli.js');
const MANIFEST = path.join(pkg, 'deploy/kutti/provisioner-localvolume.yaml');
const docs = parseAllDocuments(readFileSync(MANIFEST, 'utf8')).map((d) => d.toJS() as KubernetesObject);
const ROOT_PATH = '/kutti/vols';

/** `node dist/cli.js` with no arguments and only `env` (and `PATH`); killed after the test if still running. */
function spawnBare(env: Record<string, string>): {
  exited: Promise<number | null>;
  output: () => { stdout: string; stderr: string };
  stop: () => void;
} {
  const child = spawn(process.execPath, [bin], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { exited, output: () => ({ stdout, stderr }), stop: () => child.kill('SIGTERM') };
}

/**
 * The manifest's StorageClasses, and on the real tier its ServiceAccount and RBAC; resolves with the kubeconfig its pod
 * would have: its ServiceAccount's on the real tier, the admin's on the testkit (which authorizes nothing).
 */
async function applyManifest(k: Kit): Promise<string> {
  const api = KubernetesObjectApi.makeApiClient(k.cluster.kubeConfig);
  const rbac = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'];
  for (const doc of docs)
    if (doc.kind === 'StorageClass' || (k.cluster.controlPlane !== undefined && rbac.includes(doc.kind ?? '')))
      await api.create(doc);
  if (k.cluster.controlPlane === undefined) return k.kubeconfig;
  const kc = await k.cluster.controlPlane.serviceAccountKubeConfig('kube-system', 'kutti-provisioner');
  const kubeconfig = path.join(k.dir, 'kutti.kubeconfig');
  await writeFile(kubeconfig, kc.exportConfig(), { mode: 0o600 });
  return kubeconfig;
}

/**
 * The manifest's pod on node-1 as a process: kutti's environment as the Deployment sets it, the node's disk as the
 * host root (`HOST_ROOT`: the testkit's nodes are folders) and no fixed health port; resolves once it runs.
 */
async function runAsManifestPod(k: Kit, kubeconfig: string): Promise<ReturnType<typeof spawnBare>> {
  const program = spawnBare({
    KUBECONFIG: kubeconfig,
    KUTTI_NODE_NAME: 'node-1',
    KUTTI_ROOT_PATH: ROOT_PATH,
    HOST_ROOT: k.cluster.nodes[0]!.root,
    HEALTH_PORT: '0',
  });
  cleanups.push(async () => {
    program.stop();
    await program.exited;
  });
  await vi.waitFor(
    () => expect(program.output().stdout).toContain('"Provisioner started in node mode on node-1"'),
    WAIT,
  );
  return program;
}

/** kutti's PV and directory for a new claim `name` of kutti-delete on node-1, as kutti v0.2.2 leaves them. */
async function madeByKutti(k: Kit, name: string): Promise<{ pvName: string; dir: string }> {
  const made = await k.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: claim(name, 'kutti-delete'),
  });
  const pvName = `pvc-${made.metadata!.uid!}`;
  const dir = k.cluster.onNode('node-1', `${ROOT_PATH}/${pvName}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, 'data'), 'written while kutti ran\n');
  await k.core.createPersistentVolume({
    body: {
      metadata: {
        name: pvName,
        annotations: {
          'kuttiproject.org/provisionedBy': KUTTI_PROVISIONER_NAME,
          'kuttiproject.org/provisionedOn': 'node-1',
          'pv.kubernetes.io/provisioned-by': KUTTI_PROVISIONER_NAME,
        },
      },
      spec: {
        persistentVolumeReclaimPolicy: 'Delete',
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '128Mi' },
        local: { path: `${ROOT_PATH}/${pvName}` },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
            ],
          },
        },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name, uid: made.metadata!.uid! },
        storageClassName: 'kutti-delete',
      },
    },
  });
  await waitBound(k, name);
  return { pvName, dir };
}

async function useClaim(k: Kit, name: string, className: string): Promise<{ pvName: string; dir: string }> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name, className) });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
  const pvName = await waitBound(k, name);
  await waitSucceeded(k, `pod-${name}`);
  const pv = (await getVolume(k, pvName))!;
  expect(pv.spec?.hostPath).toBeUndefined();
  expect(pv.spec).toMatchObject({
    local: { path: `${ROOT_PATH}/${pvName}_default_${name}` },
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
        ],
      },
    },
  });
  expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(KUTTI_PROVISIONER_NAME);
  return { pvName, dir: k.cluster.onNode('node-1', pv.spec!.local!.path) };
}

async function deleteClaim(k: Kit, name: string, withPod = true): Promise<void> {
  if (withPod) await k.core.deleteNamespacedPod({ name: `pod-${name}`, namespace: 'default', gracePeriodSeconds: 0 });
  await k.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
}

describe('local-path-provisioner binary without arguments', () => {
  beforeAll(ensureBuilt, 120_000);

  it("outside kutti's environment: prints the help, then what to pass, and exits 2", async () => {
    const program = spawnBare({});
    expect(await program.exited).toBe(2);
    expect(program.output()).toEqual({
      stdout: '',
      stderr: `${HELP}\nUsage error, please check your command: ${NO_COMMAND_MESSAGE}\n`,
    });
  });

  it("with half of kutti's environment: names the missing variable and exits 1", async () => {
    for (const [env, missing] of [
      [{ KUTTI_NODE_NAME: 'node-1' }, 'KUTTI_ROOT_PATH'],
      [{ KUTTI_ROOT_PATH: ROOT_PATH }, 'KUTTI_NODE_NAME'],
    ] as const) {
      const program = spawnBare(env);
      expect(await program.exited).toBe(1);
      expect(program.output().stderr).toBe(
        `Error starting daemon: no command given and ${missing} is empty: kuttiproject/provisioner-localvolume's environment needs both KUTTI_NODE_NAME (the node, from spec.nodeName) and KUTTI_ROOT_PATH (the root path of the volumes)\n`,
      );
    }
  });
});

describeTiers(
  "deploy/kutti/provisioner-localvolume.yaml's pod: the binary without arguments, kutti's environment",
  () => {
    beforeAll(ensureBuilt, 120_000);

    it("runs as kutti: local PVs, kutti's PVs deleted, kutti-retain kept, exit 0 on SIGTERM", async () => {
      const k = await startKit({ withConfigMap: false, withClass: false });
      const kubeconfig = await applyManifest(k);
      // What kutti left: its PV and directory for a claim, which ours deletes when the claim goes.
      const kutti = await madeByKutti(k, 'old');
      const program = await runAsManifestPod(k, kubeconfig);
      expect(program.output().stdout).toContain(`provisioner="${KUTTI_PROVISIONER_NAME}"`);

      const scratch = await useClaim(k, 'scratch', 'kutti-delete');
      expect(readFileSync(`${scratch.dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteClaim(k, 'scratch');
      await deleteClaim(k, 'old', false);
      await vi.waitFor(async () => {
        expect(await getVolume(k, scratch.pvName)).toBeUndefined();
        expect(await getVolume(k, kutti.pvName)).toBeUndefined();
      }, WAIT);
      expect(existsSync(scratch.dir)).toBe(false);
      expect(existsSync(kutti.dir)).toBe(false);

      const kept = await useClaim(k, 'keep', 'kutti-retain');
      await deleteClaim(k, 'keep');
      await vi.waitFor(async () => expect((await getVolume(k, kept.pvName))?.status?.phase).toBe('Released'), WAIT);
      expect(readFileSync(`${kept.dir}/test`, 'utf8')).toBe('local-path-test\n');

      program.stop();
      expect(await program.exited).toBe(0);
      expect(program.output().stdout).toContain('"Receive SIGTERM to exit"');
    });
  },
);
