/**
 * The deleter on both tiers: a released volume cleaned and published again end to end (a pod's data gone, the PV
 * back under the same name), Retain and Recycle left alone, PVs that are not this node's never touched, no escape
 * through symbolic links, block cleaners (their environment, failures retried, a hung one stopped by the timeout and
 * reported) that never hold discovery up; and cleanup Jobs (`useJobForCleaning`): the Job controller (the testkit's,
 * or kube-controller-manager's) makes the pod, the scheduler places it and the simulated kubelet runs its command; the
 * provisioner deletes the succeeded Job (its pod with it, in the foreground), then the PV, and publishes the device
 * again.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchV1Api, type V1Job, type V1PersistentVolumeSpec } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import {
  bind,
  classEntry,
  HOST_DIR,
  localVolumes,
  metricValue,
  morePasses,
  podWith,
  release,
  startEnv,
  storageClass,
  volumeEvents,
  waitVolumes,
  WAIT,
  type Env,
} from './helpers.js';
import { CAN_LOOP, CAN_MOUNT, NO_LOOP_REASON } from './mounts.js';

const NODE = 'node-1';

/** Waits until PV `name` exists again with another UID than `uid`, Available; returns it. */
async function waitRecreated(e: Env, name: string, uid: string | undefined): Promise<void> {
  await vi.waitFor(async () => {
    const pv = await e.read.volume(name);
    if (pv === undefined || pv.metadata?.uid === uid) throw new Error(`PV ${name} not recreated yet`);
    if (pv.status?.phase !== 'Available') throw new Error(`PV ${name} is ${pv.status?.phase ?? 'new'}`);
  }, WAIT);
}

function isMountPoint(dir: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === dir);
}

/** A PV of `node`'s provisioner made by hand (as an admin or an older release would have), for class `className`. */
async function ourVolume(
  e: Env,
  name: string,
  localPath: string,
  className: string,
  extra: Partial<V1PersistentVolumeSpec> = {},
): Promise<void> {
  const node = await e.core.readNode({ name: NODE });
  await e.core.createPersistentVolume({
    body: {
      metadata: {
        name,
        annotations: { 'pv.kubernetes.io/provisioned-by': `local-volume-provisioner-${NODE}-${node.metadata!.uid!}` },
      },
      spec: {
        capacity: { storage: '1Mi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: className,
        local: { path: localPath },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
            ],
          },
        },
        ...extra,
      },
    },
  });
}

