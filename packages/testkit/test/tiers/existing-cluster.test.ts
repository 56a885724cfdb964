/**
 * KPROV_USE_EXISTING_CLUSTER=true: a describeTiers suite in a child vitest runs its real tier on the cluster of
 * KUBECONFIG (here a control plane this test starts, with objects of its "user" in it) instead of starting one, and
 * deletes only what its tests made. KUBEBUILDER_ASSETS is unset in the child: it starts nothing of its own.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';
import { availableTiers } from '../../src/tiers/tiers.js';

const VITEST = path.join(path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const SUITE = path.join(import.meta.dirname, 'existing-cluster');

/** Runs the suite in a child vitest with `env` added; resolves with its exit code and output. */
function runSuite(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const { KUBEBUILDER_ASSETS: _, ...rest } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [VITEST, 'run', '--config', path.join(SUITE, 'vitest.config.ts')],
      { cwd: SUITE, env: { ...rest, ...env, KPROV_TIERS: 'real', NO_COLOR: '1' }, timeout: 240_000 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code ?? 1), output: stdout + stderr }),
    );
  });
}

describe.skipIf(!availableTiers().includes('real'))('the real tier on an existing cluster', () => {
  let cp: ControlPlane;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kprov-existing-'));
    cp = await startControlPlane();
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    // The user's objects, of the kinds a test's reset deletes.
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'users-config' } } });
    await core.createNamespace({ body: { metadata: { name: 'users-ns' } } });
    await core.createNode({ body: { metadata: { name: 'users-node' } } });
    await cp.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({
      body: { metadata: { name: 'users-class' }, provisioner: 'example.com/users' },
    });
  }, 120_000);
  afterAll(async () => {
    await cp?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the suite on it, and leaves what was there', async () => {
    const kubeconfig = await cp.writeKubeconfig(path.join(dir, 'kubeconfig'));
    const run = await runSuite({ KPROV_USE_EXISTING_CLUSTER: 'true', KUBECONFIG: kubeconfig, EXPECTED_URL: cp.url });
    expect(run.output).toMatch(/Tests\s+3 passed \(3\)/);
    expect(run.code).toBe(0);
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    expect((await core.readNamespacedConfigMap({ namespace: 'default', name: 'users-config' })).data).toEqual({
      touched: 'yes',
    });
    expect((await core.readNamespace({ name: 'users-ns' })).metadata?.name).toBe('users-ns');
    expect((await core.readNode({ name: 'users-node' })).metadata?.name).toBe('users-node');
    const classes = (await cp.kubeConfig.makeApiClient(StorageV1Api).listStorageClass()).items;
    expect(classes.map((c) => c.metadata?.name)).toEqual(['users-class']);
  }, 300_000);

  it('takes envtest USE_EXISTING_CLUSTER=true too, and says when the cluster does not answer', async () => {
    const kubeconfig = await cp.writeKubeconfig(path.join(dir, 'kubeconfig'));
    await cp.stopApiServer();
    try {
      const run = await runSuite({ USE_EXISTING_CLUSTER: 'true', KUBECONFIG: kubeconfig, EXPECTED_URL: cp.url });
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`the existing cluster admin (${cp.url}) does not answer`);
      expect(run.output).toMatch(/does not answer: .*check KUBECONFIG or unset KPROV_USE_EXISTING_CLUSTER/);
    } finally {
      await cp.startApiServer();
    }
  }, 300_000);
});
