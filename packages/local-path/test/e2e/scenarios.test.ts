/**
 * Upstream's e2e scenarios (reference 6.2) not covered by ../provisioner: a shared file system with a
 * ReadWriteMany claim used from two nodes, `volumeType: local` (claim annotation and class `defaultVolumeType`),
 * the `nodePath` parameter, several paths for the default node, and a `pathPattern` class. Each checks what a
 * user sees: the PV, the files under the node root, and the directory gone after the claim is deleted.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { ALL_TIERS, currentTier, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  deleteAndWaitCleanedUp,
  type Env,
  getVolume,
  perTest,
  volumes,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from '../provisioner/helpers.js';

const { env, defer } = perTest();
const exec = promisify(execFile);

const DEFAULT_CONFIG = { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [BASE_PATH] }] };

function nodeAffinity(node: string): unknown {
  return {
    required: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }],
    },
  };
}

/** A pod on `node` running `script` with the claim mounted at `/data`. */
function writerPod(name: string, claimName: string, node: string, script: string): V1Pod {
  const pod = volumeTestPod(claimName, name, { 'kubernetes.io/hostname': node });
  pod.spec!.containers[0]!.command = ['sh', '-c', script];
  return pod;
}

async function deleteAll(e: Env, pods: string[], claims: string[]): Promise<void> {
  for (const name of pods) await e.core.deleteNamespacedPod({ name, namespace: 'default' });
  for (const name of claims) await e.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
}

