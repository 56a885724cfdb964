/**
 * The pure pieces against the reference's unit vectors: PV names, capacity rounding and buckets, config loading and
 * defaults, name patterns, the mount table, the proctable, the cleanup Job, and the cleanup helpers' safety rules.
 */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildConfig, DEFAULT_CLEANUP_TIMEOUT_MS, emptyConfig } from '../src/config/config.js';
import { nameMatcher } from '../src/config/glob.js';
import { ConfigDirectory, parseConfigTexts } from '../src/config/source.js';
import { CleanupTimeoutError, removeContents, runCleanerCommand, withTimeout } from '../src/deleter/cleanup.js';
import { cleanupJob } from '../src/deleter/job.js';
import { ProcTable } from '../src/deleter/proctable.js';
import { capacityBucket, capacityQuantity, roundDownCapacity } from '../src/discovery/capacity.js';
import { parseMountInfo } from '../src/discovery/mounts.js';
import { pathMode } from '../src/discovery/probe.js';
import { buildVolume, provisionerName, volumeLabels, type VolumeSpec } from '../src/discovery/volume.js';
import { volumeName } from '../src/discovery/volume-name.js';
import { CAN_LOOP, CAN_MOUNT, Mounts } from './mounts.js';

const KiB = 1024n;
const MiB = 1024n * KiB;
const GiB = 1024n * MiB;
const TiB = 1024n * GiB;

const temps: string[] = [];
function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kprov-static-unit-'));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('PV names', () => {
  it('are the golden vectors of the reference (node test-node)', () => {
    const vectors: [string, string, string][] = [
      ['mount1', 'sc1', 'aaaafef5'],
      ['symlink2', 'sc1', '23645a36'],
      ['symlink1', 'sc2', '55d5adba'],
      ['symlink2', 'sc2', '226458a3'],
      ['mount2', 'sc1', '79412c38'],
      ['mount1', 'sc2', 'a7aafa3c'],
      ['mount3', 'sc1', 'f34b8003'],
      ['symlink3', 'sc1', '4d24d329'],
      ['mount2', 'sc2', '7c4130f1'],
    ];
    for (const [entry, cls, hex] of vectors) expect(volumeName(entry, 'test-node', cls)).toBe(`local-pv-${hex}`);
  });
});

describe('capacity', () => {
  it('rounds down as upstream does', () => {
    const table: [bigint, bigint][] = [
      [100n * KiB, 100n * KiB],
      [10n * MiB, 10n * MiB],
      [10n * GiB + 5n, 10n * GiB],
      [10n * MiB + 5n, 10n * MiB],
      [9n * GiB + 999n * MiB, 9n * GiB + 999n * MiB],
      [10000n * MiB - 1n, 9999n * MiB],
      [13n * GiB - 1n, 12n * GiB],
      [63n * MiB - 10n, 62n * MiB],
      [12345n, 12345n],
      [10000n * GiB - 1n, 9999n * GiB],
      [3n * TiB + 2n * GiB + 1n * MiB, 3n * TiB + 2n * GiB],
    ];
    for (const [bytes, want] of table) expect(roundDownCapacity(bytes)).toBe(want);
    expect(capacityQuantity(1024220n * KiB)).toBe('1000Mi');
    expect(capacityQuantity(100n * KiB)).toBe('100Ki');
    expect(capacityQuantity(12345n)).toBe('12345');
  });

  it('labels the delete duration by 500G buckets', () => {
    expect([0n, 1n, 500n * GiB, 500n * GiB + 1n, 1000n * GiB + 1n].map(capacityBucket)).toEqual([
      '0G',
      '500G',
      '500G',
      '1000G',
      '1500G',
    ]);
  });
});

