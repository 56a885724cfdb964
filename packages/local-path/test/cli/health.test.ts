/** The upstream-compatible health server over real HTTP, with the testkit API server behind `/ready`. */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { startHealthServer, type HealthServer } from '../../src/cli/health.js';

interface Line {
  level: string;
  message: string;
}

function recordingLogger(lines: Line[]) {
  const log =
    (level: string) =>
    (_fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, message });
    };
  const logger = {
    error: log('error'),
    warn: log('warn'),
    info: log('info'),
    debug: log('debug'),
    child: () => logger,
  };
  return logger;
}

async function request(url: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { method });
  return { status: res.status, body: await res.text() };
}

describe('health server', () => {
  let kit: Testkit;
  let server: HealthServer;
  const lines: Line[] = [];

  beforeAll(async () => {
    kit = await startApiServer({ nodes: [], kubelet: false, scheduler: false, binder: false });
    const started = await startHealthServer({
      port: 0,
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      logger: recordingLogger(lines),
    });
    if (started === undefined) throw new Error('health server did not start');
    server = started;
  });

  afterAll(async () => {
    await server.close();
    await kit.stop();
  });

  it('logs that it started, on every address', () => {
    expect(lines).toContainEqual({ level: 'info', message: `Health server started on :${server.port}` });
  });

  it('answers /health with OK for GET, HEAD and OPTIONS, 405 otherwise', async () => {
    expect(await request(`${server.url}/health`)).toEqual({ status: 200, body: 'OK' });
    expect(await request(`${server.url}/health`, 'HEAD')).toEqual({ status: 200, body: '' });
    expect(await request(`${server.url}/health`, 'OPTIONS')).toEqual({ status: 200, body: 'OK' });
    expect(await request(`${server.url}/health`, 'POST')).toEqual({ status: 405, body: 'Method not allowed' });
  });

  it('answers /ready with Ready when every list call succeeds, whatever the method', async () => {
    expect(await request(`${server.url}/ready`)).toEqual({ status: 200, body: 'Ready' });
    expect(await request(`${server.url}/ready`, 'POST')).toEqual({ status: 200, body: 'Ready' });
  });

  const ORDER = ['configmaps', 'pods', 'persistentvolumeclaims', 'persistentvolumes', 'storageclasses'];
  for (const resource of ORDER) {
    it(`names ${resource} when its list call fails (503), after the checks before it passed`, async () => {
      const remove = kit.faults.add({ verb: 'list', resource, action: { type: 'error', code: 500 } });
      try {
        const res = await request(`${server.url}/ready`);
        expect(res.status).toBe(503);
        expect(res.body).toBe(`readiness check ${resource} failed: Internal error occurred: injected fault`);
        expect(lines).toContainEqual({ level: 'warn', message: res.body });
      } finally {
        remove();
      }
    });
  }

  it('reports the first failure only', async () => {
    const remove = kit.faults.add({
      verb: 'list',
      resource: ['pods', 'storageclasses'],
      action: { type: 'error', code: 503 },
    });
    try {
      expect((await request(`${server.url}/ready`)).body).toMatch(/^readiness check pods failed: /);
    } finally {
      remove();
    }
  });

  it('answers 404 elsewhere', async () => {
    expect(await request(`${server.url}/healthz`)).toEqual({ status: 404, body: '404 page not found\n' });
  });
});

describe('health server without an API server', () => {
  it('fails /ready at the first check but keeps /health OK', async () => {
    const kit = await startApiServer({ nodes: [], kubelet: false, scheduler: false, binder: false });
    const kubeConfig = kit.kubeConfig;
    await kit.stop();
    const server = await startHealthServer({ port: 0, kubeConfig, namespace: 'default' });
    try {
      const ready = await request(`${server!.url}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatch(/^readiness check configmaps failed: .*ECONNREFUSED/);
      expect(await request(`${server!.url}/health`)).toEqual({ status: 200, body: 'OK' });
    } finally {
      await server?.close();
    }
  });
});

describe('listen failures', () => {
  it('logs and carries on when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    const port = (blocker.address() as { port: number }).port;
    const lines: Line[] = [];
    try {
      const kit = await startApiServer({ nodes: [], kubelet: false, scheduler: false, binder: false });
      const server = await startHealthServer({
        port,
        kubeConfig: kit.kubeConfig,
        namespace: 'default',
        logger: recordingLogger(lines),
      });
      await kit.stop();
      expect(server).toBeUndefined();
      expect(lines).toEqual([
        { level: 'error', message: expect.stringMatching(/^Failed to start health server: .*EADDRINUSE/) as string },
      ]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('logs and carries on for an invalid port', async () => {
    const lines: Line[] = [];
    const kit = await startApiServer({ nodes: [], kubelet: false, scheduler: false, binder: false });
    const server = await startHealthServer({
      port: 70_000,
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      logger: recordingLogger(lines),
    });
    await kit.stop();
    expect(server).toBeUndefined();
    expect(lines[0]?.message).toMatch(/^Failed to start health server: /);
  });
});
