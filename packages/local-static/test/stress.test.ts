/**
 * The reference's stress scenario, scaled down: two nodes with three disks each, a WaitForFirstConsumer class, and
 * pods of three claims each created one after the other, more claims than disks. Each pod finds its volumes empty,
 * writes to them and is deleted with its claims once done; the released disks are cleaned and published again, so
 * every pod runs in the end. On the testkit only, to keep the package's run short (the same path runs on the real
 * tier in the deleter's tests).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import { classEntry, HOST_DIR, metricValue, startEnv, storageClass, waitVolumes } from './helpers.js';

const NODES = ['node-a', 'node-b'];
const DISKS = 3;
const PODS = 4;
const CLAIMS = 3;

function pod(name: string, claims: string[]): V1Pod {
  const dirs = claims.map((_, i) => `/data${i}`);
  // Fails when a volume is not empty: the disk of a previous pod was not cleaned.
  const command = [...dirs.map((d) => `test -z "$(ls -A ${d})"`), ...dirs.map((d) => `echo ${name} > ${d}/f`)].join(
    ' && ',
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: 'busybox',
          command: ['sh', '-c', command],
          volumeMounts: dirs.map((d, i) => ({ name: `v${i}`, mountPath: d })),
        },
      ],
      volumes: claims.map((claim, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: claim } })),
    },
  };
}

describeTiers(
  'stress',
  () => {
    it(`runs ${PODS} pods of ${CLAIMS} claims each on ${NODES.length} nodes of ${DISKS} disks, recycling the disks`, async () => {
      const e = await startEnv(NODES.map((name) => ({ name })));
      await e.storage.createStorageClass({ body: storageClass('stress') });
      const names: string[] = [];
      for (const node of NODES) {
        for (let i = 0; i < DISKS; i++) {
          e.mounts.mount(`${e.onNode(node, HOST_DIR)}/disk${i}`, 1);
          names.push(volumeName(`disk${i}`, node, 'stress'));
        }
      }
      const instances = [];
      for (const node of NODES)
        instances.push(await e.start(node, { storageClassMap: { stress: classEntry(e, node) } }));
      await waitVolumes(e, names);

      const done = new Set<string>();
      const created: string[] = [];
      const claimsOf = (p: string): string[] => Array.from({ length: CLAIMS }, (_, i) => `${p}-c${i}`);
      await vi.waitFor(
        async () => {
          // One more pod at each round, while fewer than two are in flight (so the disks have to be recycled).
          if (created.length < PODS && created.length - done.size < 2) {
            const p = `pod-${created.length}`;
            for (const claim of claimsOf(p)) {
              await e.core.createNamespacedPersistentVolumeClaim({
                namespace: 'default',
                body: {
                  metadata: { name: claim },
                  spec: {
                    accessModes: ['ReadWriteOnce'],
                    storageClassName: 'stress',
                    resources: { requests: { storage: '1Mi' } },
                  },
                },
              });
            }
            await e.core.createNamespacedPod({ namespace: 'default', body: pod(p, claimsOf(p)) });
            created.push(p);
          }
          for (const p of created) {
            if (done.has(p)) continue;
            const phase = (await e.read.pod(p))?.status?.phase;
            if (phase === 'Failed') throw new Error(`pod ${p} failed: a volume it got was not empty`);
            if (phase !== 'Succeeded') continue;
            await e.core.deleteNamespacedPod({ name: p, namespace: 'default', gracePeriodSeconds: 0 });
            for (const claim of claimsOf(p))
              await e.core.deleteNamespacedPersistentVolumeClaim({ name: claim, namespace: 'default' });
            done.add(p);
          }
          expect(done.size).toBe(PODS);
        },
        { timeout: 40_000, interval: 100 },
      );
      let deleted = 0;
      for (const instance of instances) {
        deleted +=
          metricValue(
            await e.metrics(instance),
            'local_volume_provisioner_apiserver_requests_total{method="delete"}',
          ) ?? 0;
      }
      // More claims than disks: some disks served two pods.
      expect(deleted).toBeGreaterThanOrEqual(PODS * CLAIMS - NODES.length * DISKS);
    }, 60_000);
  },
  { tiers: ['testkit'] },
);
