/**
 * Node mode runs custom `setup`/`teardown` scripts and `setupCommand`/`teardownCommand` as child processes, with the
 * arguments and environment a helper pod gives them and the directories below the host root; a failed or timed-out
 * setup leaves no directory and fails with a clear event; a failed teardown keeps the PV and is retried; the path and
 * teardown checks come before any script runs. On both tiers.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { PROVISIONED_ON_ANNOTATION } from '../../src/volume/annotations.js';
import {
  BASE_PATH,
  claim,
  defaultConfig,
  eventsFor,
  getVolume,
  PROVISIONER_NAME,
  provisioningFailure,
  SETUP_SCRIPT,
  storageClass,
  TEARDOWN_SCRIPT,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from '../provisioner/helpers.js';
import { nodeEnv, type NodeEnv } from './env.js';

/** A setup script that makes the directory and leaves its arguments and environment in it. */
const RECORDING_SETUP = `#!/bin/sh
set -eu
mkdir -p "$VOL_DIR"
echo "$0 $*" > "$VOL_DIR/args"
env > "$VOL_DIR/env"
`;

/** A teardown script that logs its call into the base path, then removes the directory. */
const LOGGING_TEARDOWN = `#!/bin/sh
set -eu
echo "teardown $*" >> "$VOL_BASE/teardown.log"
rm -rf "$VOL_DIR"
`;

async function claimAndPod(e: NodeEnv, name = 'data', className = 'local-path'): Promise<void> {
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name, className) });
  await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
}

async function deleteClaim(e: NodeEnv, name = 'data'): Promise<void> {
  await e.core.deleteNamespacedPod({ name: `pod-${name}`, namespace: 'default', gracePeriodSeconds: 0 });
  await e.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
}

function envFile(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

const dirOf = (pvName: string, name = 'data'): string => `${BASE_PATH}/${pvName}_default_${name}`;

/** An executable file in a temporary folder, removed after the test. */
function executable(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'node-mode-command-'));
  currentTier().defer(() => import('node:fs/promises').then((fs) => fs.rm(dir, { recursive: true, force: true })));
  const file = path.join(dir, 'command');
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

