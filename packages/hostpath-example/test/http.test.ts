/** `--http-endpoint`: metrics and health served while the program runs. */
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, startKit } from './helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('--http-endpoint', () => {
  it('serves /metrics, /healthz, /readyz and /healthz/leader-election, and stops serving on exit', async () => {
    const { kubeconfig, root, stop } = await startKit();
    cleanups.push(stop);
    const program = runMain(
      [
        '--kubeconfig',
        kubeconfig,
        '--host-root',
        root,
        '--leader-election-namespace',
        'default',
        '--http-endpoint',
        '127.0.0.1:0',
      ],
      { NODE_NAME: 'node-1' },
    );
    cleanups.push(() => program.stop());
    const { endpoint } = await program.started;
    const url = endpoint!.url;

    const metrics = await get(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    for (const name of [
      'controller_persistentvolumeclaim_provision_total',
      'controller_persistentvolume_delete_total',
      'workqueue_depth',
      'leader_election_master_status',
      'process_cpu_user_seconds_total',
    ]) {
      expect(metrics.body, name).toContain(`# TYPE ${name}`);
    }
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${url}/readyz`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${url}/healthz/leader-election`)).toEqual({ status: 200, body: 'ok' });
    expect((await get(`${url}/readyz?verbose`)).body).toContain('[+]informers ok');

    expect(await program.stop()).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