describeTiers('deleter', () => {
  it("cleans a released volume and publishes it again: the pod's data is gone, the mount point stays, the PV has the same name", async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('local-storage') });
    const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
    e.mounts.mount(disk);
    const instance = await e.start(NODE, { storageClassMap: { 'local-storage': classEntry(e, NODE) } });
    const name = volumeName('disk1', NODE, 'local-storage');
    const first = (await waitVolumes(e, [name])).get(name)!;

    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'local-storage',
          resources: { requests: { storage: '1Mi' } },
        },
      },
    });
    await e.core.createNamespacedPod({
      namespace: 'default',
      body: podWith('writer', 'data', 'mkdir -p /data/dir && echo secret > /data/dir/file && echo top > /data/top'),
    });
    await vi.waitFor(async () => expect((await e.read.pod('writer'))?.status?.phase).toBe('Succeeded'), WAIT);
    expect((await e.read.volume(name))?.status?.phase).toBe('Bound');
    expect(readFileSync(`${disk}/dir/file`, 'utf8')).toBe('secret\n');

    await e.core.deleteNamespacedPod({ name: 'writer', namespace: 'default' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
    await waitRecreated(e, name, first.metadata?.uid);
    expect(readdirSync(disk)).toEqual([]);
    if (CAN_MOUNT) expect(isMountPoint(disk)).toBe(true);

    const text = await e.metrics(instance);
    expect(
      metricValue(text, 'local_volume_provisioner_persistentvolume_delete_total{mode="Filesystem",type="process"}'),
    ).toBe(1);
    expect(metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="delete"}')).toBe(1);
    expect(metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="create"}')).toBe(2);
    expect(metricValue(text, 'local_volume_provisioner_proctable_succeeded')).toBe(1);
    expect(metricValue(text, 'local_volume_provisioner_proctable_running')).toBe(0);
    expect(text).toMatch(
      /^local_volume_provisioner_persistentvolume_delete_duration_seconds_count\{mode="Filesystem",type="process",capacity="500G",cleanup_command="\/scripts\/quick_reset.sh"\} 1$/m,
    );
    expect(await volumeEvents(e, name, 'VolumeFailedDelete')).toEqual([]);
  });

  it('never touches a Retain volume, and warns about Recycle without touching it', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('keep', { reclaimPolicy: 'Retain' }) });
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const keepDisk = `${e.onNode(NODE, '/mnt/keep')}/disk1`;
    const recycleDisk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
    e.mounts.mount(keepDisk);
    e.mounts.mount(recycleDisk);
    const instance = await e.start(NODE, {
      storageClassMap: { keep: classEntry(e, NODE, {}, '/mnt/keep'), sc1: classEntry(e, NODE) },
    });
    const kept = volumeName('disk1', NODE, 'keep');
    const recycled = volumeName('disk1', NODE, 'sc1');
    await waitVolumes(e, [kept, recycled]);
    await e.core.patchPersistentVolume({
      name: recycled,
      body: [{ op: 'replace', path: '/spec/persistentVolumeReclaimPolicy', value: 'Recycle' }],
    });
    for (const [claim, cls, pv, disk] of [
      ['c1', 'keep', kept, keepDisk],
      ['c2', 'sc1', recycled, recycleDisk],
    ] as const) {
      await bind(e, claim, cls, pv);
      writeFileSync(`${disk}/data`, 'keep me\n');
      await release(e, claim, pv);
    }
    await vi.waitFor(async () => {
      const [event] = await volumeEvents(e, recycled, 'VolumeUnsupportedReclaimPolicy');
      // kube-controller-manager marks a Recycle PV it has no recycler for as Failed, often before a pass saw it Released.
      if (
        e.cluster.tier === 'real' &&
        event === undefined &&
        (await e.read.volume(recycled))?.status?.phase === 'Failed'
      )
        return;
      expect(event).toMatchObject({
        type: 'Warning',
        message: 'Volume has unsupported PersistentVolumeReclaimPolicy: Recycle',
      });
    }, WAIT);
    await morePasses(instance);
    expect((await e.read.volume(kept))?.status?.phase).toBe('Released');
    // kube-controller-manager marks a Recycle PV it has no recycler for as Failed; the testkit leaves it Released.
    expect(['Released', 'Failed']).toContain((await e.read.volume(recycled))?.status?.phase);
    for (const disk of [keepDisk, recycleDisk]) expect(readFileSync(`${disk}/data`, 'utf8')).toBe('keep me\n');
  });

  it('never touches a PV it did not create, nor one whose name does not match its path', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(NODE, HOST_DIR);
    e.mounts.mount(`${dir}/disk1`);
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE, { namePattern: 'disk1' }) } });
    await waitVolumes(e, [volumeName('disk1', NODE, 'sc1')]);
    const node = await e.core.readNode({ name: NODE });
    const ours = `local-volume-provisioner-${NODE}-${node.metadata!.uid!}`;
    const affinity = {
      required: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] }],
      },
    };
    // Another provisioner's PV on a disk of the same directory, and one that claims to be ours but names another entry.
    for (const [pvName, entry, by] of [
      ['someone-elses', 'disk2', 'local-volume-provisioner-other-node-1234'],
      ['impostor', 'disk3', ours],
    ] as const) {
      e.mounts.mount(`${dir}/${entry}`);
      writeFileSync(`${dir}/${entry}/data`, 'not yours\n');
      await e.core.createPersistentVolume({
        body: {
          metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': by } },
          spec: {
            capacity: { storage: '1Mi' },
            accessModes: ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: 'Delete',
            storageClassName: 'sc1',
            local: { path: `${HOST_DIR}/${entry}` },
            nodeAffinity: affinity,
          },
        },
      });
      await bind(e, `claim-${pvName}`, 'sc1', pvName);
      await release(e, `claim-${pvName}`, pvName);
    }
    await vi.waitFor(async () => {
      const [event] = await volumeEvents(e, 'impostor', 'VolumeFailedDelete');
      expect(event?.message).toContain('is not the one discovery gives');
    }, WAIT);
    await morePasses(instance);
    expect(await volumeEvents(e, 'someone-elses')).toEqual([]);
    for (const [pvName, entry] of [
      ['someone-elses', 'disk2'],
      ['impostor', 'disk3'],
    ] as const) {
      expect((await e.read.volume(pvName))?.status?.phase).toBe('Released');
      expect(readFileSync(`${dir}/${entry}/data`, 'utf8')).toBe('not yours\n');
    }
  });

  it('removes symbolic links without following them, and refuses to empty a disk that is no longer mounted', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
    e.mounts.mount(disk);
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    const name = volumeName('disk1', NODE, 'sc1');
    const first = (await waitVolumes(e, [name])).get(name)!;
    const outside = path.join(tmpdir(), `kprov-outside-${process.pid}-${Date.now()}`);
    mkdirSync(`${outside}/sub`, { recursive: true });
    writeFileSync(`${outside}/precious`, 'outside\n');
    writeFileSync(`${outside}/sub/precious`, 'outside\n');
    await bind(e, 'c1', 'sc1', name);
    mkdirSync(`${disk}/nested`);
    symlinkSync(outside, `${disk}/escape`);
    symlinkSync(`${outside}/sub`, `${disk}/nested/escape`);
    symlinkSync(`${outside}/precious`, `${disk}/file-link`);

    // Unmounted while released: the directory left is the host's, not the volume; it is not emptied.
    e.mounts.unmount(disk);
    writeFileSync(`${disk}/host-file`, 'host\n');
    await release(e, 'c1', name);
    await vi.waitFor(async () => {
      const [event] = await volumeEvents(e, name, 'VolumeFailedDelete');
      expect(event?.message).toContain('is not a mount point any more; not cleaning it');
    }, WAIT);
    // Tried again at every pass, the PV kept meanwhile.
    await vi.waitFor(async () => {
      const text = await e.metrics(instance);
      expect(
        metricValue(
          text,
          'local_volume_provisioner_persistentvolume_delete_failed_total{mode="Filesystem",type="process"}',
        ),
      ).toBeGreaterThanOrEqual(2);
    }, WAIT);
    expect(readFileSync(`${disk}/host-file`, 'utf8')).toBe('host\n');
    expect((await e.read.volume(name))?.status?.phase).toBe('Released');

    // Mounted again: cleaned (links removed, their targets kept) and published again.
    rmSync(`${disk}/host-file`);
    e.mounts.mount(disk);
    mkdirSync(`${disk}/nested`);
    symlinkSync(outside, `${disk}/escape`);
    symlinkSync(`${outside}/sub`, `${disk}/nested/escape`);
    await waitRecreated(e, name, first.metadata?.uid);
    expect(readdirSync(disk)).toEqual([]);
    expect(readFileSync(`${outside}/precious`, 'utf8')).toBe('outside\n');
    expect(readFileSync(`${outside}/sub/precious`, 'utf8')).toBe('outside\n');
    rmSync(outside, { recursive: true, force: true });
    expect(instance.provisioner.cleanupStats()).toMatchObject({ running: 0, succeeded: 1 });
  });

  it('cleans only Released volumes: not a Failed one, nor one being deleted', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(NODE, HOST_DIR);
    for (const d of ['disk1', 'disk2']) {
      e.mounts.mount(`${dir}/${d}`);
      writeFileSync(`${dir}/${d}/data`, 'keep me\n');
    }
    const deleting = volumeName('disk1', NODE, 'sc1');
    const failed = volumeName('disk2', NODE, 'sc1');
    // A PV whose claim is gone, marked Failed (as kube-controller-manager does when it cannot reclaim one).
    await ourVolume(e, failed, `${HOST_DIR}/disk2`, 'sc1', {
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'gone',
        uid: '6f1d2c1e-0000-4000-8000-000000000001',
      },
    });
    await vi.waitFor(async () => {
      const pv = await e.core.readPersistentVolume({ name: failed });
      pv.status = { phase: 'Failed', message: 'set by the test' };
      await e.core.replacePersistentVolumeStatus({ name: failed, body: pv });
    }, WAIT);
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    const before = await waitVolumes(e, [deleting, failed]);
    // A PV deleted while bound (a finalizer holds it), then released.
    await bind(e, 'c1', 'sc1', deleting);
    await vi.waitFor(async () => {
      const pv = await e.core.readPersistentVolume({ name: deleting });
      pv.metadata!.finalizers = [...(pv.metadata?.finalizers ?? []), 'example.com/hold'];
      await e.core.replacePersistentVolume({ name: deleting, body: pv });
    }, WAIT);
    await e.core.deletePersistentVolume({ name: deleting });
    await release(e, 'c1', deleting);
    await morePasses(instance, 3);
    const after = await localVolumes(e);
    expect(after.get(deleting)?.metadata?.deletionTimestamp).toBeDefined();
    expect(after.get(deleting)?.metadata?.uid).toBe(before.get(deleting)?.metadata?.uid);
    expect(after.get(failed)?.status?.phase).toBe('Failed');
    expect(after.get(failed)?.metadata?.uid).toBe(before.get(failed)?.metadata?.uid);
    for (const d of ['disk1', 'disk2']) expect(readFileSync(`${dir}/${d}/data`, 'utf8')).toBe('keep me\n');
    const text = await e.metrics(instance);
    expect(metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="delete"}')).toBeUndefined();
    expect(instance.provisioner.cleanupStats()).toEqual({ running: 0, succeeded: 0, failed: 0 });
    expect(await volumeEvents(e, failed)).toEqual([]);
  });

  it('refuses a PV of this node whose path is the discovery directory itself or not inside it', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(NODE, HOST_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/data`, 'keep me\n');
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    for (const [pvName, localPath] of [
      ['at-root', HOST_DIR],
      ['elsewhere', '/mnt/other/disk1'],
    ] as const) {
      await ourVolume(e, pvName, localPath, 'sc1');
      await bind(e, `claim-${pvName}`, 'sc1', pvName);
      await release(e, `claim-${pvName}`, pvName);
    }
    for (const [pvName, localPath] of [
      ['at-root', HOST_DIR],
      ['elsewhere', '/mnt/other/disk1'],
    ] as const) {
      await vi.waitFor(async () => {
        const [event] = await volumeEvents(e, pvName, 'VolumeFailedDelete');
        expect(event?.message).toBe(
          `Error cleaning PV "${pvName}": path "${localPath}" is not an entry of the discovery directory ${HOST_DIR}; not cleaning it`,
        );
      }, WAIT);
    }
    await morePasses(instance);
    expect(readFileSync(`${dir}/data`, 'utf8')).toBe('keep me\n');
    for (const pvName of ['at-root', 'elsewhere'])
      expect((await e.read.volume(pvName))?.status?.phase).toBe('Released');
  });

  it('cleans a Filesystem volume itself with useJobForCleaning: Jobs are for block devices', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
    e.mounts.mount(disk);
    const instance = await e.start(
      NODE,
      { useJobForCleaning: true, storageClassMap: { sc1: classEntry(e, NODE) } },
      { jobImage: 'ghcr.io/kprov/local-static:test' },
    );
    const name = volumeName('disk1', NODE, 'sc1');
    const first = (await waitVolumes(e, [name])).get(name)!;
    await bind(e, 'c1', 'sc1', name);
    writeFileSync(`${disk}/data`, 'x');
    await release(e, 'c1', name);
    await waitRecreated(e, name, first.metadata?.uid);
    expect(readdirSync(disk)).toEqual([]);
    const text = await e.metrics(instance);
    expect(
      metricValue(text, 'local_volume_provisioner_persistentvolume_delete_total{mode="Filesystem",type="process"}'),
    ).toBe(1);
    const batch = e.cluster.kubeConfig.makeApiClient(BatchV1Api);
    expect((await batch.listNamespacedJob({ namespace: 'default' })).items).toEqual([]);
  });
});

describeTiers('deleter of block volumes', () => {
  const skip = !CAN_LOOP;
  const why = NO_LOOP_REASON ?? 'loop devices available';

  it.skipIf(skip)(
    `runs the block cleaner with LOCAL_PV_BLKDEVICE, then publishes the device again (${why})`,
    async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('raw') });
      const dir = e.onNode(NODE, HOST_DIR);
      mkdirSync(dir, { recursive: true });
      symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
      const marker = path.join(dir, '..', 'cleaned');
      const instance = await e.start(NODE, {
        storageClassMap: {
          raw: classEntry(e, NODE, {
            volumeMode: 'Block',
            blockCleanerCommand: ['sh', '-c', `echo "$LOCAL_PV_BLKDEVICE" > ${marker}; echo hello`],
          }),
        },
      });
      const name = volumeName('dev1', NODE, 'raw');
      const first = (await waitVolumes(e, [name])).get(name)!;
      await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
      await release(e, 'c1', name);
      await waitRecreated(e, name, first.metadata?.uid);
      expect(readFileSync(marker, 'utf8')).toBe(`${dir}/dev1\n`);
      await vi.waitFor(async () => {
        const [event] = await volumeEvents(e, name, 'VolumeDelete');
        expect(event).toMatchObject({
          type: 'Normal',
          message: `Starting cleanup of Block PV "${name}", this may take a while`,
        });
      }, WAIT);
      const text = await e.metrics(instance);
      expect(
        metricValue(text, 'local_volume_provisioner_persistentvolume_delete_total{mode="Block",type="process"}'),
      ).toBe(1);
      expect(text).toMatch(
        /^local_volume_provisioner_persistentvolume_delete_duration_seconds_count\{mode="Block",type="process",capacity="500G",cleanup_command="sh"\} 1$/m,
      );
    },
  );

  it.skipIf(skip)(`retries a failing cleaner and keeps the PV, reporting each failure (${why})`, async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('raw') });
    const dir = e.onNode(NODE, HOST_DIR);
    mkdirSync(dir, { recursive: true });
    symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
    const instance = await e.start(NODE, {
      storageClassMap: {
        raw: classEntry(e, NODE, { volumeMode: 'Block', blockCleanerCommand: ['sh', '-c', 'echo wiping; exit 10'] }),
      },
    });
    const name = volumeName('dev1', NODE, 'raw');
    await waitVolumes(e, [name]);
    await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
    await release(e, 'c1', name);
    await vi.waitFor(() => expect(instance.provisioner.cleanupStats().failed).toBeGreaterThanOrEqual(2), WAIT);
    const [event] = await volumeEvents(e, name, 'VolumeFailedDelete');
    expect(event).toMatchObject({ type: 'Warning', message: `Error cleaning PV "${name}": sh exited with status 10` });
    expect((await e.read.volume(name))?.status?.phase).toBe('Released');
    const text = await e.metrics(instance);
    expect(
      metricValue(text, 'local_volume_provisioner_persistentvolume_delete_failed_total{mode="Block",type="process"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, 'local_volume_provisioner_proctable_failed')).toBeGreaterThanOrEqual(2);
  });

  it.skipIf(skip)(`stops a hung cleaner at its timeout and reports it, while discovery goes on (${why})`, async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('raw') });
    await e.storage.createStorageClass({ body: storageClass('fs') });
    const dir = e.onNode(NODE, HOST_DIR);
    mkdirSync(dir, { recursive: true });
    symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
    const pidFile = path.join(dir, '..', 'cleaner.pid');
    const instance = await e.start(NODE, {
      storageClassMap: {
        raw: classEntry(e, NODE, {
          volumeMode: 'Block',
          cleanupTimeout: '1s',
          blockCleanerCommand: ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 600`],
        }),
        fs: classEntry(e, NODE, {}, '/mnt/fs'),
      },
    });
    const name = volumeName('dev1', NODE, 'raw');
    await waitVolumes(e, [name]);
    await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
    await release(e, 'c1', name);
    await vi.waitFor(() => expect(instance.provisioner.cleanupStats().running).toBe(1), WAIT);
    // Discovery is not held up by the running cleanup.
    e.mounts.mount(`${e.onNode(NODE, '/mnt/fs')}/disk1`);
    await waitVolumes(e, [name, volumeName('disk1', NODE, 'fs')]);
    await vi.waitFor(async () => {
      const [event] = await volumeEvents(e, name, 'VolumeFailedDelete');
      expect(event?.message).toBe(`Error cleaning PV "${name}": cleanup of PV ${name} timed out after 1s`);
    }, WAIT);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await vi.waitFor(
      () =>
        expect(existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')).toBe(false),
      WAIT,
    );
    expect((await e.read.volume(name))?.status?.phase).toBe('Released');
    expect(await localVolumes(e)).toHaveProperty('size', 2);
  });

  it.skipIf(skip)(
    `publishes a device again only once its cleaner has finished, even when its PV is deleted meanwhile (${why})`,
    async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('raw') });
      await e.storage.createStorageClass({ body: storageClass('fs') });
      const dir = e.onNode(NODE, HOST_DIR);
      mkdirSync(dir, { recursive: true });
      symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
      const go = path.join(dir, '..', 'go');
      const starts = path.join(dir, '..', 'starts');
      const instance = await e.start(NODE, {
        storageClassMap: {
          raw: classEntry(e, NODE, {
            volumeMode: 'Block',
            blockCleanerCommand: ['sh', '-c', `echo start >> ${starts}; while [ ! -e ${go} ]; do sleep 0.05; done`],
          }),
          fs: classEntry(e, NODE, {}, '/mnt/fs'),
        },
      });
      const name = volumeName('dev1', NODE, 'raw');
      await waitVolumes(e, [name]);
      await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
      await release(e, 'c1', name);
      await vi.waitFor(() => expect(instance.provisioner.cleanupStats().running).toBe(1), WAIT);
      await morePasses(instance, 3);
      // An admin deletes the PV while the device is being wiped: it is not published again yet; other disks are.
      await e.core.deletePersistentVolume({ name });
      e.mounts.mount(`${e.onNode(NODE, '/mnt/fs')}/disk1`);
      const other = volumeName('disk1', NODE, 'fs');
      await waitVolumes(e, [other]);
      await morePasses(instance, 3);
      expect([...(await localVolumes(e)).keys()]).toEqual([other]);
      writeFileSync(go, '');
      await waitVolumes(e, [name, other]);
      expect(instance.provisioner.cleanupStats()).toMatchObject({ running: 0, succeeded: 1, failed: 0 });
      // Started once, however many passes saw the PV Released while it ran.
      expect(readFileSync(starts, 'utf8')).toBe('start\n');
      expect(await volumeEvents(e, name, 'VolumeFailedDelete')).toEqual([]);
    },
  );
});

