/**
 * `auto` capacities on both tiers: the size of a 64 MiB tmpfs mounted at a node path, measured by a helper pod
 * (default mode; the testkit's kubelet runs its `stat -f` on the node's disk) or in-process (node mode).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { measureFileSystem } from '../../src/executor/node/statfs.js';
import { claim, perTest, provisioningFailure, storageClass, waitBound } from '../provisioner/helpers.js';

const SIZE = 64 * 2 ** 20;

/** Mounts a 64 MiB tmpfs at `dir` (made if missing), unmounted after the test. */
function mountTmpfs(dir: string, defer: (cleanup: () => unknown) => void): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir]);
  defer(() => execFileSync('umount', [dir]));
}

function claimOnNode1(name: string, size: string) {
  const c = claim(name, 'local-path', { resources: { requests: { storage: size } } });
  c.metadata!.annotations = { 'volume.kubernetes.io/selected-node': 'node-1' };
  return c;
}

const { env, defer } = perTest();

describeTiers('auto capacity', () => {
  it("keeps claims within the size of the path's file system, measured by a helper pod", async () => {
    const e = await env({
      config: { nodePathMap: [{ node: 'node-1', paths: [{ path: '/data/auto', capacity: 'auto' }] }] },
      capacity: {},
    });
    mountTmpfs(e.onNode('node-1', '/data/auto'), defer);
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claimOnNode1('first', '40Mi') });
    await waitBound(e, 'first');
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claimOnNode1('second', '40Mi') });
    expect(await provisioningFailure(e, 'second')).toContain(
      'not enough space on node node-1 for claim default/second (requests 40Mi): /data/auto has 24Mi free (capacity 64Mi, 40Mi allocated to 1 volume)',
    );
    // One measuring pod ran, and is gone.
    const statfsPods = [...e.helperPods].filter((p) => p.startsWith('helper-pod-statfs-'));
    expect(statfsPods).toHaveLength(1);
    expect((await e.read.pods('local-path-storage')).map((p) => p.metadata?.name)).not.toContain(statfsPods[0]);
  });
});

describe('auto capacity in node mode', () => {
  it('measures in-process the file system holding a path, or its nearest existing parent', async () => {
    const root = execFileSync('mktemp', ['-d']).toString().trim();
    const dir = `${root}/data/auto`;
    mkdirSync(dir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir]);
    try {
      const made = await measureFileSystem(root, '/data/auto');
      expect(made.size).toBe(BigInt(SIZE));
      expect(made.free).toBe(BigInt(SIZE));
      expect((await measureFileSystem(root, '/data/auto/not/made/yet')).size).toBe(BigInt(SIZE));
    } finally {
      execFileSync('umount', [dir]);
      execFileSync('rm', ['-rf', root]);
    }
  });
});
