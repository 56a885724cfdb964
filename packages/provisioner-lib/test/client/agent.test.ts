import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import type { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { makeApiClient, sharedAgent, watchWithAgent, withSignal } from '../../src/client/agent.js';
import { startCountingProxy, type CountingProxy } from './tcp-proxy.js';

describe('shared agent against the testkit (plain HTTP)', () => {
  let kit: Testkit;
  let proxy: CountingProxy;
  let kc: KubeConfig;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    proxy = await startCountingProxy(kit.url);
    kc = kubeConfigFor(proxy.url);
  });

  afterEach(async () => {
    await proxy.close();
    await kit.stop();
  });

  // undici hands a back-to-back request to a second connection while the first is still being released, so
  // "reuse" means a small number that does not grow with the number of requests (at most twice the concurrency).

  it('sends many sequential requests over at most two connections', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    for (let i = 0; i < 20; i++) {
      const list = await core.listNamespace();
      expect(list.items.map((n) => n.metadata?.name)).toContain('default');
    }
    expect(proxy.connections).toBeGreaterThanOrEqual(1);
    expect(proxy.connections).toBeLessThanOrEqual(2);
  });

  it('keeps the connection count bounded by the concurrency, not the number of requests', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    for (let burst = 0; burst < 10; burst++) {
      await Promise.all(Array.from({ length: 8 }, () => core.listNamespace()));
    }
    expect(proxy.connections).toBeLessThanOrEqual(16);
  });

  it('shares one connection pool between clients made from the same KubeConfig', async () => {
    const a = makeApiClient(kc, CoreV1Api);
    const b = makeApiClient(kc, CoreV1Api);
    for (let i = 0; i < 5; i++) {
      await a.listNamespace();
      await b.readNamespace({ name: 'default' });
    }
    expect(proxy.connections).toBeLessThanOrEqual(2);
    expect(sharedAgent(kc)).toBe(sharedAgent(kc));
    expect(sharedAgent(kubeConfigFor(proxy.url))).not.toBe(sharedAgent(kc));
  });

  it('contrast: client-node 2.0.1 own client opens a connection per request', async () => {
    // Documents why makeApiClient exists; if client-node starts reusing connections this will tell us.
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 5; i++) await core.listNamespace();
    expect(proxy.connections).toBe(5);
  });

  it('authenticates as the KubeConfig says and keeps working after a server restart', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    await core.listNamespace();
    await kit.server.restart();
    await vi.waitFor(async () => {
      await core.listNamespace();
    }, WAIT);
    const created = await core.createNamespace({ body: { metadata: { name: 'after-restart' } } });
    expect(created.metadata?.name).toBe('after-restart');
  });

  it('runs watches through the shared agent too', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    const agent = sharedAgent(kc) as Agent;
    const seen: string[] = [];
    let doneErr: unknown = 'not done';
    const controller = await watchWithAgent(kc).watch(
      '/api/v1/namespaces',
      {},
      (type, obj: { metadata?: { name?: string } }) => seen.push(`${type} ${obj.metadata?.name ?? ''}`),
      (err) => {
        doneErr = err;
      },
    );
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(1), WAIT);
    // The only request so far is the watch: the shared agent holds its connection.
    expect(agent.stats[proxy.url]).toMatchObject({ connected: 1, running: 1 });
    for (let i = 0; i < 5; i++) await core.readNamespace({ name: 'default' });
    await core.createNamespace({ body: { metadata: { name: 'watched' } } });
    await vi.waitFor(() => expect(seen).toContain('ADDED watched'), WAIT);
    expect(proxy.connections).toBeLessThanOrEqual(3);
    controller.abort();
    await vi.waitFor(() => expect(doneErr).not.toBe('not done'), WAIT);
    await vi.waitFor(() => expect(kit.server.openWatches).toBe(0), WAIT);
  });

  it('aborts a request through withSignal', async () => {
    const core = makeApiClient(kc, CoreV1Api);
    kit.faults.add({ verb: 'list', resource: 'namespaces', action: { type: 'latency', ms: 10_000 } });
    const controller = new AbortController();
    const pending = core.listNamespace({}, withSignal(controller.signal));
    await vi.waitFor(() => expect(kit.server.requestCounts()['list namespaces']).toBe(1), WAIT);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('names the request and the reason when the server cannot be reached', async () => {
    const port = await closedPort();
    const core = makeApiClient(kubeConfigFor(`http://127.0.0.1:${port}`), CoreV1Api);
    const err = await core.readNamespace({ name: 'default' }).catch((e: unknown) => e);
    // fetch itself says `fetch failed`, the reason only in its cause.
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe(
      `GET http://127.0.0.1:${port}/api/v1/namespaces/default: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect((err as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('refuses plain HTTP without skipTLSVerify, as client-node does', () => {
    const insecure = new KubeConfig();
    insecure.loadFromOptions({
      clusters: [{ name: 'c', server: proxy.url }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    expect(() => sharedAgent(insecure)).toThrow(/skipTLSVerify/);
  });
});

/** A local port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasOpenssl())('shared agent over TLS', () => {
  let dir: string;
  let cert: Buffer;
  let otherCert: Buffer;
  let server: Server;
  let tlsConnections = 0;
  let url: string;

  function selfSigned(name: string): { cert: Buffer; key: Buffer } {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, `${name}.key`),
        '-out',
        join(dir, `${name}.crt`),
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, `${name}.crt`)), key: readFileSync(join(dir, `${name}.key`)) };
  }

  function kubeConfig(ca: Buffer): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'tls', server: url, caData: ca.toString('base64') }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'tls', cluster: 'tls', user: 'u' }],
      currentContext: 'tls',
    });
    return kc;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kprov-agent-tls-'));
    const pair = selfSigned('server');
    cert = pair.cert;
    otherCert = selfSigned('other').cert;
    server = createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      const body =
        req.headers.authorization === 'Bearer secret-token'
          ? {
              kind: 'NamespaceList',
              apiVersion: 'v1',
              metadata: { resourceVersion: '1' },
              items: [{ metadata: { name: 'default' } }],
            }
          : { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401 };
      const text = JSON.stringify(body);
      res.writeHead(body.kind === 'Status' ? 401 : 200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
    });
    server.on('secureConnection', () => {
      tlsConnections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the server with the KubeConfig CA and reuses one TLS connection', async () => {
    tlsConnections = 0;
    const core = makeApiClient(kubeConfig(cert), CoreV1Api);
    for (let i = 0; i < 10; i++) {
      const list = await core.listNamespace();
      expect(list.items[0]?.metadata?.name).toBe('default');
    }
    expect(tlsConnections).toBeGreaterThanOrEqual(1);
    expect(tlsConnections).toBeLessThanOrEqual(2);
  });

  it('rejects a server whose certificate the KubeConfig CA did not sign', async () => {
    const core = makeApiClient(kubeConfig(otherCert), CoreV1Api);
    await expect(core.listNamespace()).rejects.toThrow(
      /^GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces: .*certificate/,
    );
  });
});