describeTiers(
  'upstream e2e scenarios',
  () => {
    it('shares a ReadWriteMany volume under sharedFileSystemPath between pods on two nodes', async () => {
      // Both nodes see the same directory at /opt/local-path-provisioner-shared, as an NFS mount would: on real nodes
      // (node tier) a bind mount made on this machine after they started, which reaches them as a mount does; the
      // simulated nodes' roots are plain folders, where a link stands for the mount.
      const top = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-shared-'));
      defer(() => rm(top, { recursive: true, force: true }));
      const sharedPath = '/opt/local-path-provisioner-shared';
      const shared = path.join(top, 'nfs');
      await mkdir(shared);
      const real = currentTier().name === 'node';
      const nodes = [];
      for (const name of ['node-1', 'node-2']) {
        if (real) {
          nodes.push({ name });
          continue;
        }
        const root = path.join(top, name);
        await mkdir(path.join(root, 'opt'), { recursive: true });
        await symlink(shared, path.join(root, sharedPath));
        nodes.push({ name, root });
      }
      const e = await env({
        nodes,
        config: {
          storageClassConfigs: {
            'local-path': DEFAULT_CONFIG,
            'local-path-shared': { sharedFileSystemPath: sharedPath },
          },
        },
      });
      if (real) {
        for (const { name } of nodes) {
          const at = e.onNode(name, sharedPath);
          await mkdir(at, { recursive: true });
          await exec('mount', ['--bind', shared, at]);
          defer(() => exec('umount', [at]));
        }
      }
      await e.storage.createStorageClass({
        body: storageClass('local-path-shared', { volumeBindingMode: 'Immediate' }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('shared-pvc', 'local-path-shared', { accessModes: ['ReadWriteMany'] }),
      });

      // Immediate: provisioned with no consumer and no node.
      const pvName = await waitBound(e, 'shared-pvc');
      const pv = (await getVolume(e, pvName))!;
      const nodePath = `${sharedPath}/${pvName}_default_shared-pvc`;
      expect(pv.spec).toMatchObject({
        accessModes: ['ReadWriteMany'],
        storageClassName: 'local-path-shared',
        hostPath: { path: nodePath },
      });
      expect(pv.spec?.nodeAffinity).toBeUndefined();

      await e.core.createNamespacedPod({
        namespace: 'default',
        body: writerPod('writer-1', 'shared-pvc', 'node-1', 'echo from-node-1 > /data/node-1'),
      });
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: writerPod('writer-2', 'shared-pvc', 'node-2', 'echo from-node-2 > /data/node-2'),
      });
      await waitSucceeded(e, 'writer-1');
      await waitSucceeded(e, 'writer-2');
      const dir = path.join(shared, `${pvName}_default_shared-pvc`);
      expect(readFileSync(path.join(dir, 'node-1'), 'utf8')).toBe('from-node-1\n');
      expect(readFileSync(path.join(dir, 'node-2'), 'utf8')).toBe('from-node-2\n');
      // Each node sees both files through its own root.
      for (const node of ['node-1', 'node-2'])
        expect(existsSync(path.join(e.onNode(node, nodePath), node === 'node-1' ? 'node-2' : 'node-1'))).toBe(true);

      await deleteAll(e, ['writer-1', 'writer-2'], ['shared-pvc']);
      await vi.waitFor(async () => {
        expect(await getVolume(e, pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      expect(existsSync(shared)).toBe(true);
    });

    it('serves a claim annotated volumeType: local as a local PV with node affinity', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({ body: storageClass() });
      const pvc: V1PersistentVolumeClaim = claim('local-volume-pvc');
      pvc.metadata!.annotations = { volumeType: 'local' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod('local-volume-pvc') });

      const pvName = await waitBound(e, 'local-volume-pvc');
      const nodePath = `${BASE_PATH}/${pvName}_default_local-volume-pvc`;
      const pv = (await getVolume(e, pvName))!;
      expect(pv.spec?.local).toEqual({ path: nodePath });
      expect(pv.spec?.hostPath).toBeUndefined();
      expect(pv.spec?.nodeAffinity).toEqual(nodeAffinity('node-1'));
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteAndWaitCleanedUp(e, pvName, dir, 'volume-test', 'local-volume-pvc');
    });

    it('serves every claim of a class annotated defaultVolumeType: local as a local PV', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({
        body: storageClass('local-path', {
          metadata: { name: 'local-path', annotations: { defaultVolumeType: 'local' } },
        }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const pvName = await waitBound(e);
      const nodePath = `${BASE_PATH}/${pvName}_default_local-path-pvc`;
      const pv = (await getVolume(e, pvName))!;
      expect(pv.spec?.local).toEqual({ path: nodePath });
      expect(pv.spec?.hostPath).toBeUndefined();
      expect(pv.spec?.nodeAffinity).toEqual(nodeAffinity('node-1'));
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteAndWaitCleanedUp(e, pvName, dir);
    });

    it('puts the volume under the nodePath parameter among several configured paths', async () => {
      const paths = ['/opt/disk-a', '/opt/disk-b', '/opt/disk-c'];
      // The random choice would take the first path; nodePath must win.
      const e = await env({
        config: { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths }] },
        random: () => 0,
      });
      await e.storage.createStorageClass({
        body: storageClass('local-path-disk-b', { parameters: { nodePath: '/opt/disk-b' } }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-disk-b'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const pvName = await waitBound(e);
      const nodePath = `/opt/disk-b/${pvName}_default_local-path-pvc`;
      expect((await getVolume(e, pvName))?.spec?.hostPath?.path).toBe(nodePath);
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      expect(existsSync(e.onNode('node-1', '/opt/disk-a'))).toBe(false);
      expect(existsSync(e.onNode('node-1', '/opt/disk-c'))).toBe(false);
      await deleteAndWaitCleanedUp(e, pvName, dir);
    });

    it("spreads volumes over the default node entry's several paths at random", async () => {
      const paths = ['/opt/disk-a', '/opt/disk-b', '/opt/disk-c'];
      let next = 0;
      const e = await env({
        config: { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths }] },
        random: () => next,
      });
      await e.storage.createStorageClass({ body: storageClass() });
      const dirs: string[] = [];
      for (const [i, [value, expected]] of (
        [
          [0, '/opt/disk-a'],
          [0.99, '/opt/disk-c'],
          [0.5, '/opt/disk-b'],
        ] as const
      ).entries()) {
        next = value;
        await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(`pvc-${i}`) });
        await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(`pvc-${i}`, `pod-${i}`) });
        const pvName = await waitBound(e, `pvc-${i}`);
        const nodePath = (await getVolume(e, pvName))!.spec!.hostPath!.path;
        expect(nodePath).toBe(`${expected}/${pvName}_default_pvc-${i}`);
        await waitSucceeded(e, `pod-${i}`);
        dirs.push(e.onNode('node-1', nodePath));
        expect(readFileSync(`${dirs[i]}/test`, 'utf8')).toBe('local-path-test\n');
      }
      await deleteAll(e, ['pod-0', 'pod-1', 'pod-2'], ['pvc-0', 'pvc-1', 'pvc-2']);
      await vi.waitFor(async () => {
        expect(await volumes(e)).toEqual([]);
        for (const dir of dirs) expect(existsSync(dir)).toBe(false);
      }, WAIT);
    });

    it('with the real Math.random, places each volume under one of the configured paths', async () => {
      const paths = ['/opt/disk-a', '/opt/disk-b'];
      const e = await env({ config: { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths }] } });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      const nodePath = (await getVolume(e, pvName))!.spec!.hostPath!.path;
      expect(paths.map((p) => `${p}/${pvName}_default_local-path-pvc`)).toContain(nodePath);
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteAndWaitCleanedUp(e, pvName, dir);
    });

    it('places the folder at the class pathPattern {{ .PVC.Namespace }}/{{ .PVC.Name }}', async () => {
      const e = await env({ config: { storageClassConfigs: { 'local-path-custom-path-pattern': DEFAULT_CONFIG } } });
      await e.storage.createStorageClass({
        body: storageClass('local-path-custom-path-pattern', {
          parameters: { nodePath: BASE_PATH, pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/' },
        }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-custom-path-pattern'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const pvName = await waitBound(e);
      const pv = (await getVolume(e, pvName))!;
      const nodePath = `${BASE_PATH}/default/local-path-pvc`;
      expect(pv.spec?.hostPath?.path).toBe(nodePath);
      expect(pv.spec?.nodeAffinity).toEqual(nodeAffinity('node-1'));
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteAndWaitCleanedUp(e, pvName, dir);
      // Only the volume's own folder is removed.
      expect(existsSync(e.onNode('node-1', `${BASE_PATH}/default`))).toBe(true);
    });
  },
  { tiers: ALL_TIERS },
);
