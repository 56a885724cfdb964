/**
 * `--http-endpoint` through `main()`: `/metrics` in Prometheus text with the controller's metric names (counting a
 * provision and a delete), `/healthz`, `/readyz` and `/healthz/leader-election` as the library serves them; and
 * upstream's health server (`/health`, `/ready` on `--health-port`) alongside it.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, startKit, waitStarted } from './harness.js';

async function get(url: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

/** The value of the one sample of `name` whose labels include every `labels` pair. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const have = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) return Number(m[3]);
  }
  return undefined;
}

const CONTROLLER_METRICS = [
  ['controller_persistentvolumeclaim_provision_total', 'counter'],
  ['controller_persistentvolumeclaim_provision_failed_total', 'counter'],
  ['controller_persistentvolumeclaim_provision_duration_seconds', 'histogram'],
  ['controller_persistentvolume_delete_total', 'counter'],
  ['controller_persistentvolume_delete_failed_total', 'counter'],
  ['controller_persistentvolume_delete_duration_seconds', 'histogram'],
] as const;

describeTiers('--http-endpoint through main()', () => {
  it('serves the controller metrics, counting a provision and a delete, and the health checks; the upstream health server still answers', async () => {
    const k = await startKit();
    const program = runMain(k.kubeconfig, ['--http-endpoint', '127.0.0.1:0']);
    const { endpoint, health } = await waitStarted(program);
    expect(endpoint).toBeDefined();
    expect(health).toBeDefined();
    const url = endpoint!.url;

    const { pvName } = await provisionOne(k, 'pvc-1');
    const metrics = await vi.waitFor(async () => {
      const res = await get(`${url}/metrics`);
      expect(sample(res.body, 'controller_persistentvolumeclaim_provision_total', { class: 'local-path' })).toBe(1);
      return res;
    }, WAIT);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const [name, type] of CONTROLLER_METRICS) expect(metrics.body).toContain(`# TYPE ${name} ${type}\n`);
    expect(
      sample(metrics.body, 'controller_persistentvolumeclaim_provision_duration_seconds_count', {
        class: 'local-path',
      }),
    ).toBe(1);
    expect(sample(metrics.body, 'workqueue_adds_total', { name: 'claims' })).toBeGreaterThanOrEqual(1);
    expect(sample(metrics.body, 'leader_election_master_status', { name: 'rancher.io-local-path' })).toBe(1);
    // prom-client's process metrics are there too.
    expect(metrics.body).toContain('# TYPE process_cpu_user_seconds_total counter\n');

    await k.core.deleteNamespacedPod({ name: 'pod-pvc-1', namespace: 'default' });
    await k.core.deleteNamespacedPersistentVolumeClaim({ name: 'pvc-1', namespace: 'default' });
    await vi.waitFor(async () => {
      expect(await k.read.volume(pvName)).toBeUndefined();
      expect(
        sample((await get(`${url}/metrics`)).body, 'controller_persistentvolume_delete_total', { class: 'local-path' }),
      ).toBe(1);
    }, WAIT);

    expect(await get(`${url}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
    expect((await get(`${url}/healthz?verbose`)).body).toBe('[+]leader-election ok\nhealthz check passed\n');
    expect(await get(`${url}/healthz/leader-election`)).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(`${url}/readyz`)).toMatchObject({ status: 200, body: 'ok' });
    expect((await get(`${url}/readyz?verbose`)).body).toBe('[+]informers ok\nreadyz check passed\n');
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(405);

    expect(await get(`${health!.url}/health`)).toMatchObject({ status: 200, body: 'OK' });
    expect(await get(`${health!.url}/ready`)).toMatchObject({ status: 200, body: 'Ready' });

    program.stop();
    expect(await program.exited).toBe(0);
  });

  it('without leader election serves no leader-election check', async () => {
    const k = await startKit();
    const program = runMain(k.kubeconfig, ['--http-endpoint', '127.0.0.1:0', '--leader-election=false']);
    const { endpoint } = await waitStarted(program);
    const url = endpoint!.url;
    expect(await get(`${url}/healthz?verbose`)).toMatchObject({
      status: 200,
      body: '[+]ping ok\nhealthz check passed\n',
    });
    expect((await get(`${url}/healthz/leader-election`)).status).toBe(404);
    await vi.waitFor(async () => expect(await get(`${url}/readyz`)).toMatchObject({ status: 200, body: 'ok' }), WAIT);
  });
});
