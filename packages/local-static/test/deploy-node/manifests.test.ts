/**
 * local-static from deploy/ on a real node, installed as docs/local-static.md says: the image imported with `ctr`,
 * then `kubectl apply -f packages/local-static/deploy/`. A disk mounted on the node after the provisioner's pod
 * started reaches it by mount propagation and becomes a PV; a pod writes to it; released, it is emptied and published
 * again; unmounted while released, it is left alone until mounted again. A block device linked into the same
 * directory is a Filesystem PV of the manifest's `fsType`, which the kubelet formats; released, the manifest's block
 * cleaner wipes it. The pod stops cleanly on SIGTERM.
 */
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { waitFor } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { VOLUME_FAILED_DELETE } from '../../src/events/volume-events.js';
import {
  CANNOT_RUN,
  consumerPod,
  createClaim,
  deletePod,
  deviceHead,
  DISCOVERY_MS,
  docCommands,
  FAST_DISKS,
  INSTALL,
  prepareNode,
  RECYCLE_MS,
  releaseClaim,
  runPod,
  stopProvisioner,
  TEST_MS,
  waitAvailableVolume,
  waitDeviceFree,
  waitProvisionerReady,
} from './helpers.js';

/** The DaemonSet of deploy/daemonset.yaml. */
const DAEMON_SET = 'local-volume-provisioner';
/** Where an ext2/3/4 filesystem has its magic number: superblock at 1024, field `s_magic` at 56. */
const EXT_MAGIC_OFFSET = 1024 + 56;

describe('docs/local-static.md', () => {
  it('gives the commands this suite installs with', () => {
    expect(docCommands()).toEqual(expect.arrayContaining([INSTALL.importImage, INSTALL.apply]));
  });
});

if (CANNOT_RUN !== undefined) {
  describe.skip(`local-static from deploy/ on a real node (${CANNOT_RUN})`, () => {
    it('publishes, lends and recycles disks', () => undefined);
  });
} else {
  describeTiers(
    'local-static from deploy/ on a real node',
    (tier) => {
      it(
        'publishes disks mounted or linked after it started; pods use them; released, they are emptied or wiped and published again, but not while unmounted; SIGTERM stops it cleanly',
        async () => {
          const i = await prepareNode(tier);
          await i.run(INSTALL.apply);
          const pod = await waitProvisionerReady(i, DAEMON_SET);

          // A disk mounted on the node now, after the pod started: it reaches the pod by propagation.
          const disk = i.cluster.onNode('node-1', `${FAST_DISKS}/vol1`);
          i.mounts.mount(disk, 16);
          const pv = await waitAvailableVolume(i, `${FAST_DISKS}/vol1`);
          const name = pv.metadata!.name!;
          expect(pv.spec).toMatchObject({
            capacity: { storage: '16Mi' },
            storageClassName: 'fast-disks',
            volumeMode: 'Filesystem',
            persistentVolumeReclaimPolicy: 'Delete',
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
                ],
              },
            },
          });
          expect(pv.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'node-1' });

          await createClaim(i, 'data', 'fast-disks');
          const writer = await runPod(
            i,
            consumerPod('writer', 'data', 'echo written-in-a-pod > /data/file && mkdir /data/dir && cat /data/file'),
          );
          expect(writer).toEqual({ phase: 'Succeeded', log: 'written-in-a-pod\n' });
          expect((await i.read.claim('data'))?.spec?.volumeName).toBe(name);
          expect(readFileSync(`${disk}/file`, 'utf8')).toBe('written-in-a-pod\n');

          await deletePod(i, 'writer');
          await releaseClaim(i, 'data', name);
          const again = await waitAvailableVolume(i, `${FAST_DISKS}/vol1`, [pv.metadata!.uid!], RECYCLE_MS);
          expect(again.metadata?.name).toBe(name);
          expect(readdirSync(disk)).toEqual([]);

          // Used again, then the disk is unmounted before the claim goes: what is left at the path is the node's own
          // directory, which the cleanup must not empty (the unmount reaches the pod by propagation too).
          await createClaim(i, 'data', 'fast-disks');
          expect((await runPod(i, consumerPod('reader', 'data', 'ls /data'))).phase).toBe('Succeeded');
          await deletePod(i, 'reader');
          i.mounts.unmount(disk);
          writeFileSync(`${disk}/on-the-node`, 'not the volume\n');
          await releaseClaim(i, 'data', name);
          const refused = await waitFor(
            `a ${VOLUME_FAILED_DELETE} event of ${name}`,
            async () =>
              (
                await i.read.events({
                  kind: 'PersistentVolume',
                  uid: again.metadata!.uid!,
                  reason: VOLUME_FAILED_DELETE,
                })
              )[0],
            { timeoutMs: DISCOVERY_MS, intervalMs: 500 },
          );
          expect(refused.message).toBe(
            `Error cleaning PV "${name}": path "${FAST_DISKS}/vol1" is not a mount point any more; not cleaning it`,
          );
          expect((await i.read.volume(name))?.status?.phase).toBe('Released');
          expect(readFileSync(`${disk}/on-the-node`, 'utf8')).toBe('not the volume\n');
          // A disk mounted there again is cleaned and published.
          i.mounts.mount(disk, 8);
          const third = await waitAvailableVolume(
            i,
            `${FAST_DISKS}/vol1`,
            [pv.metadata!.uid!, again.metadata!.uid!],
            RECYCLE_MS,
          );
          expect(third.spec?.capacity?.storage).toBe('8Mi');

          // A block device linked into the directory: a Filesystem PV of the class's fsType, which the kubelet
          // formats for the pod; released, the class's block cleaner (shred, then zeros) wipes it.
          const device = i.mounts.loopDevice(32);
          symlinkSync(device, i.cluster.onNode('node-1', `${FAST_DISKS}/disk1`));
          const formatted = await waitAvailableVolume(i, `${FAST_DISKS}/disk1`);
          expect(formatted.spec).toMatchObject({
            capacity: { storage: '32Mi' },
            local: { path: `${FAST_DISKS}/disk1`, fsType: 'ext4' },
            volumeMode: 'Filesystem',
          });
          // Larger than the 8Mi disk: only the device fits.
          await createClaim(i, 'formatted', 'fast-disks', { storage: '20Mi' });
          const user = await runPod(
            i,
            consumerPod('user', 'formatted', 'echo written-in-a-pod > /data/file && grep " /data " /proc/mounts'),
          );
          expect(user.phase).toBe('Succeeded');
          expect(user.log).toMatch(/ \/data ext4 /);
          expect(deviceHead(device, 2048).readUInt16LE(EXT_MAGIC_OFFSET)).toBe(0xef53);
          await deletePod(i, 'user');
          await waitDeviceFree(device);
          await releaseClaim(i, 'formatted', formatted.metadata!.name!);
          await waitAvailableVolume(i, `${FAST_DISKS}/disk1`, [formatted.metadata!.uid!], RECYCLE_MS);
          expect(deviceHead(device, 32 << 20).every((b) => b === 0)).toBe(true);

          const { container, afterSignal } = await stopProvisioner(i, pod);
          expect(container.log).toContain(`Shredding ${FAST_DISKS}/disk1 completed`);
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
