/**
 * local-static from its Helm chart on a real node, installed as docs/local-static.md says for block devices: the
 * image imported with `ctr`, `helm install` with deploy/examples/block-values.yaml (a Filesystem class and a Block
 * class). A disk mounted and a loop device linked after the provisioner's pod started become a Filesystem and a Block
 * PV, which the commands of the chart's notes show; a pod writes to the device; released, the block cleaner of the
 * values wipes it and it is published again; the pod stops cleanly on SIGTERM.
 */
import { symlinkSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { VOLUME_DELETE } from '../../src/events/volume-events.js';
import {
  BLOCK_DISKS,
  CANNOT_RUN,
  consumerPod,
  createClaim,
  deletePod,
  deviceHead,
  docCommands,
  FAST_DISKS,
  INSTALL,
  notesCommands,
  prepareNode,
  RECYCLE_MS,
  releaseClaim,
  runPod,
  stopProvisioner,
  TEST_MS,
  waitAvailableVolume,
  waitProvisionerReady,
} from './helpers.js';

/** The DaemonSet of release `local-static` of the chart. */
const DAEMON_SET = 'local-static-local-static-provisioner';

describe('docs/local-static.md', () => {
  it('gives the commands this suite installs with', () => {
    expect(docCommands()).toEqual(expect.arrayContaining([INSTALL.importImage, INSTALL.helmBlock]));
  });
});

if (CANNOT_RUN !== undefined) {
  describe.skip(`local-static from its chart on a real node (${CANNOT_RUN})`, () => {
    it('publishes, lends and wipes a block device', () => undefined);
  });
} else {
  describeTiers(
    'local-static from its chart on a real node',
    (tier) => {
      it(
        'publishes a disk and a block device given after it started, as its notes show; a pod writes to the device; released, the block cleaner wipes it and it is published again; SIGTERM stops it cleanly',
        async () => {
          const i = await prepareNode(tier);
          const installed = await i.run(INSTALL.helmBlock);
          const pod = await waitProvisionerReady(i, DAEMON_SET);

          // A disk mounted and a block device linked on the node now, after the pod started.
          const disk = i.cluster.onNode('node-1', `${FAST_DISKS}/vol1`);
          i.mounts.mount(disk, 16);
          const device = i.mounts.loopDevice(16);
          symlinkSync(device, i.cluster.onNode('node-1', `${BLOCK_DISKS}/disk1`));
          const fs = await waitAvailableVolume(i, `${FAST_DISKS}/vol1`);
          expect(fs.spec).toMatchObject({ storageClassName: 'fast-disks', volumeMode: 'Filesystem' });
          const pv = await waitAvailableVolume(i, `${BLOCK_DISKS}/disk1`);
          expect(pv.spec).toMatchObject({
            capacity: { storage: '16Mi' },
            storageClassName: 'block-disks',
            volumeMode: 'Block',
            persistentVolumeReclaimPolicy: 'Delete',
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
                ],
              },
            },
          });
          // The commands of the chart's notes show what they say they show.
          const [listVolumes, listPods] = notesCommands(installed);
          const volumes = await i.tools.kubectl(...listVolumes!);
          expect(volumes).toContain(fs.metadata!.name!);
          expect(volumes).toContain(pv.metadata!.name!);
          expect(await i.tools.kubectl(...listPods!)).toContain(pod);

          await createClaim(i, 'raw', 'block-disks', { block: true });
          const writer = await runPod(
            i,
            consumerPod(
              'writer',
              'raw',
              'printf written-in-a-pod | dd of=/dev/xvda conv=fsync 2>/dev/null && dd if=/dev/xvda bs=16 count=1 2>/dev/null',
              true,
            ),
          );
          expect(writer).toEqual({ phase: 'Succeeded', log: 'written-in-a-pod' });
          expect((await i.read.claim('raw'))?.spec?.volumeName).toBe(pv.metadata?.name);
          expect(deviceHead(device, 16).toString()).toBe('written-in-a-pod');

          await deletePod(i, 'writer');
          await releaseClaim(i, 'raw', pv.metadata!.name!);
          const again = await waitAvailableVolume(i, `${BLOCK_DISKS}/disk1`, [pv.metadata!.uid!], RECYCLE_MS);
          expect(again.metadata?.name).toBe(pv.metadata?.name);
          expect(deviceHead(device, 16 << 20).every((b) => b === 0)).toBe(true);
          const started = await i.read.events({
            kind: 'PersistentVolume',
            name: pv.metadata!.name!,
            reason: VOLUME_DELETE,
          });
          expect(started.map((e) => e.message)).toContain(
            `Starting cleanup of Block PV "${pv.metadata!.name!}", this may take a while`,
          );

          const { container, afterSignal } = await stopProvisioner(i, pod);
          expect(container.log).toMatch(/Shredding \/mnt\/block-disks\/disk1 completed/);
          expect(container.exitCode).toBe(0);
          expect(afterSignal.filter((l) => /^[EF]\d{4} /.test(l))).toEqual([]);
          expect(afterSignal.at(-1)).toMatch(/"Stopped"$/);
        },
        TEST_MS,
      );
    },
    { tiers: ['node'] },
  );
}