describe('config', () => {
  const keys = (texts: Record<string, string>): Record<string, unknown> => parseConfigTexts(texts);

  it('is empty without keys, and reads YAML 1.1 booleans', () => {
    expect(buildConfig({})).toEqual({ config: emptyConfig(), errors: [], warnings: [] });
    const { config } = buildConfig(
      keys({ useAlphaAPI: 'true', useJobForCleaning: 'yes', setPVOwnerRef: 'no', other: 'ignored' }),
    );
    expect(config).toMatchObject({ useAlphaAPI: true, useJobForCleaning: true, setPVOwnerRef: false });
  });

  it("fills a class's defaults and reads every field", () => {
    const { config, errors } = buildConfig(
      keys({
        storageClassMap: [
          'local-storage:',
          '  hostDir: /mnt/disks',
          '  mountDir: /mnt/disks',
          'fast:',
          '  hostDir: /mnt/fast',
          '  mountDir: /discovery/fast',
          '  blockCleanerCommand: ["/scripts/shred.sh", "2"]',
          '  volumeMode: Block',
          '  fsType: ext4',
          '  namePattern: nvm*,sdb*',
          '  accessMode: ReadWriteMany',
          '  cleanupTimeout: 90m',
          '  selector:',
          '  - matchExpressions:',
          '    - key: shared',
          '      operator: In',
          '      values: [a]',
        ].join('\n'),
        minResyncPeriod: '1h30m',
        nodeLabelsForPV: '- node1\n- node2\n',
        labelsForPV: 'a: b\n',
      }),
    );
    expect(errors).toEqual([]);
    expect(config.minResyncPeriodMs).toBe(90 * 60_000);
    expect(config.nodeLabelsForPV).toEqual(['node1', 'node2']);
    expect(config.labelsForPV).toEqual({ a: 'b' });
    expect(config.storageClassMap['local-storage']).toEqual({
      hostDir: '/mnt/disks',
      mountDir: '/mnt/disks',
      blockCleanerCommand: ['/scripts/quick_reset.sh'],
      volumeMode: 'Filesystem',
      namePattern: '*',
      selector: [],
      accessMode: 'ReadWriteOnce',
      cleanupTimeoutMs: DEFAULT_CLEANUP_TIMEOUT_MS,
    });
    expect(config.storageClassMap.fast).toEqual({
      hostDir: '/mnt/fast',
      mountDir: '/discovery/fast',
      blockCleanerCommand: ['/scripts/shred.sh', '2'],
      volumeMode: 'Block',
      fsType: 'ext4',
      namePattern: 'nvm*,sdb*',
      selector: [{ matchExpressions: [{ key: 'shared', operator: 'In', values: ['a'] }] }],
      accessMode: 'ReadWriteMany',
      cleanupTimeoutMs: 90 * 60_000,
    });
  });

  it("leaves out an invalid class with upstream's message and keeps the others", () => {
    const { config, errors } = buildConfig(
      keys({
        storageClassMap: [
          'good: {hostDir: /a, mountDir: /a}',
          'nomount: {hostDir: /b}',
          'mode: {hostDir: /c, mountDir: /c, volumeMode: Raw}',
          'empty: {hostDir: /d, mountDir: /d, blockCleanerCommand: []}',
          'glob: {hostDir: /e, mountDir: /e, namePattern: "disk["}',
        ].join('\n'),
        useAlphaAPI: '"maybe"',
      }),
    );
    expect(Object.keys(config.storageClassMap)).toEqual(['good']);
    expect(config.useAlphaAPI).toBe(false);
    expect(errors).toEqual([
      'useAlphaAPI: must be true or false, not "maybe"',
      'Storage Class nomount is misconfigured, missing HostDir or MountDir parameter',
      'unsupported volume mode Raw',
      'Invalid empty block cleaner command for class empty',
      'Storage Class glob: invalid namePattern: syntax error in pattern "disk["',
    ]);
  });

  it('keeps the last good config when the directory holds one that does not parse, and a class its last valid settings', async () => {
    const dir = temp();
    writeFileSync(path.join(dir, 'storageClassMap'), 'sc1: {hostDir: /a, mountDir: /a}\n');
    mkdirSync(path.join(dir, '..2024_01_01'));
    const source = new ConfigDirectory({ dir, periodMs: 1000, clock: new FakeClock() });
    expect((await source.load()).config.storageClassMap.sc1?.hostDir).toBe('/a');
    writeFileSync(path.join(dir, 'storageClassMap'), 'sc1: [oops\n');
    await source.reload();
    expect(source.current().config.storageClassMap.sc1?.hostDir).toBe('/a');
    expect(source.current().errors[0]).toMatch(
      /^key storageClassMap is not valid YAML: .*; keeping the last valid configuration$/,
    );
    writeFileSync(path.join(dir, 'storageClassMap'), 'sc1: {hostDir: /a}\nsc2: {hostDir: /b, mountDir: /b}\n');
    await source.reload();
    expect(Object.keys(source.current().config.storageClassMap).sort()).toEqual(['sc1', 'sc2']);
    expect(source.current().errors).toEqual([
      'Storage Class sc1 is misconfigured, missing HostDir or MountDir parameter',
    ]);
    writeFileSync(path.join(dir, 'storageClassMap'), 'sc2: {hostDir: /b, mountDir: /b}\n');
    await source.reload();
    expect(source.current()).toMatchObject({ errors: [], config: { storageClassMap: { sc2: { hostDir: '/b' } } } });
    expect(source.current().config.storageClassMap.sc1).toBeUndefined();
  });

  it('says the config is fine again once a directory that could not be read reads again, unchanged', async () => {
    const parent = temp();
    const dir = path.join(parent, 'config');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'storageClassMap'), 'sc1: {hostDir: /a, mountDir: /a}\n');
    const source = new ConfigDirectory({ dir, periodMs: 1000, clock: new FakeClock() });
    await source.load();
    renameSync(dir, path.join(parent, 'away'));
    await source.reload();
    expect(source.current().errors[0]).toMatch(
      /^cannot read the config directory .*; keeping the last valid configuration$/,
    );
    expect(source.current().config.storageClassMap.sc1?.hostDir).toBe('/a');
    renameSync(path.join(parent, 'away'), dir);
    await source.reload();
    expect(source.current()).toMatchObject({ errors: [], config: { storageClassMap: { sc1: { hostDir: '/a' } } } });
  });

  it("matches names with Go's filepath.Match globs", () => {
    const m = nameMatcher('nvm*,sdb?,disk[0-3],x\\*');
    expect(['nvme0n1', 'sdbc', 'disk2', 'x*'].map(m)).toEqual([true, true, true, true]);
    expect(['sda', 'sdb', 'disk4', 'xy', 'lost+found'].map(m)).toEqual([false, false, false, false, false]);
    expect(nameMatcher('[^l]*')('lost+found')).toBe(false);
  });
});