describeTiers(
  'cleanup Jobs',
  () => {
    it.skipIf(!CAN_LOOP)(
      `wipe a released block volume with a Job shaped as upstream's, then publish it again (${NO_LOOP_REASON ?? 'loop devices available'})`,
      async () => {
        const e = await startEnv();
        await e.storage.createStorageClass({ body: storageClass('raw') });
        const dir = e.onNode(NODE, HOST_DIR);
        mkdirSync(dir, { recursive: true });
        symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
        const instance = await e.start(
          NODE,
          {
            useJobForCleaning: true,
            jobTolerations: [{ key: 'dedicated', operator: 'Exists' }],
            storageClassMap: {
              raw: classEntry(e, NODE, { volumeMode: 'Block', blockCleanerCommand: ['sh', '-c', 'exit 0'] }),
            },
          },
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
        expect(job.metadata?.labels).toEqual({
          'kubernetes.io/hostname': NODE,
          pv: name,
          pvuuid: first.metadata!.uid!,
        });
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

        await vi.waitFor(
          async () => {
            const pv = await e.read.volume(name);
            if (pv === undefined || pv.metadata?.uid === first.metadata?.uid || pv.status?.phase !== 'Available')
              throw new Error('not published again yet');
          },
          { timeout: 60_000, interval: 100 },
        );
        // Deleted in the foreground: its pod went with it.
        await vi.waitFor(async () => {
          expect((await batch.listNamespacedJob({ namespace: 'default' })).items).toEqual([]);
          expect((await e.core.listNamespacedPod({ namespace: 'default', labelSelector: `pv=${name}` })).items).toEqual(
            [],
          );
        }, WAIT);
        const text = await e.metrics(instance);
        expect(
          metricValue(text, 'local_volume_provisioner_persistentvolume_delete_total{mode="Block",type="job"}'),
        ).toBe(1);
      },
    );

    it.skipIf(!CAN_LOOP)(
      `create no second Job while a cleanup Job of the PV is there and not done (${NO_LOOP_REASON ?? 'loop devices available'})`,
      async () => {
        const e = await startEnv();
        await e.storage.createStorageClass({ body: storageClass('raw') });
        const dir = e.onNode(NODE, HOST_DIR);
        mkdirSync(dir, { recursive: true });
        symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
        const instance = await e.start(
          NODE,
          {
            useJobForCleaning: true,
            storageClassMap: {
              raw: classEntry(e, NODE, { volumeMode: 'Block', blockCleanerCommand: ['sh', '-c', 'exit 0'] }),
            },
          },
          { jobImage: 'ghcr.io/kprov/local-static:test' },
        );
        const name = volumeName('dev1', NODE, 'raw');
        await waitVolumes(e, [name]);
        await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
        // A cleanup Job of this PV left by an earlier run of the provisioner, still not done (suspended).
        const batch = e.cluster.kubeConfig.makeApiClient(BatchV1Api);
        const existing = await batch.createNamespacedJob({
          namespace: 'default',
          body: {
            metadata: { name: `cleanup-${name}`, labels: { pv: name } },
            spec: {
              suspend: true,
              template: {
                spec: {
                  restartPolicy: 'Never',
                  containers: [{ name: 'cleaner', image: 'busybox', command: ['sh', '-c', 'exit 0'] }],
                },
              },
            },
          },
        });
        await release(e, 'c1', name);
        await morePasses(instance, 4);
        const jobs = (await batch.listNamespacedJob({ namespace: 'default' })).items;
        expect(jobs.map((j) => j.metadata?.uid)).toEqual([existing.metadata?.uid]);
        expect((await e.read.volume(name))?.status?.phase).toBe('Released');
        expect(
          metricValue(await e.metrics(instance), 'local_volume_provisioner_apiserver_requests_total{method="delete"}'),
        ).toBeUndefined();
      },
    );
  },
  { tiers: ['testkit', 'real'] },
);
