/**
 * Nothing is orphaned by a crash: the provisioner binary is killed with SIGKILL at each step of a provisioning (before
 * the helper pod exists, while the setup script runs, after it succeeded but before the PV was saved), the claim is
 * deleted, and a new process finds what was left through the helper pods' labels: the directory is torn down and
 * no helper pod remains. Upstream leaves the directory, and the Completed helper pod, for good.
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTiers } from '@kprov/testkit/vitest';
import { beforeAll, expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  getClaim,
  helperPodsNow,
  NAMESPACE,
  SETUP_SCRIPT,
  volumeTestPod,
  WAIT,
} from '../provisioner/helpers.js';
import { ensureBuilt, spawnProvisioner, startGate, type Child } from './binary.js';
import { serviceAccountKubeconfig, startKit, type Kit } from './harness.js';

/**
 * A setup script that, once the directory is made, runs until `release` exists, as a slow disk or a quota tool
 * would: the test ends it when the restarted process is seen waiting for it, however slow the machine.
 */
function slowSetup(release: string): string {
  return `${SETUP_SCRIPT}while [ ! -e '${release}' ]; do sleep 0.1; done\n`;
}

async function useSetup(k: Kit, setup: string): Promise<void> {
  const cm = await k.core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
  cm.data = { ...cm.data, setup };
  await k.core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
}

/** The claim and the pod that makes the scheduler pick node-1 for it. */
async function createClaim(k: Kit): Promise<void> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
}

async function deleteClaim(k: Kit): Promise<void> {
  await k.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default', gracePeriodSeconds: 0 });
  await k.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
  await vi.waitFor(async () => expect(await getClaim(k, 'local-path-pvc')).toBeUndefined(), WAIT);
}

/** Volume directories under node-1's base path. */
function directories(k: Kit): string[] {
  const base = `${k.cluster.nodes[0]!.root}${BASE_PATH}`;
  return existsSync(base) ? readdirSync(base) : [];
}

/**
 * Starts the provisioner again (no gate; on the real tier as the manifest's ServiceAccount, so the reconciler works
 * with the shipped RBAC) and waits until nothing is left: no directory, no helper pod.
 */
async function restartAndExpectClean(k: Kit, started?: (c: Child) => Promise<void>): Promise<Child> {
  const c = spawnProvisioner(k.cluster.controlPlane === undefined ? k.kubeconfig : await serviceAccountKubeconfig(k));
  await started?.(c);

  await vi.waitFor(async () => {
    expect(directories(k)).toEqual([]);
    expect((await helperPodsNow(k)).map((p) => p.metadata?.name)).toEqual([]);
  }, WAIT);
  expect(await k.read.volumes()).toEqual([]);
  return c;
}

describeTiers('a provisioner killed with SIGKILL mid-provision', () => {
  beforeAll(ensureBuilt, 120_000);

  it('before the helper pod exists: nothing is left', async () => {
    const k = await startKit();
    const gate = await startGate(k);
    const child = spawnProvisioner(gate.kubeconfig);
    const creating = gate.hold(
      (method, url) => method === 'POST' && url.startsWith(`/api/v1/namespaces/${NAMESPACE}/pods`),
    );
    await createClaim(k);
    await creating;
    child.process.kill('SIGKILL');
    await child.exited;
    expect(await helperPodsNow(k)).toEqual([]);
    await deleteClaim(k);
    await restartAndExpectClean(k);
  });

  it('while the setup script runs: the new process waits for it to end, then tears the directory down', async () => {
    const k = await startKit();
    const release = join(mkdtempSync(join(tmpdir(), 'kprov-crash-')), 'release');
    await useSetup(k, slowSetup(release));
    const child = spawnProvisioner(k.kubeconfig);
    await createClaim(k);
    await vi.waitFor(async () => {
      const [pod] = await helperPodsNow(k);
      expect(pod?.status?.phase).toBe('Running');
      expect(directories(k)).toHaveLength(1);
    }, WAIT);
    child.process.kill('SIGKILL');
    await child.exited;
    await deleteClaim(k);
    const [pod] = await helperPodsNow(k);
    expect(pod?.metadata?.labels).toMatchObject({ 'local.path.provisioner/operation': 'create' });
    const restarted = await restartAndExpectClean(k, async (c) => {
      await vi.waitFor(
        () => expect(c.messages()).toContain('Waiting for an interrupted setup to end before removing its directory'),
        WAIT,
      );
      writeFileSync(release, '');
    });
    const messages = restarted.messages();
    const waited = messages.indexOf('Waiting for an interrupted setup to end before removing its directory');
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(messages.findIndex((m) => m.startsWith('Deleting the directory of interrupted volume'))).toBeGreaterThan(
      waited,
    );
    expect(messages.filter((m) => m.startsWith('The interrupted setup did not end'))).toEqual([]);
  });

  it('after the setup succeeded but before the PV was saved: the kept setup pod leads to the teardown', async () => {
    const k = await startKit();
    const gate = await startGate(k);
    const child = spawnProvisioner(gate.kubeconfig);
    const saving = gate.hold((method, url) => method === 'POST' && url.startsWith('/api/v1/persistentvolumes'));
    await createClaim(k);
    await saving;
    child.process.kill('SIGKILL');
    await child.exited;
    expect(directories(k)).toHaveLength(1);
    const [pod] = await helperPodsNow(k);
    expect(pod?.status?.phase).toBe('Succeeded');
    await deleteClaim(k);
    await restartAndExpectClean(k);
  });

  it('after the PV was saved: the setup pod is deleted and the volume kept', async () => {
    const k = await startKit();
    const child = spawnProvisioner(k.kubeconfig);
    await createClaim(k);
    await vi.waitFor(async () => expect((await getClaim(k, 'local-path-pvc'))?.status?.phase).toBe('Bound'), WAIT);
    await vi.waitFor(async () => expect(await helperPodsNow(k)).toEqual([]), WAIT);
    child.process.kill('SIGKILL');
    await child.exited;
    expect(directories(k)).toHaveLength(1);
  });
});
