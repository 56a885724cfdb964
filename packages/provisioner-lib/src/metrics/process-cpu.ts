/** The process's CPU counters, as prom-client's default metrics name them. */
import type { Counter, Registry } from 'prom-client';

/**
 * Registers `process_cpu_user_seconds_total`, `process_cpu_system_seconds_total` and `process_cpu_seconds_total` in
 * `registry`: the CPU time (`process.cpuUsage()`) the process has used since they were registered, brought up to
 * date at each collection. prom-client's own (`lib/metrics/processCpuTotal.js`) are the same counters but for
 * OpenTelemetry's API, which they load for trace exemplars (see `collectDefaultMetrics`).
 */
export function registerProcessCpu(registry: Registry, CounterClass: typeof Counter): void {
  const registers = [registry];
  let last = process.cpuUsage();
  const system = new CounterClass({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers: [],
  });
  const total = new CounterClass({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers: [],
  });
  const user = new CounterClass({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // One collection brings the three up to date from one reading.
    collect() {
      const now = process.cpuUsage();
      const userSeconds = (now.user - last.user) / 1e6;
      const systemSeconds = (now.system - last.system) / 1e6;
      last = now;
      user.inc(userSeconds);
      system.inc(systemSeconds);
      total.inc(userSeconds + systemSeconds);
    },
  });
  registry.registerMetric(system);
  registry.registerMetric(total);
}