describe('PV object', () => {
  const base: VolumeSpec = {
    name: 'local-pv-1',
    hostPath: '/mnt/disks/dev1',
    className: 'sc2',
    capacity: '0',
    volumeMode: 'Block',
    accessMode: 'ReadWriteOnce',
    reclaimPolicy: 'Delete',
    mountOptions: [],
    labels: {},
    provisionerName: '',
    hostname: 'test-node',
    selector: [],
    useAlphaAPI: false,
  };

  it('has the Block defaults of the reference: one access mode, zero capacity, no labels, owner or mount options', () => {
    const pv = buildVolume(base);
    expect(pv.metadata).toEqual({ name: 'local-pv-1', annotations: { 'pv.kubernetes.io/provisioned-by': '' } });
    expect(pv.spec).toEqual({
      capacity: { storage: '0' },
      local: { path: '/mnt/disks/dev1' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'sc2',
      volumeMode: 'Block',
      persistentVolumeReclaimPolicy: 'Delete',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['test-node'] }] },
          ],
        },
      },
    });
  });

  it('carries the alpha affinity annotation and the Node as owner when asked', () => {
    const node = { metadata: { name: 'test-node', uid: 'd9607e19-f88f-11e6-a518-42010a800195' } };
    const pv = buildVolume({ ...base, useAlphaAPI: true, owner: node });
    expect(JSON.parse(pv.metadata?.annotations?.['volume.alpha.kubernetes.io/node-affinity'] ?? '')).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: pv.spec?.nodeAffinity?.required?.nodeSelectorTerms,
      },
    });
    expect(pv.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'test-node', uid: 'd9607e19-f88f-11e6-a518-42010a800195' },
    ]);
    expect(provisionerName('test-node', node.metadata.uid, false)).toBe(
      'local-volume-provisioner-test-node-d9607e19-f88f-11e6-a518-42010a800195',
    );
    expect(provisionerName('test-node', node.metadata.uid, true)).toBe('local-volume-provisioner-test-node');
  });

  it("takes the Node's labels listed in nodeLabelsForPV that it has, then labelsForPV", () => {
    const node = { metadata: { labels: { zone: 'z', region: 'r', hostname: 'h', other: 'o' } } };
    expect(
      volumeLabels(node, ['zone', 'region', 'hostname', 'missing'], { 'local-storage-cr-name': 'foobar' }),
    ).toEqual({ zone: 'z', region: 'r', hostname: 'h', 'local-storage-cr-name': 'foobar' });
  });
});

