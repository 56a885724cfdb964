import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { prometheusSink, renderRegistry } from '../../src/prometheus.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createLeaderMetrics } from '../../src/metrics/leader-metrics.js';
import { noopMetrics } from '../../src/metrics/sink.js';

const HELP: Record<string, string> = {
  controller_persistentvolumeclaim_provision_total:
    'Total number of persistent volumes provisioned succesfully. Broken down by storage class name and source of the claim.',
  controller_persistentvolumeclaim_provision_failed_total:
    'Total number of persistent volume provision failed attempts. Broken down by storage class name and source of the claim.',
  controller_persistentvolumeclaim_provision_duration_seconds:
    'Latency in seconds to provision persistent volumes. Failed provisioning attempts are ignored. Broken down by storage class name and source of the claim.',
  controller_persistentvolume_delete_total:
    'Total number of persistent volumes deleted succesfully. Broken down by storage class name.',
  controller_persistentvolume_delete_failed_total:
    'Total number of persistent volume delete failed attempts. Broken down by storage class name.',
  controller_persistentvolume_delete_duration_seconds:
    'Latency in seconds to delete persistent volumes. Failed deletion attempts are ignored. Broken down by storage class name.',
};

const TYPES: Record<string, string> = {
  controller_persistentvolumeclaim_provision_total: 'counter',
  controller_persistentvolumeclaim_provision_failed_total: 'counter',
  controller_persistentvolumeclaim_provision_duration_seconds: 'histogram',
  controller_persistentvolume_delete_total: 'counter',
  controller_persistentvolume_delete_failed_total: 'counter',
  controller_persistentvolume_delete_duration_seconds: 'histogram',
};

const BUCKETS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

function exercise(registry: Registry): void {
  const m = createControllerMetrics(prometheusSink(registry));
  m.provisionSucceeded({ class: 'fast', source: '' }, 0.3);
  m.provisionSucceeded({ class: 'fast', source: 'VolumeSnapshot' }, 7);
  m.provisionFailed({ class: 'fast', source: '' });
  m.deleteSucceeded({ class: 'fast' }, 0.02);
  m.deleteFailed({ class: 'slow' });
}

describe('createControllerMetrics with prom-client', () => {
  it('renders the six Go metrics with their names, help, types, labels and buckets', async () => {
    const registry = new Registry();
    exercise(registry);
    const { contentType, body } = await renderRegistry(registry);
    expect(contentType).toBe(registry.contentType);

    const names = [...body.matchAll(/^# HELP (\S+) (.*)$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(names)).toEqual(HELP);
    for (const [name, type] of Object.entries(TYPES)) expect(body).toContain(`# TYPE ${name} ${type}\n`);

    expect(body).toContain('controller_persistentvolumeclaim_provision_total{class="fast",source=""} 1\n');
    expect(body).toContain(
      'controller_persistentvolumeclaim_provision_total{class="fast",source="VolumeSnapshot"} 1\n',
    );
    expect(body).toContain('controller_persistentvolumeclaim_provision_failed_total{class="fast",source=""} 1\n');
    expect(body).toContain('controller_persistentvolume_delete_total{class="fast"} 1\n');
    expect(body).toContain('controller_persistentvolume_delete_failed_total{class="slow"} 1\n');

    const provisionBuckets = [
      ...body.matchAll(
        /^controller_persistentvolumeclaim_provision_duration_seconds_bucket\{le="([^"]+)",class="fast",source=""\} (\d+)$/gm,
      ),
    ];
    expect(provisionBuckets.map((m) => m[1])).toEqual(BUCKETS);
    expect(provisionBuckets.map((m) => Number(m[2]))).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    const deleteBuckets = [
      ...body.matchAll(
        /^controller_persistentvolume_delete_duration_seconds_bucket\{le="([^"]+)",class="fast"\} \d+$/gm,
      ),
    ];
    expect(deleteBuckets.map((m) => m[1])).toEqual(BUCKETS);
    expect(body).toContain(
      'controller_persistentvolumeclaim_provision_duration_seconds_sum{class="fast",source="VolumeSnapshot"} 7\n',
    );
  });

  it('uses the subsystem as the name prefix', async () => {
    const registry = new Registry();
    createControllerMetrics(prometheusSink(registry), 'hostpath').provisionFailed({ class: 'c', source: '' });
    createControllerMetrics(prometheusSink(registry), '').deleteFailed({ class: 'c' });
    const { body } = await renderRegistry(registry);
    expect(body).toContain('hostpath_persistentvolumeclaim_provision_failed_total{class="c",source=""} 1\n');
    expect(body).toContain('\npersistentvolume_delete_failed_total{class="c"} 1\n');
  });

  it('reuses metrics already registered under the same name', async () => {
    const registry = new Registry();
    exercise(registry);
    exercise(registry);
    const { body } = await renderRegistry(registry);
    expect(body).toContain('controller_persistentvolume_delete_failed_total{class="slow"} 2\n');
    expect(body.match(/^# HELP controller_persistentvolume_delete_failed_total /gm)).toHaveLength(1);
  });

  it('refuses a metric of the same name but another kind', () => {
    const registry = new Registry();
    prometheusSink(registry).gauge({
      name: 'controller_persistentvolume_delete_total',
      help: 'x',
      labelNames: ['class'],
    });
    expect(() => createControllerMetrics(prometheusSink(registry))).toThrow(/already registered, but not as a counter/);
  });

  it('works with the default no-op sink', () => {
    const m = createControllerMetrics(noopMetrics);
    expect(() => m.provisionSucceeded({ class: '', source: '' }, 1)).not.toThrow();
  });
});

describe('createLeaderMetrics', () => {
  it('sets leader_election_master_status to 1 when leading and 0 otherwise', async () => {
    const registry = new Registry();
    const leader = createLeaderMetrics(prometheusSink(registry));
    leader.on('example.com-hostpath');
    leader.off('other');
    let { body } = await renderRegistry(registry);
    expect(body).toContain('# TYPE leader_election_master_status gauge\n');
    expect(body).toMatch(
      /^# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease/m,
    );
    expect(body).toContain('leader_election_master_status{name="example.com-hostpath"} 1\n');
    expect(body).toContain('leader_election_master_status{name="other"} 0\n');
    leader.set('example.com-hostpath', false);
    ({ body } = await renderRegistry(registry));
    expect(body).toContain('leader_election_master_status{name="example.com-hostpath"} 0\n');
  });
});
