/**
 * Node mode applies `userPattern`, `groupPattern` and `permPattern` itself when the built-in setup runs, as upstream's
 * setup script for them does with chown and chmod; a custom setup script gets them as `VOL_USER`, `VOL_GROUP`,
 * `VOL_PERM` instead. On both tiers.
 */
import { readFileSync, statSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it } from 'vitest';
import {
  BASE_PATH,
  claim,
  getVolume,
  storageClass,
  volumeTestPod,
  waitBound,
  waitSucceeded,
} from '../provisioner/helpers.js';
import { nodeEnv, type NodeEnv } from './env.js';

const PATTERNS = {
  userPattern: '{{ .PVC.Annotations.uid }}',
  groupPattern: '{{ .PVC.Annotations.gid }}',
  permPattern: '{{ .PVC.Annotations.perm }}',
};

/** Owner ids the test process can give away: any as root, else only its own. */
const asRoot = process.getuid?.() === 0;
const UID = asRoot ? 1000 : (process.getuid?.() ?? 0);
const GID = asRoot ? 2000 : (process.getgid?.() ?? 0);

async function provision(e: NodeEnv, annotations: Record<string, string>): Promise<string> {
  await e.storage.createStorageClass({ body: storageClass('local-path-perm-pattern', { parameters: PATTERNS }) });
  const pvc = claim('data', 'local-path-perm-pattern');
  pvc.metadata!.annotations = annotations;
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
  await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod('data', 'pod-data') });
  const pvName = await waitBound(e, 'data');
  return e.onNode('node-1', (await getVolume(e, pvName))!.spec!.hostPath!.path);
}

function ownerAndMode(dir: string): { mode: number; uid: number; gid: number } {
  const s = statSync(dir);
  return { mode: s.mode & 0o7777, uid: s.uid, gid: s.gid };
}

describeTiers('node mode: userPattern, groupPattern and permPattern', () => {
  it('chowns and chmods the new directory in-process with the rendered values', async () => {
    const e = await nodeEnv();
    const dir = await provision(e, { uid: `${UID}`, gid: `${GID}`, perm: '0750' });
    expect(ownerAndMode(dir)).toEqual({ mode: 0o750, uid: UID, gid: GID });
  });

  it('applies a symbolic mode to the 0777 directory, and leaves the owner as it is when the user renders empty', async () => {
    const e = await nodeEnv();
    const dir = await provision(e, { uid: '', gid: `${GID}`, perm: 'o=,g-w' });
    expect(ownerAndMode(dir)).toEqual({ mode: 0o750, uid: process.getuid?.() ?? 0, gid: GID });
  });

  it('resolves a user name in /etc/passwd below the host root', async () => {
    const e = await nodeEnv();
    const etc = e.onNode('node-1', '/etc');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(etc, { recursive: true });
    writeFileSync(`${etc}/passwd`, `root:x:0:0:root:/root:/bin/sh\nvolumes:x:${UID}:${GID}::/:/bin/false\n`);
    writeFileSync(`${etc}/group`, `root:x:0:\nvolumes:x:${GID}:\n`);
    const dir = await provision(e, { uid: 'volumes', gid: 'volumes', perm: 'u=rwx,g=rx,o=' });
    expect(ownerAndMode(dir)).toEqual({ mode: 0o750, uid: UID, gid: GID });
  });

  it('fails the claim, leaving no directory, for a user name the node does not know', async () => {
    const e = await nodeEnv();
    await e.storage.createStorageClass({ body: storageClass('local-path-perm-pattern', { parameters: PATTERNS }) });
    const pvc = claim('data', 'local-path-perm-pattern');
    pvc.metadata!.annotations = { uid: 'nosuchuser', gid: `${GID}`, perm: '0750' };
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
    await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod('data', 'pod-data') });
    const { provisioningFailure } = await import('../provisioner/helpers.js');
    const message = await provisioningFailure(e, 'data');
    expect(message).toContain('user "nosuchuser" is not in');
    expect(e.entries('node-1')).toEqual([]);
    expect(e.entries('node-1', BASE_PATH)).toEqual([]);
  });

  it('passes the rendered values to a custom setup script instead', async () => {
    const e = await nodeEnv({
      scripts: {
        setup: '#!/bin/sh\nset -eu\nmkdir -p "$VOL_DIR"\necho "$VOL_USER:$VOL_GROUP:$VOL_PERM" > "$VOL_DIR/owner"\n',
      },
    });
    const dir = await provision(e, { uid: `${UID}`, gid: `${GID}`, perm: '0750' });
    await waitSucceeded(e, 'pod-data');
    expect(readFileSync(`${dir}/owner`, 'utf8')).toBe(`${UID}:${GID}:0750\n`);
    // The script did not chmod: the directory keeps the script's mode.
    expect(ownerAndMode(dir).mode).not.toBe(0o750);
  });
});
