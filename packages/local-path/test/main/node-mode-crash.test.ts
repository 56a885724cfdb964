/**
 * Node mode after a crash: the binary is killed with SIGKILL after it made a volume directory but before the PV was
 * saved. The pending record it left on the node's disk leads the next process to remove the directory once the claim
 * is gone (with the teardown checks), or to finish the claim's provisioning when it is still there.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describeTiers } from '@kprov/testkit/vitest';
import { beforeAll, expect, it, vi } from 'vitest';
import { PENDING_DIR } from '../../src/executor/node/pending.js';
import { BASE_PATH, claim, getClaim, volumeTestPod, WAIT, waitBound } from '../provisioner/helpers.js';
import { ensureBuilt, spawnProvisioner, startGate, type Child } from './binary.js';
import { startKit, type Kit } from './harness.js';

function nodeModeArgs(k: Kit): string[] {
  return ['--node-mode', '--node-name', 'node-1', '--host-root', k.cluster.nodes[0]!.root];
}

/** Entries of node-1's base path, without the pending records' folder. */
function directories(k: Kit): string[] {
  const base = k.cluster.onNode('node-1', BASE_PATH);
  return existsSync(base) ? readdirSync(base).filter((n) => n !== PENDING_DIR) : [];
}

function pending(k: Kit): string[] {
  const dir = path.join(k.cluster.onNode('node-1', BASE_PATH), PENDING_DIR);
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function createClaim(k: Kit): Promise<void> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
}

/** Starts the binary in node mode with a gate holding the PV's save, and kills it there. */
async function crashBeforeSave(k: Kit): Promise<string> {
  const gate = await startGate(k);
  const child: Child = spawnProvisioner(gate.kubeconfig, nodeModeArgs(k));
  const saving = gate.hold((method, url) => method === 'POST' && url.startsWith('/api/v1/persistentvolumes'));
  await createClaim(k);
  await saving;
  child.process.kill('SIGKILL');
  await child.exited;
  const [dir] = directories(k);
  expect(dir).toMatch(/^pvc-[0-9a-f-]+_default_local-path-pvc$/);
  expect(pending(k)).toEqual([`${dir!.split('_')[0]!}.json`]);
  expect(await k.read.volumes()).toEqual([]);
  return dir!;
}

describeTiers('local-path-provisioner --node-mode killed with SIGKILL between mkdir and the PV save', () => {
  beforeAll(ensureBuilt, 120_000);

  it('the next process removes the orphaned directory once the claim is gone; the claim made again is provisioned', async () => {
    const k = await startKit();
    await crashBeforeSave(k);
    await k.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default', gracePeriodSeconds: 0 });
    await k.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
    await vi.waitFor(async () => expect(await getClaim(k, 'local-path-pvc')).toBeUndefined(), WAIT);

    const restarted = spawnProvisioner(k.kubeconfig, nodeModeArgs(k));
    await vi.waitFor(() => {
      expect(directories(k)).toEqual([]);
      expect(pending(k)).toEqual([]);
    }, WAIT);
    expect(restarted.messages().some((m) => m.startsWith('Deleting the directory of interrupted volume'))).toBe(true);
    expect(await k.read.volumes()).toEqual([]);

    await createClaim(k);
    const pvName = await waitBound(k);
    expect(directories(k)).toEqual([`${pvName}_default_local-path-pvc`]);
    await vi.waitFor(() => expect(pending(k)).toEqual([]), WAIT);
  });

  it('the next process finishes the provisioning of a claim still there, and drops the record', async () => {
    const k = await startKit();
    const dir = await crashBeforeSave(k);
    spawnProvisioner(k.kubeconfig, nodeModeArgs(k));
    const pvName = await waitBound(k);
    expect(directories(k)).toEqual([dir]);
    expect(dir.startsWith(`${pvName}_`)).toBe(true);
    await vi.waitFor(() => expect(pending(k)).toEqual([]), WAIT);
  });
});