describeTiers('node mode: setup and teardown scripts as child processes', () => {
  it('runs a custom setup script with the arguments and environment of a helper pod, paths below the host root', async () => {
    const e = await nodeEnv({ scripts: { setup: RECORDING_SETUP, teardown: LOGGING_TEARDOWN } });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const pvName = await waitBound(e, 'data');
    await waitSucceeded(e, 'pod-data');
    const root = e.cluster.nodes[0]!.root;
    const dir = e.onNode('node-1', dirOf(pvName));
    const hostDir = path.join(root, dirOf(pvName));
    expect(readFileSync(`${dir}/args`, 'utf8')).toBe(
      `/script/setup -p ${hostDir} -s 134217728 -m Filesystem -a create\n`,
    );
    expect(envFile(`${dir}/env`)).toMatchObject({
      VOL_DIR: hostDir,
      VOL_BASE: path.join(root, BASE_PATH),
      VOL_MODE: 'Filesystem',
      VOL_SIZE_BYTES: '134217728',
      VOL_USER: '',
      VOL_GROUP: '',
      VOL_PERM: '',
      HOST_ROOT: root,
    });
    // The pod wrote into the directory the script made.
    expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
    expect(e.pending('node-1')).toEqual([]);

    await deleteClaim(e);
    await vi.waitFor(async () => expect(await getVolume(e, pvName)).toBeUndefined(), WAIT);
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(e.onNode('node-1', `${BASE_PATH}/teardown.log`), 'utf8')).toBe(
      `teardown -p ${hostDir} -s 134217728 -m Filesystem -a delete\n`,
    );
  });

  it('runs setupCommand and teardownCommand of config.json, which win over the scripts', async () => {
    const setup = executable(RECORDING_SETUP);
    const teardown = executable(LOGGING_TEARDOWN);
    const e = await nodeEnv({
      config: JSON.stringify({ ...defaultConfig(), setupCommand: setup, teardownCommand: teardown }),
      scripts: { setup: 'exit 1', teardown: 'exit 1' },
    });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const pvName = await waitBound(e, 'data');
    const dir = e.onNode('node-1', dirOf(pvName));
    expect(readFileSync(`${dir}/args`, 'utf8')).toMatch(/ -s 134217728 -m Filesystem -a create\n$/);
    await waitSucceeded(e, 'pod-data');
    await deleteClaim(e);
    await vi.waitFor(async () => expect(await getVolume(e, pvName)).toBeUndefined(), WAIT);
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(e.onNode('node-1', `${BASE_PATH}/teardown.log`), 'utf8')).toMatch(/-a delete\n$/);
  });

  it('keeps the built-in behaviour for the stock scripts of the manifest', async () => {
    const e = await nodeEnv({ scripts: { setup: SETUP_SCRIPT, teardown: TEARDOWN_SCRIPT } });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const pvName = await waitBound(e, 'data');
    await waitSucceeded(e, 'pod-data');
    expect(e.entries('node-1')).toEqual([`${pvName}_default_data`]);
  });

  it('a failed setup fails the claim with its exit and output, leaving no directory; fixed, the claim is provisioned', async () => {
    const e = await nodeEnv({
      scripts: { setup: '#!/bin/sh\nmkdir -p "$VOL_DIR"\necho "no space for $VOL_SIZE_BYTES bytes" >&2\nexit 3\n' },
    });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const message = await provisioningFailure(e, 'data');
    expect(message).toMatch(/^failed to create volume pvc-[0-9a-f-]+: the create command exited with code 3; /);
    expect(message).toContain('no space for 134217728 bytes');
    // The claim is retried every 200 ms: an attempt writes its pending record and its directory, and leaves neither
    // behind, so between two attempts the node holds nothing of them (on a slow machine one may be under way here).
    await vi.waitFor(() => {
      expect(e.entries('node-1')).toEqual([]);
      expect(e.pending('node-1')).toEqual([]);
    }, WAIT);
    expect(await e.read.volumes()).toEqual([]);

    e.scripts = {};
    const pvName = await waitBound(e, 'data');
    await waitSucceeded(e, 'pod-data');
    expect(e.entries('node-1')).toEqual([`${pvName}_default_data`]);
  });

  it('a setup running past cmdTimeoutSeconds is killed, its directory removed, and the claim fails', async () => {
    const e = await nodeEnv({
      config: JSON.stringify(defaultConfig(1)),
      scripts: { setup: '#!/bin/sh\nmkdir -p "$VOL_DIR"\nsleep 30\n' },
      retryMs: 60_000,
    });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const message = await provisioningFailure(e, 'data');
    expect(message).toMatch(/^failed to create volume pvc-[0-9a-f-]+: create process timeout after 1 seconds$/);
    expect(e.entries('node-1')).toEqual([]);
    expect(e.pending('node-1')).toEqual([]);
  });

  it('a failed teardown keeps the PV with a VolumeFailedDelete event and is retried until it succeeds', async () => {
    const e = await nodeEnv({ scripts: { teardown: '#!/bin/sh\necho "disk busy" >&2\nexit 4\n' } });
    await e.storage.createStorageClass({ body: storageClass() });
    await claimAndPod(e);
    const pvName = await waitBound(e, 'data');
    await waitSucceeded(e, 'pod-data');
    await deleteClaim(e);
    const message = await vi.waitFor(async () => {
      const [event] = await eventsFor(e, 'PersistentVolume', pvName, 'VolumeFailedDelete');
      if (event === undefined) throw new Error('no VolumeFailedDelete event yet');
      return event.message ?? '';
    }, WAIT);
    expect(message).toContain('the delete command exited with code 4');
    expect(message).toContain('disk busy');
    expect(await getVolume(e, pvName)).toBeDefined();
    expect(existsSync(e.onNode('node-1', dirOf(pvName)))).toBe(true);

    e.scripts = {};
    await vi.waitFor(async () => expect(await getVolume(e, pvName)).toBeUndefined(), WAIT);
    expect(e.entries('node-1')).toEqual([]);
  });

  it('runs no teardown script for a path the teardown checks refuse', async () => {
    const e = await nodeEnv({ scripts: { teardown: LOGGING_TEARDOWN } });
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createPersistentVolume({
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: {
          name: 'forged',
          annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME, [PROVISIONED_ON_ANNOTATION]: 'node-1' },
        },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: 'local-path',
          hostPath: { path: BASE_PATH, type: 'DirectoryOrCreate' },
          claimRef: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace: 'default',
            name: 'none',
            uid: randomUUID(),
          },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
              ],
            },
          },
        },
      },
    });
    await vi.waitFor(() => expect(e.warnings.map((w) => w.reason)).toContain('VolumeDeletionRefused'), WAIT);
    expect(existsSync(e.onNode('node-1', `${BASE_PATH}/teardown.log`))).toBe(false);
    expect(await getVolume(e, 'forged')).toBeDefined();
  });
});