describe('volume mode of a path', () => {
  it('is Filesystem for a directory, an error naming the path otherwise', async () => {
    const dir = temp();
    writeFileSync(path.join(dir, 'file'), 'x');
    await expect(pathMode(dir)).resolves.toBe('Filesystem');
    await expect(pathMode(path.join(dir, 'missing'))).rejects.toThrow(
      `Directory check for "${path.join(dir, 'missing')}" failed`,
    );
    await expect(pathMode(path.join(dir, 'file'))).rejects.toThrow('not a directory nor block device');
  });

  it.skipIf(!CAN_LOOP)('is Block for a block device and a link to one (needs loop devices)', async () => {
    const mounts = new Mounts();
    try {
      const device = mounts.loopDevice(1);
      const link = path.join(temp(), 'link');
      symlinkSync(device, link);
      await expect(pathMode(device)).resolves.toBe('Block');
      await expect(pathMode(link)).resolves.toBe('Block');
    } finally {
      mounts.cleanup();
    }
  });
});

describe('mount table', () => {
  it('reads the mount points of mountinfo, unescaping spaces', () => {
    const text =
      '36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw\n40 36 0:50 / /mnt/disks/with\\040space rw - tmpfs tmpfs rw\n';
    expect([...parseMountInfo(text)]).toEqual(['/mnt/parent', '/mnt/disks/with space']);
  });
});

describe('proctable', () => {
  it('counts running, succeeded and failed cleanups; a running one cannot be removed or started twice', () => {
    const table = new ProcTable();
    for (const pv of ['pv1', 'pv2', 'pv3', 'pv4', 'pv5']) table.markRunning(pv, 0);
    table.markDone('pv1', true);
    table.markDone('pv2', true);
    table.markDone('pv3', false, 'boom');
    expect(table.stats()).toEqual({ running: 2, succeeded: 2, failed: 1 });
    expect(() => table.markRunning('pv4', 1)).toThrow('already tracked');
    expect(() => table.remove('pv4')).toThrow('still running');
    expect(table.remove('pv3')).toEqual({ startMs: 0, state: 'Failed', error: 'boom' });
    expect(table.remove('pv3')).toBeUndefined();
  });
});

describe('cleanup Job', () => {
  it("is shaped as upstream's", () => {
    const job = cleanupJob({
      pv: { metadata: { name: 'pv4', uid: 'uid-4' } },
      nodeName: 'test-node',
      namespace: 'kubesystem',
      image: 'img',
      command: ['/scripts/quick_reset.sh'],
      containerPath: '/discoveryPath/test1/entry-pv4',
      hostDir: '/mnt/disks',
      mountDir: '/discoveryPath',
      tolerations: [{ key: 'k', operator: 'Exists' }],
      now: new Date('2024-01-02T03:04:05Z'),
    });
    expect(job.metadata).toEqual({
      name: 'cleanup-pv4',
      namespace: 'kubesystem',
      labels: { 'kubernetes.io/hostname': 'test-node', pv: 'pv4', pvuuid: 'uid-4' },
      annotations: { device: '/discoveryPath/test1/entry-pv4', 'start-time': '2024-01-02T03:04:05.000Z' },
    });
    const pod = job.spec?.template.spec;
    expect(pod?.containers[0]).toMatchObject({
      name: 'cleaner',
      image: 'img',
      command: ['/scripts/quick_reset.sh'],
      env: [{ name: 'LOCAL_PV_BLKDEVICE', value: '/discoveryPath/test1/entry-pv4' }],
    });
    expect(pod).toMatchObject({
      restartPolicy: 'OnFailure',
      nodeSelector: { 'kubernetes.io/hostname': 'test-node' },
      tolerations: [{ key: 'k', operator: 'Exists' }],
    });
    expect(pod?.volumes?.[0]?.name).toMatch(/^mount-[0-9a-f]+$/);
  });
});

