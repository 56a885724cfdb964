/**
 * startControlPlane against the real binaries of KUBEBUILDER_ASSETS: credentials that work and that RBAC judges,
 * a restart of kube-apiserver that keeps the data, compaction that expires old resourceVersions, and the errors for
 * a missing binary, a port in use and a binary that fails at start-up.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetsDir } from '../../src/control-plane/assets.js';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';

const real = assetsDir() !== undefined;

async function statusCode(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (e) {
    if (e instanceof ApiException) return e.code;
    throw e;
  }
  return 200;
}

describe('startControlPlane errors', () => {
  it('names the missing binary and the folder', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kprov-no-assets-'));
    try {
      await expect(startControlPlane({ binDir: dir })).rejects.toThrow(
        `etcd not found or not executable in ${dir}: the folder must hold etcd, kube-apiserver`,
      );
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('says how to give the folder when there is none', async () => {
    const saved = process.env.KUBEBUILDER_ASSETS;
    delete process.env.KUBEBUILDER_ASSETS;
    try {
      await expect(startControlPlane()).rejects.toThrow(/pass binDir or set KUBEBUILDER_ASSETS/);
    } finally {
      if (saved !== undefined) process.env.KUBEBUILDER_ASSETS = saved;
    }
  });

  it.skipIf(!real)('names the flag of a chosen port that is in use', async () => {
    const srv: Server = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    try {
      await expect(startControlPlane({ apiServerPort: port })).rejects.toThrow(
        `port ${port} on 127.0.0.1, chosen for kube-apiserver --secure-port, is not free`,
      );
    } finally {
      srv.close();
    }
  });

  it.skipIf(!real)('quotes the log of a binary that exits at start-up, and leaves nothing running', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'kprov-cp-fail-'));
    try {
      const err = await startControlPlane({
        dataDir,
        controllerManager: false,
        scheduler: false,
        extraArgs: { apiServer: ['--no-such-flag'] },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(
        /^kube-apiserver exited before it was ready \(exit code 1\); the end of its log/,
      );
      expect((err as Error).message).toContain('unknown flag: --no-such-flag');
      // A data folder given by the caller is kept, with the logs that explain the failure.
      expect(existsSync(path.join(dataDir, 'logs', 'kube-apiserver.log'))).toBe(true);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!real)('a running control plane', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ watchCache: false, scheduler: false });
  }, 120_000);
  afterAll(async () => {
    const dir = cp.dataDir;
    await cp.stop();
    expect(existsSync(dir)).toBe(false);
  });

  it('serves an administrator, and other users as RBAC allows', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    // kube-controller-manager is up: it made the default ServiceAccount and published the root CA.
    expect((await core.readNamespacedServiceAccount({ namespace: 'default', name: 'default' })).metadata?.name).toBe(
      'default',
    );
    const jane = (await cp.kubeConfigFor({ user: 'jane' })).makeApiClient(CoreV1Api);
    expect(await statusCode(jane.listNamespace())).toBe(403);
    const viewer = (await cp.kubeConfigFor({ user: 'v', groups: ['system:masters'] })).makeApiClient(CoreV1Api);
    expect(await statusCode(viewer.listNamespace())).toBe(200);
    // A service account's token from the TokenRequest API: authenticated, and as unprivileged as the account.
    const sa = (await cp.serviceAccountKubeConfig('default', 'default')).makeApiClient(CoreV1Api);
    expect(await statusCode(sa.listNamespace())).toBe(403);
  });

  it('keeps the data across a restart of kube-apiserver', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'kept' }, data: { a: '1' } },
    });
    await cp.stopApiServer();
    const down = await core.readNamespacedConfigMap({ namespace: 'default', name: 'kept' }).catch((e: unknown) => e);
    expect((down as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
    await cp.startApiServer();
    expect((await core.readNamespacedConfigMap({ namespace: 'default', name: 'kept' })).data).toEqual({ a: '1' });
  });

  it('expires compacted resourceVersions with 410 Gone', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    const old = (await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'old' } } }))
      .metadata?.resourceVersion;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'newer' } } });
    await cp.compact();
    expect(
      await statusCode(
        core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: old, resourceVersionMatch: 'Exact' }),
      ),
    ).toBe(410);
  });
});
