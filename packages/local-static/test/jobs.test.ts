/**
 * Cleaning block volumes with Jobs (`useJobForCleaning`), on the real tier only: the testkit serves no batch/v1 Jobs.
 * kube-controller-manager's Job controller makes the pod, kube-scheduler places it and the simulated kubelet runs its
 * command; the provisioner deletes the succeeded Job, then the PV, and publishes the device again.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { BatchV1Api, type V1Job } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import { bind, classEntry, HOST_DIR, metricValue, release, startEnv, storageClass, waitVolumes, WAIT } from './helpers.js';
import { CAN_LOOP, NO_LOOP_REASON } from './mounts.js';

const NODE = 'node-1';

describeTiers(
  'cleanup Jobs',
  () => {
    it.skipIf(!CAN_LOOP)(`wipe a released block volume with a Job shaped as upstream's, then publish it again (${NO_LOOP_REASON ?? 'loop devices available'})`, async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('raw') });
      const dir = e.onNode(NODE, HOST_DIR);
      mkdirSync(dir, { recursive: true });
      symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
      const instance = await e.start(
        NODE,
        { useJobForCleaning: true, jobTolerations: [{ key: 'dedicated', operator: 'Exists' }], storageClassMap: { raw: classEntry(e, NODE, { volumeMode: 'Block', blockCleanerCommand: ['sh', '-c', 'exit 0'] }) } },
        { jobImage: 'ghcr.io/kprov/local-static:test' },
      );
      const name = volumeName('dev1', NODE, 'raw');
      const first = (await waitVolumes(e, [name])).get(name)!;
      await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
      const batch = e.cluster.kubeConfig.makeApiClient(BatchV1Api);
      const jobs: V1Job[] = [];
      await release(e, 'c1', name);
      await vi.waitFor(async () => {
        const job = await batch.readNamespacedJob({ name: `cleanup-${name}`, namespace: 'default' });
        jobs.push(job);
      }, WAIT);
      const job = jobs[0]!;
      expect(job.metadata?.labels).toEqual({ 'kubernetes.io/hostname': NODE, pv: name, pvuuid: first.metadata!.uid! });
      expect(job.metadata?.annotations?.device).toBe(`${dir}/dev1`);
      const pod = job.spec!.template.spec!;
      expect(pod.containers[0]).toMatchObject({
        name: 'cleaner',
        image: 'ghcr.io/kprov/local-static:test',
        command: ['sh', '-c', 'exit 0'],
        env: [{ name: 'LOCAL_PV_BLKDEVICE', value: `${dir}/dev1` }],
        securityContext: { privileged: true },
      });
      expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Exists' }]);
      expect(pod.nodeSelector).toEqual({ 'kubernetes.io/hostname': NODE });

      await vi.waitFor(async () => {
        const pv = await e.read.volume(name);
        if (pv === undefined || pv.metadata?.uid === first.metadata?.uid || pv.status?.phase !== 'Available') throw new Error('not published again yet');
      }, { timeout: 60_000, interval: 100 });
      await vi.waitFor(async () => expect((await batch.listNamespacedJob({ namespace: 'default' })).items).toEqual([]), WAIT);
      const text = await e.metrics(instance);
      expect(metricValue(text, 'local_volume_provisioner_persistentvolume_delete_total{mode="Block",type="job"}')).toBe(1);
    });
  },
  { tiers: ['real'] },
);
