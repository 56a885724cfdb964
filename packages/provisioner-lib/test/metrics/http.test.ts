import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { prometheusSink, renderRegistry } from '../../src/prometheus.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { startHttpEndpoint, type HttpEndpoint } from '../../src/metrics/http.js';

let endpoint: HttpEndpoint | undefined;

afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

async function get(path: string, init?: RequestInit): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(`${endpoint!.url}${path}`, init);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('startHttpEndpoint', () => {
  it('serves the metrics with prom-client content type', async () => {
    const registry = new Registry();
    createControllerMetrics(prometheusSink(registry)).deleteFailed({ class: 'c' });
    endpoint = await startHttpEndpoint({ port: 0, host: '127.0.0.1', renderMetrics: () => renderRegistry(registry) });
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toBe(registry.contentType);
    expect(res.body).toContain('controller_persistentvolume_delete_failed_total{class="c"} 1');
  });

  it('honours metricsPath and answers 404 elsewhere', async () => {
    endpoint = await startHttpEndpoint({
      port: 0,
      host: '127.0.0.1',
      metricsPath: '/custom',
      renderMetrics: async () => ({ contentType: 'text/plain', body: 'm 1\n' }),
    });
    expect((await get('/custom')).body).toBe('m 1\n');
    expect((await get('/metrics')).status).toBe(404);
    expect((await get('/custom', { method: 'POST' })).status).toBe(405);
  });

  it('lists health checks with ?verbose', async () => {
    endpoint = await startHttpEndpoint({
      port: 0,
      host: '127.0.0.1',
      healthChecks: { ping: () => undefined, informers: async () => undefined },
    });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok' });
    const verbose = await get('/healthz?verbose');
    expect(verbose.status).toBe(200);
    expect(verbose.body).toBe('[+]informers ok\n[+]ping ok\nhealthz check passed\n');
    expect(await get('/healthz/informers')).toMatchObject({ status: 200, body: 'ok' });
    expect((await get('/healthz/nope')).status).toBe(404);
  });

  it('answers 500 naming a failing ready check', async () => {
    endpoint = await startHttpEndpoint({
      port: 0,
      host: '127.0.0.1',
      readyChecks: { api: () => undefined, informers: () => Promise.reject(new Error('claims not synced')) },
    });
    const res = await get('/readyz');
    expect(res.status).toBe(500);
    expect(res.body).toBe('[+]api ok\n[-]informers failed: claims not synced\nreadyz check failed\n');
    expect(await get('/readyz?exclude=informers&verbose')).toMatchObject({
      status: 200,
      body: '[+]api ok\n[+]informers excluded: ok\nreadyz check passed\n',
    });
    expect(await get('/readyz/informers')).toMatchObject({
      status: 500,
      body: 'internal server error: claims not synced\n',
    });
    expect(await get('/healthz?verbose')).toMatchObject({ status: 200, body: '[+]ping ok\nhealthz check passed\n' });
  });

  it('reflects the leader check at /healthz/leader-election and in /healthz', async () => {
    let failure: Error | undefined;
    endpoint = await startHttpEndpoint({ port: 0, host: '127.0.0.1', leaderCheck: () => failure });
    expect(await get('/healthz/leader-election')).toMatchObject({ status: 200, body: 'ok' });
    failure = new Error('lease not renewed for 35s');
    expect(await get('/healthz/leader-election')).toMatchObject({
      status: 500,
      body: 'internal server error: lease not renewed for 35s\n',
    });
    expect(await get('/healthz')).toMatchObject({
      status: 500,
      body: '[-]leader-election failed: lease not renewed for 35s\nhealthz check failed\n',
    });
    failure = undefined;
    expect((await get('/healthz')).status).toBe(200);
  });

  it('answers 500 when rendering the metrics fails', async () => {
    endpoint = await startHttpEndpoint({
      port: 0,
      host: '127.0.0.1',
      renderMetrics: () => Promise.reject(new Error('collector broke')),
    });
    expect(await get('/metrics')).toMatchObject({ status: 500, body: 'internal server error: collector broke\n' });
  });

  it('listens on every address by default and reports a loopback URL', async () => {
    endpoint = await startHttpEndpoint({ port: 0 });
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await get('/healthz')).status).toBe(200);
  });
});
