/**
 * The rest of upstream's e2e scenarios (reference 6.2), each with upstream's example pod shape: a pod pinned by
 * required node affinity, a ReadWriteOncePod claim with `volumeType: local`, a pod with a security context that
 * runs to completion, two containers on subPaths of one volume, and an unsafe pathPattern accepted through the
 * `allowUnsafePathPattern` parameter and through the class annotation. Plus the bad inputs of the acceptance list
 * that depend on config.json: a node with no path and no default entry, and a `nodePath` that is not configured.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import { expect, it } from 'vitest';
import {
  BASE_PATH,
  claim,
  deleteAndWaitCleanedUp,
  getVolume,
  helperPodsNow,
  perTest,
  provisioningFailure,
  storageClass,
  volumes,
  volumeTestPod,
  waitBound,
  waitSucceeded,
} from '../provisioner/helpers.js';

const { env } = perTest();

const DEFAULT_CONFIG = { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [BASE_PATH] }] };
const TWO_NODES = [{ name: 'node-1' }, { name: 'node-2' }];

function hostnameIn(node: string): { key: string; operator: string; values: string[] } {
  return { key: 'kubernetes.io/hostname', operator: 'In', values: [node] };
}

describeTiers(
  'upstream e2e scenarios: pod shapes',
  () => {
    it('follows a pod pinned to node-2 by required node affinity (TestPodWithNodeAffinity)', async () => {
      const e = await env({ config: DEFAULT_CONFIG, nodes: TWO_NODES });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      const pod = volumeTestPod();
      pod.spec!.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [hostnameIn('node-2')] }],
          },
        },
      };
      await e.core.createNamespacedPod({ namespace: 'default', body: pod });

      const pvName = await waitBound(e);
      const nodePath = `${BASE_PATH}/${pvName}_default_local-path-pvc`;
      const pv = (await getVolume(e, pvName))!;
      expect(pv.spec?.hostPath).toEqual({ path: nodePath, type: 'DirectoryOrCreate' });
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
        { matchExpressions: [hostnameIn('node-2')] },
      ]);
      await waitSucceeded(e);
      expect(readFileSync(e.onNode('node-2', `${nodePath}/test`), 'utf8')).toBe('local-path-test\n');
      expect(existsSync(e.onNode('node-1', nodePath))).toBe(false);
      await deleteAndWaitCleanedUp(e, pvName, e.onNode('node-2', nodePath), 'volume-test', 'local-path-pvc');
    });

    it('serves a ReadWriteOncePod claim annotated volumeType: local (TestPodWithRWOPVolume)', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({ body: storageClass() });
      const pvc = claim('local-volume-pvc', 'local-path', { accessModes: ['ReadWriteOncePod'] });
      pvc.metadata!.annotations = { volumeType: 'local' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod('local-volume-pvc') });

      const pvName = await waitBound(e, 'local-volume-pvc');
      const nodePath = `${BASE_PATH}/${pvName}_default_local-volume-pvc`;
      const pv = (await getVolume(e, pvName))!;
      expect(pv.spec?.accessModes).toEqual(['ReadWriteOncePod']);
      expect(pv.spec?.local).toEqual({ path: nodePath });
      await waitSucceeded(e);
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      await deleteAndWaitCleanedUp(e, pvName, dir, 'volume-test', 'local-volume-pvc');
    });

    it('runs a pod with a non-root security context to completion (TestPodWithSecurityContext)', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      const pod = volumeTestPod('local-path-pvc', 'security-context');
      pod.spec!.securityContext = { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 };
      pod.spec!.containers[0]!.command = [
        'sh',
        '-c',
        'mkdir -p /data/app && echo first > /data/app/1 && echo second > /data/app/2',
      ];
      await e.core.createNamespacedPod({ namespace: 'default', body: pod });

      const pvName = await waitBound(e);
      await waitSucceeded(e, 'security-context');
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      expect(readFileSync(`${dir}/app/1`, 'utf8')).toBe('first\n');
      expect(readFileSync(`${dir}/app/2`, 'utf8')).toBe('second\n');
      await deleteAndWaitCleanedUp(e, pvName, dir, 'security-context', 'local-path-pvc');
    });

    it('gives two containers their own subPath of one volume (TestPodWithSubpath)', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      const container = (name: string): NonNullable<V1Pod['spec']>['containers'][number] => ({
        name,
        image: 'busybox',
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', `echo ${name} > /data/owner`],
        volumeMounts: [{ name: 'volv', mountPath: '/data', subPath: name }],
      });
      const pod: V1Pod = {
        metadata: { name: 'subpath', namespace: 'default' },
        spec: {
          restartPolicy: 'Never',
          containers: [container('nginx'), container('busybox')],
          volumes: [{ name: 'volv', persistentVolumeClaim: { claimName: 'local-path-pvc' } }],
        },
      };
      await e.core.createNamespacedPod({ namespace: 'default', body: pod });

      const pvName = await waitBound(e);
      await waitSucceeded(e, 'subpath');
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      expect(readFileSync(`${dir}/nginx/owner`, 'utf8')).toBe('nginx\n');
      expect(readFileSync(`${dir}/busybox/owner`, 'utf8')).toBe('busybox\n');
      await deleteAndWaitCleanedUp(e, pvName, dir, 'subpath', 'local-path-pvc');
    });

    // Upstream's pattern: outside the claim's directory, refused by default, joined under the base path when allowed.
    const UNSAFE_PATTERN = '/opt/../{{ .PVC.Namespace }}_{{ .PVC.Name }}/../etc/';
    for (const [how, extra] of [
      ['parameter', { parameters: { pathPattern: UNSAFE_PATTERN, allowUnsafePathPattern: 'true' } }],
      [
        'class annotation',
        {
          parameters: { pathPattern: UNSAFE_PATTERN },
          metadata: { name: 'local-path-unsafe', annotations: { allowUnsafePathPattern: 'true' } },
        },
      ],
    ] as const) {
      it(`accepts an unsafe pathPattern allowed by the ${how} (TestPodWithSkipPathPatternCheck)`, async () => {
        const e = await env({ config: DEFAULT_CONFIG });
        await e.storage.createStorageClass({ body: storageClass('local-path-unsafe', extra) });
        await e.core.createNamespacedPersistentVolumeClaim({
          namespace: 'default',
          body: claim('local-path-pvc', 'local-path-unsafe'),
        });
        await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

        const pvName = await waitBound(e);
        const nodePath = `${BASE_PATH}/etc`;
        expect((await getVolume(e, pvName))?.spec?.hostPath?.path).toBe(nodePath);
        await waitSucceeded(e);
        const dir = e.onNode('node-1', nodePath);
        expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
        await deleteAndWaitCleanedUp(e, pvName, dir, 'volume-test', 'local-path-pvc');
      });
    }
  },
  { tiers: ALL_TIERS },
);

describeTiers(
  'bad input from config.json: a clear event on the claim, nothing created',
  () => {
    it('refuses a node that has no entry when there is no DEFAULT_PATH_FOR_NON_LISTED_NODES', async () => {
      const e = await env({ config: { nodePathMap: [{ node: 'node-1', paths: [BASE_PATH] }] }, nodes: TWO_NODES });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: volumeTestPod('local-path-pvc', 'volume-test', { 'kubernetes.io/hostname': 'node-2' }),
      });

      expect(await provisioningFailure(e, 'local-path-pvc')).toContain(
        "config doesn't contain node node-2, and no DEFAULT_PATH_FOR_NON_LISTED_NODES available",
      );
      expect(await volumes(e)).toEqual([]);
      expect(await helperPodsNow(e)).toEqual([]);
      expect(existsSync(e.onNode('node-2', BASE_PATH))).toBe(false);
    });

    it("refuses a nodePath parameter that is not among the node's paths", async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({
        body: storageClass('local-path-elsewhere', { parameters: { nodePath: '/mnt/elsewhere' } }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-elsewhere'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const message = await provisioningFailure(e, 'local-path-pvc');
      expect(message).toContain('/mnt/elsewhere');
      expect(message).toContain('node-1');
      expect(await volumes(e)).toEqual([]);
      expect(await helperPodsNow(e)).toEqual([]);
      expect(existsSync(e.onNode('node-1', '/mnt/elsewhere'))).toBe(false);
      expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(false);
    });
    it('refuses an unknown volumeType before any helper pod runs, so no directory is left (upstream creates it first)', async () => {
      const e = await env({ config: DEFAULT_CONFIG });
      await e.storage.createStorageClass({ body: storageClass() });
      const pvc = claim();
      pvc.metadata!.annotations = { volumeType: 'nfs' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const message = await provisioningFailure(e, 'local-path-pvc');
      expect(message).toBe(
        'failed to create persistent volume source: "nfs" is not a recognised volume type; ' +
          'set the claim\'s annotation volumeType to "local" or "hostPath"',
      );
      expect(await volumes(e)).toEqual([]);
      expect(await helperPodsNow(e)).toEqual([]);
      expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(false);
    });
  },
  { tiers: ALL_TIERS },
);