describe('cleanup helpers', () => {
  it('empty a directory, removing links without following them', async () => {
    const dir = temp();
    const vol = path.join(dir, 'vol');
    const outside = path.join(dir, 'outside');
    mkdirSync(path.join(vol, 'a', 'b'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'keep'), 'x');
    writeFileSync(path.join(vol, 'a', 'b', 'f'), 'x');
    symlinkSync(outside, path.join(vol, 'a', 'link'));
    symlinkSync(path.join(outside, 'keep'), path.join(vol, 'file-link'));
    await removeContents(vol, new AbortController().signal);
    expect(readdirSync(vol)).toEqual([]);
    expect(readFileSync(path.join(outside, 'keep'), 'utf8')).toBe('x');
  });

  it('refuse a volume path that is a link, or reached through one', async () => {
    const dir = temp();
    mkdirSync(path.join(dir, 'real'));
    writeFileSync(path.join(dir, 'real', 'keep'), 'x');
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    await expect(removeContents(path.join(dir, 'link'), new AbortController().signal)).rejects.toThrow(
      'is not a directory',
    );
    symlinkSync(dir, path.join(dir, 'up'));
    await expect(removeContents(path.join(dir, 'up', 'real'), new AbortController().signal)).rejects.toThrow(
      'is reached through a symbolic link',
    );
    expect(readdirSync(path.join(dir, 'real'))).toEqual(['keep']);
  });

  it.skipIf(!CAN_MOUNT)('leave a filesystem mounted inside the volume as it is (needs mounts)', async () => {
    const dir = temp();
    const mounts = new Mounts();
    try {
      const vol = path.join(dir, 'vol');
      mounts.mount(vol);
      mounts.mount(path.join(vol, 'inner'));
      writeFileSync(path.join(vol, 'inner', 'other-fs'), 'x');
      writeFileSync(path.join(vol, 'mine'), 'x');
      await expect(removeContents(vol, new AbortController().signal)).rejects.toThrow(
        'is another filesystem mounted inside the volume',
      );
      expect(readdirSync(vol)).toEqual(['inner']);
      expect(readdirSync(path.join(vol, 'inner'))).toEqual(['other-fs']);
    } finally {
      mounts.cleanup();
    }
  });

  it.skipIf(!CAN_MOUNT)(
    'leave whole an entry with a mount anywhere below it, a bind mount of the same filesystem too (needs mounts)',
    async () => {
      const dir = temp();
      const mounts = new Mounts();
      try {
        // One filesystem holds the volume and a folder outside it; that folder is bind-mounted deep inside the volume.
        const fs = path.join(dir, 'fs');
        mounts.mount(fs);
        const vol = path.join(fs, 'vol');
        const outside = path.join(fs, 'outside');
        mkdirSync(path.join(vol, 'a', 'b'), { recursive: true });
        mkdirSync(path.join(vol, 'c', 'd'), { recursive: true });
        mkdirSync(outside);
        writeFileSync(path.join(outside, 'precious'), 'x');
        writeFileSync(path.join(vol, 'a', 'mine'), 'x');
        writeFileSync(path.join(vol, 'c', 'd', 'mine'), 'x');
        mounts.bind(outside, path.join(vol, 'a', 'b', 'bound'));
        mounts.mount(path.join(vol, 'c', 'd', 'inner'), 1);
        writeFileSync(path.join(vol, 'c', 'd', 'inner', 'other-fs'), 'x');
        writeFileSync(path.join(vol, 'mine'), 'x');
        const failure = removeContents(vol, new AbortController().signal);
        await expect(failure).rejects.toThrow(
          `"${vol}/a/b/bound" is another filesystem mounted inside the volume; it is left as it is`,
        );
        await expect(failure).rejects.toThrow(`"${vol}/c/d/inner" is another filesystem mounted inside the volume`);
        expect(readdirSync(vol).sort()).toEqual(['a', 'c']);
        expect(readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('x');
        expect(readdirSync(path.join(vol, 'c', 'd', 'inner'))).toEqual(['other-fs']);
        // Once unmounted, everything goes.
        mounts.unmount(path.join(vol, 'a', 'b', 'bound'));
        mounts.unmount(path.join(vol, 'c', 'd', 'inner'));
        await removeContents(vol, new AbortController().signal);
        expect(readdirSync(vol)).toEqual([]);
        expect(readdirSync(outside)).toEqual(['precious']);
      } finally {
        mounts.cleanup();
      }
    },
  );

  it('empty a directory with more entries than one command line holds', async () => {
    const vol = path.join(temp(), 'vol');
    mkdirSync(vol);
    const long = 'x'.repeat(200);
    for (let i = 0; i < 3000; i++) writeFileSync(path.join(vol, `${long}-${i}`), '');
    await removeContents(vol, new AbortController().signal);
    expect(readdirSync(vol)).toEqual([]);
  });

  it('follow no directory swapped for a link to elsewhere while the volume is emptied', async () => {
    const dir = temp();
    const vol = path.join(dir, 'vol');
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(outside, `f${i}`), 'outside\n');
    const DIRS = 300;
    for (let i = 0; i < DIRS; i++) {
      mkdirSync(path.join(vol, `d${i}`, 'sub'), { recursive: true });
      for (let j = 0; j < 5; j++) writeFileSync(path.join(vol, `d${i}`, 'sub', `f${j}`), 'x');
    }
    // Between the cleanup's steps, one d<i>/sub after the other is swapped for a link to the outside folder, or back.
    let swapped = 0;
    let cleaning = true;
    let next = 0;
    const swap = (): void => {
      const sub = path.join(vol, `d${next % DIRS}`, 'sub');
      const moved = path.join(vol, `d${next % DIRS}`, 'moved');
      next++;
      try {
        if (lstatSync(sub).isDirectory()) {
          renameSync(sub, moved);
          symlinkSync(outside, sub);
          swapped++;
        } else {
          unlinkSync(sub);
          renameSync(moved, sub);
        }
      } catch {
        // Removed meanwhile.
      }
      if (cleaning) setImmediate(swap);
    };
    setImmediate(swap);
    // Whether the cleanup finishes or trips over a link made after it had passed is the race's; the outside is not.
    await removeContents(vol, new AbortController().signal).catch(() => undefined);
    cleaning = false;
    expect(swapped).toBeGreaterThan(0);
    expect(readdirSync(outside)).toHaveLength(20);
    for (let i = 0; i < 20; i++) expect(readFileSync(path.join(outside, `f${i}`), 'utf8')).toBe('outside\n');
  });

  it('stop a cleaner at the timeout of the injected clock, killing its process group', async () => {
    const dir = temp();
    const clock = new FakeClock();
    const pidFile = path.join(dir, 'pid');
    const running = withTimeout(clock, 5_000, new AbortController().signal, 'cleanup of PV pv1', (signal) =>
      runCleanerCommand(['sh', '-c', `sleep 600 & echo $! > ${pidFile}; wait`], { env: process.env, signal }),
    );
    await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8')).toMatch(/^\d+\n$/), { timeout: 5_000, interval: 20 });
    clock.advance(5_000);
    await expect(running).rejects.toThrow(CleanupTimeoutError);
    await expect(running).rejects.toThrow('cleanup of PV pv1 timed out after 5s');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(), { timeout: 5_000, interval: 20 });
  });
});
