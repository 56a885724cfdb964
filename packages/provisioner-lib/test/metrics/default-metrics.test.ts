/**
 * The runtime's process metrics: prom-client's default metrics, its CPU counters made by the library (prom-client's
 * load OpenTelemetry's API; test/runtime/binary.test.ts checks that a binary does not).
 */
import { collectDefaultMetrics as promClientDefaults, Registry } from 'prom-client';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { collectDefaultMetrics } from '../../src/metrics/prom-client.js';

/** Each metric of `registry` as `<name> <type>`. */
async function namesAndTypes(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((m) => `${m.name} ${m.type}`).sort();
}

/** The value of the unlabelled metric `name` in `registry`'s text. */
function valueOf(text: string, name: string): number {
  const line = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (line === null) throw new Error(`${name} is not in\n${text}`);
  return Number(line[1]);
}

/**
 * Keeps the CPU busy until the process has used `ms` more of user CPU time and of system CPU time (system calls),
 * however busy the machine is.
 */
function spin(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  while (process.cpuUsage(start).user < ms * 1000) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + i);
  while (process.cpuUsage(start).system < ms * 1000) for (let i = 0; i < 100; i++) statSync(tmpdir());
}

describe('collectDefaultMetrics', () => {
  it("registers every metric prom-client's collectDefaultMetrics registers, with the same names and types", async () => {
    const ours = new Registry();
    collectDefaultMetrics(ours, { eventLoopMonitoringPrecision: 100 });
    const reference = new Registry();
    promClientDefaults({ register: reference });
    expect(await namesAndTypes(ours)).toEqual(await namesAndTypes(reference));
  });

  it("counts the process's user and system CPU seconds, and their sum in the total, from when it was called", async () => {
    const registry = new Registry();
    const before = process.cpuUsage();
    collectDefaultMetrics(registry, { eventLoopMonitoringPrecision: 100 });
    spin(100);
    const first = await registry.metrics();
    const used = process.cpuUsage(before);
    const user = valueOf(first, 'process_cpu_user_seconds_total');
    const system = valueOf(first, 'process_cpu_system_seconds_total');
    const total = valueOf(first, 'process_cpu_seconds_total');
    expect(user).toBeGreaterThanOrEqual(0.1);
    expect(system).toBeGreaterThanOrEqual(0.1);
    expect(user + system).toBeLessThanOrEqual((used.user + used.system) / 1e6);
    expect(total).toBeCloseTo(user + system, 6);
    spin(50);
    const second = await registry.metrics();
    expect(valueOf(second, 'process_cpu_user_seconds_total')).toBeGreaterThan(user);
    expect(valueOf(second, 'process_cpu_system_seconds_total')).toBeGreaterThan(system);
    expect(valueOf(second, 'process_cpu_seconds_total')).toBeCloseTo(
      valueOf(second, 'process_cpu_user_seconds_total') + valueOf(second, 'process_cpu_system_seconds_total'),
      6,
    );
  });
});
