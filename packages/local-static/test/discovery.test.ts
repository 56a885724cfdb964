/**
 * Discovery on both tiers, with real mounts (or a mount-table fixture where mounting is not permitted) and real loop
 * devices: the reference's discovery scenarios (basic shapes, second pass, later entries, unknown entries, a
 * directory in a Block class, a directory that is not a mount point, a missing StorageClass, ownerRef and alpha
 * affinity), a disk unmounted and mounted again, and two nodes with the same layout.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import {
  classEntry,
  configOf,
  HOST_DIR,
  localVolumes,
  metricValue,
  morePasses,
  startEnv,
  storageClass,
  waitReady,
  waitVolumes,
  WAIT,
} from './helpers.js';
import { CAN_LOOP, NO_LOOP_REASON } from './mounts.js';

const NODE = 'node-1';

describeTiers('discovery', () => {
  it('publishes each mounted disk as a local PV pinned to its node, with the class, labels and capacity of the reference', async () => {
    const e = await startEnv([
      { name: NODE, labels: { 'topology.kubernetes.io/zone': 'zone-a', 'not-inherited': 'x' } },
    ]);
    await e.storage.createStorageClass({ body: storageClass('sc1', { mountOptions: ['ro'] }) });
    const dir = e.onNode(NODE, HOST_DIR);
    e.mounts.mount(`${dir}/mount1`, 16);
    e.mounts.mount(`${dir}/mount2`, 32);
    const node = await e.core.readNode({ name: NODE });
    const instance = await e.start(NODE, {
      storageClassMap: { sc1: classEntry(e, NODE) },
      nodeLabelsForPV: ['topology.kubernetes.io/zone', 'kubernetes.io/hostname', 'missing.example.com/label'],
      labelsForPV: { 'local-storage-cr-name': 'foobar' },
      setPVOwnerRef: true,
    });
    const name1 = volumeName('mount1', NODE, 'sc1');
    const name2 = volumeName('mount2', NODE, 'sc1');
    const pvs = await waitVolumes(e, [name1, name2]);
    const pv = pvs.get(name1)!;
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(
      `local-volume-provisioner-${NODE}-${node.metadata!.uid!}`,
    );
    expect(pv.metadata?.labels).toEqual({
      'topology.kubernetes.io/zone': 'zone-a',
      'kubernetes.io/hostname': NODE,
      'local-storage-cr-name': 'foobar',
    });
    expect(pv.metadata?.ownerReferences).toMatchObject([
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata!.uid! },
    ]);
    expect(pv.spec).toMatchObject({
      local: { path: `${HOST_DIR}/mount1` },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'sc1',
      volumeMode: 'Filesystem',
      persistentVolumeReclaimPolicy: 'Delete',
      mountOptions: ['ro'],
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
          ],
        },
      },
    });
    // kube-controller-manager makes a new PV Available shortly after it is created.
    await vi.waitFor(async () => expect((await e.read.volume(name1))?.status?.phase).toBe('Available'), WAIT);
    if (e.mounts.mountInfoPath === '/proc/self/mountinfo') {
      // tmpfs of 16 and 32 MiB: whole MiB from 10 MiB up.
      expect(pv.spec?.capacity?.storage).toBe('16Mi');
      expect(pvs.get(name2)!.spec?.capacity?.storage).toBe('32Mi');
    }
    await waitReady(instance);

    // Later passes create nothing more.
    const creates = (): number | undefined =>
      metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="create"}');
    let text = await e.metrics(instance);
    expect(creates()).toBe(2);
    expect(metricValue(text, 'local_volume_provisioner_persistentvolume_discovery_total{mode="Filesystem"}')).toBe(2);
    await morePasses(instance, 3);
    text = await e.metrics(instance);
    expect(creates()).toBe(2);

    // A disk mounted later is published on the next pass; the others are left as they are.
    e.mounts.mount(`${dir}/mount3`);
    const name3 = volumeName('mount3', NODE, 'sc1');
    const after = await waitVolumes(e, [name1, name2, name3]);
    expect(after.get(name1)!.metadata?.uid).toBe(pv.metadata?.uid);
  });

  it('publishes nothing for an empty discovery directory (ready), nor for a missing one (reported)', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    await waitReady(instance);
    expect(await localVolumes(e)).toEqual(new Map());
    const dir = e.onNode(NODE, HOST_DIR);
    rmSync(dir, { recursive: true });
    const reason = await waitReady(instance, /error reading directory/);
    expect(reason).toContain(`sc1: error reading directory ${dir}`);
    expect(await localVolumes(e)).toEqual(new Map());
    const text = await e.metrics(instance);
    expect(metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="create"}')).toBeUndefined();
    expect(metricValue(text, 'local_volume_provisioner_apiserver_requests_total{method="delete"}')).toBeUndefined();
  });

  it('creates no second PV for a path that a PV of this node under another name has already', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(NODE, HOST_DIR);
    e.mounts.mount(`${dir}/disk1`);
    e.mounts.mount(`${dir}/disk2`);
    const node = await e.core.readNode({ name: NODE });
    await e.core.createPersistentVolume({
      body: {
        metadata: {
          name: 'renamed',
          annotations: { 'pv.kubernetes.io/provisioned-by': `local-volume-provisioner-${NODE}-${node.metadata!.uid!}` },
        },
        spec: {
          capacity: { storage: '1Mi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: 'sc1',
          local: { path: `${HOST_DIR}/disk1` },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
              ],
            },
          },
        },
      },
    });
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    await waitVolumes(e, ['renamed', volumeName('disk2', NODE, 'sc1')]);
    await morePasses(instance, 3);
    expect([...(await localVolumes(e)).keys()].sort()).toEqual(['renamed', volumeName('disk2', NODE, 'sc1')].sort());
    expect(
      metricValue(await e.metrics(instance), 'local_volume_provisioner_apiserver_requests_total{method="create"}'),
    ).toBe(1);
  });

  it('reports plain files, unmounted directories and dangling links without publishing them (not ready); namePattern leaves them out', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(NODE, HOST_DIR);
    e.mounts.mount(`${dir}/disk1`);
    mkdirSync(`${dir}/notbindmount`, { recursive: true });
    writeFileSync(`${dir}/README`, 'a stray file\n');
    symlinkSync('/nonexistent/device', `${dir}/dangling`);
    const keys = { storageClassMap: { sc1: classEntry(e, NODE) } };
    const instance = await e.start(NODE, keys);
    await waitVolumes(e, [volumeName('disk1', NODE, 'sc1')]);
    const reason = await waitReady(instance, /notbindmount/);
    expect(reason).toContain(`path "${dir}/notbindmount" is not a valid mount point`);
    expect(reason).toContain(`Skipping file "${dir}/README": not a directory nor block device`);
    expect(reason).toContain(`"${dir}/dangling"`);

    instance.setConfig({
      config: configOf({ storageClassMap: { sc1: classEntry(e, NODE, { namePattern: 'disk*' }) } }),
      errors: [],
    });
    await waitReady(instance);
    expect([...(await localVolumes(e)).keys()]).toEqual([volumeName('disk1', NODE, 'sc1')]);
  });

  it('waits for the StorageClass: a class without one is an error until it exists', async () => {
    const e = await startEnv();
    e.mounts.mount(`${e.onNode(NODE, HOST_DIR)}/disk1`);
    const instance = await e.start(NODE, { storageClassMap: { late: classEntry(e, NODE) } });
    const reason = await waitReady(instance, /late/);
    expect(reason).toContain('failed to get ReclaimPolicy from storage class "late"');
    expect(await localVolumes(e)).toEqual(new Map());
    await e.storage.createStorageClass({ body: storageClass('late', { reclaimPolicy: 'Retain' }) });
    const pvs = await waitVolumes(e, [volumeName('disk1', NODE, 'late')]);
    expect([...pvs.values()][0]?.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    await waitReady(instance);
  });

  it('puts the node affinity in the alpha annotation too with useAlphaAPI, and adds the class selector terms', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    e.mounts.mount(`${e.onNode(NODE, HOST_DIR)}/disk1`);
    const selector = [{ matchExpressions: [{ key: 'shared-disk', operator: 'In', values: ['pool-a'] }] }];
    await e.start(NODE, {
      useAlphaAPI: true,
      storageClassMap: { sc1: classEntry(e, NODE, { selector, accessMode: 'ReadWriteMany', fsType: 'ext4' }) },
    });
    const [pv] = (await waitVolumes(e, [volumeName('disk1', NODE, 'sc1')])).values();
    // spec.nodeAffinity stays: API servers since 1.10 refuse a local PV without it.
    expect(pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
      ...selector,
    ]);
    expect(pv?.spec).toMatchObject({
      accessModes: ['ReadWriteMany'],
      local: { path: `${HOST_DIR}/disk1`, fsType: 'ext4' },
    });
    expect(JSON.parse(pv?.metadata?.annotations?.['volume.alpha.kubernetes.io/node-affinity'] ?? '{}')).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] },
          ...selector,
        ],
      },
    });
  });

  it('gives two nodes with the same directory layout distinct PV names, each pinned to its node', async () => {
    const e = await startEnv([{ name: 'node-a' }, { name: 'node-b' }]);
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    for (const node of ['node-a', 'node-b']) e.mounts.mount(`${e.onNode(node, HOST_DIR)}/disk1`);
    await e.start('node-a', { storageClassMap: { sc1: classEntry(e, 'node-a') } });
    await e.start('node-b', { storageClassMap: { sc1: classEntry(e, 'node-b') } });
    const a = volumeName('disk1', 'node-a', 'sc1');
    const b = volumeName('disk1', 'node-b', 'sc1');
    expect(a).not.toBe(b);
    const pvs = await waitVolumes(e, [a, b]);
    for (const [name, node] of [
      [a, 'node-a'],
      [b, 'node-b'],
    ] as const) {
      expect(pvs.get(name)?.spec?.local?.path).toBe(`${HOST_DIR}/disk1`);
      expect(pvs.get(name)?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([
        node,
      ]);
    }
  });

  it('publishes a disk only while it is mounted: unmounted it is reported, mounted again it is published', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
    mkdirSync(disk, { recursive: true });
    const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
    await waitReady(instance, /is not a valid mount point/);
    expect(await localVolumes(e)).toEqual(new Map());
    e.mounts.mount(disk);
    const name = volumeName('disk1', NODE, 'sc1');
    const first = (await waitVolumes(e, [name])).get(name)!;
    await waitReady(instance);
    // Unmounted while published: the PV stays (an admin decides), nothing else is created.
    e.mounts.unmount(disk);
    await morePasses(instance);
    expect((await e.read.volume(name))?.metadata?.uid).toBe(first.metadata?.uid);
    e.mounts.mount(disk);
    await morePasses(instance);
    expect([...(await localVolumes(e)).keys()]).toEqual([name]);
    await waitReady(instance);
  });
});

describeTiers('discovery of block devices', () => {
  it.skipIf(!CAN_LOOP)(
    `publishes block devices and symlinks to them with their size; refuses a directory in a Block class (${NO_LOOP_REASON ?? 'loop devices available'})`,
    async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('fast', { mountOptions: ['ro'] }) });
      await e.storage.createStorageClass({ body: storageClass('raw') });
      const fsDir = e.onNode(NODE, '/mnt/fs');
      const blockDir = e.onNode(NODE, '/mnt/block');
      mkdirSync(fsDir, { recursive: true });
      mkdirSync(blockDir, { recursive: true });
      // A block device in a Filesystem class (the kubelet formats it with fsType), and two in a Block class.
      symlinkSync(e.mounts.loopDevice(12), `${fsDir}/symlink2`);
      symlinkSync(e.mounts.loopDevice(8), `${blockDir}/symlink1`);
      symlinkSync(e.mounts.loopDevice(8), `${blockDir}/symlink2`);
      e.mounts.mount(`${blockDir}/mountdir`);
      const instance = await e.start(NODE, {
        storageClassMap: {
          fast: classEntry(e, NODE, { fsType: 'ext4' }, '/mnt/fs'),
          raw: classEntry(e, NODE, { volumeMode: 'Block' }, '/mnt/block'),
        },
      });
      const names = [
        volumeName('symlink2', NODE, 'fast'),
        volumeName('symlink1', NODE, 'raw'),
        volumeName('symlink2', NODE, 'raw'),
      ];
      const pvs = await waitVolumes(e, names);
      expect(pvs.get(names[0]!)?.spec).toMatchObject({
        volumeMode: 'Filesystem',
        capacity: { storage: '12Mi' },
        local: { path: '/mnt/fs/symlink2', fsType: 'ext4' },
        mountOptions: ['ro'],
      });
      expect(pvs.get(names[1]!)?.spec).toMatchObject({
        volumeMode: 'Block',
        capacity: { storage: '8Mi' },
        local: { path: '/mnt/block/symlink1' },
      });
      expect(pvs.get(names[1]!)?.spec?.mountOptions).toBeUndefined();
      const reason = await waitReady(instance, /mountdir/);
      expect(reason).toContain(`path "${blockDir}/mountdir" of filesystem mode cannot be used to create block volume`);
      const text = await e.metrics(instance);
      expect(metricValue(text, 'local_volume_provisioner_persistentvolume_discovery_total{mode="Block"}')).toBe(2);
      await vi.waitFor(() => expect(instance.provisioner.readyError()).toContain('mountdir'), WAIT);
    },
  );
});
