/** prom-client's classes, loaded by path (the `prometheus` entry point and the runtime use them). */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Registry } from 'prom-client';
import { DEFAULT_METRIC_MODULES } from './default-metrics.js';
import { registerProcessCpu } from './process-cpu.js';

// prom-client's modules by path, the same modules its entry point exports: that entry point also loads its
// Pushgateway (node:http's client, zlib), its cluster aggregator (node:cluster, child_process, dgram) and its default
// metrics (OpenTelemetry's API, perf_hooks, v8), about 17 MiB of RSS a binary that uses none of them would carry.
const require = createRequire(import.meta.url);
type PromClasses = {
  Counter: typeof PromClient.Counter;
  Gauge: typeof PromClient.Gauge;
  Histogram: typeof PromClient.Histogram;
  Registry: typeof PromClient.Registry & { globalRegistry: Registry };
};
let classes: PromClasses | undefined;
function loaded(): PromClasses {
  classes ??= {
    Counter: require('prom-client/lib/counter') as PromClasses['Counter'],
    Gauge: require('prom-client/lib/gauge') as PromClasses['Gauge'],
    Histogram: require('prom-client/lib/histogram') as PromClasses['Histogram'],
    Registry: require('prom-client/lib/registry') as PromClasses['Registry'],
  };
  return classes;
}

/**
 * prom-client's `Counter`, `Gauge`, `Histogram` and `Registry` classes, its modules loaded on first use: loading
 * the runtime runs nothing of prom-client's before `runProvisioner` (see runtime/v8-flags.ts).
 */
export const promClient: Readonly<PromClasses> = {
  get Counter() {
    return loaded().Counter;
  },
  get Gauge() {
    return loaded().Gauge;
  },
  get Histogram() {
    return loaded().Histogram;
  },
  get Registry() {
    return loaded().Registry;
  },
};

/**
 * prom-client's default metrics (its `collectDefaultMetrics`: the process's CPU, memory, file descriptors, start
 * time, event loop lag, handles, heap spaces, GC and the Node.js version), each module loaded by path and given
 * `registry` and `config`, with the process CPU counters made here instead.
 *
 * prom-client's own CPU counters load OpenTelemetry's API, for trace exemplars these counters never have: 1.2 MiB of
 * the guide's provisioner's RSS when ready (plain `node`), 2–3 MiB in a probe of the metrics alone, 10 MiB without
 * the runtime's V8 flags, and 30 ms to load.
 */
export function collectDefaultMetrics(
  registry: Registry,
  config: { readonly eventLoopMonitoringPrecision: number },
): void {
  registerProcessCpu(registry, promClient.Counter);
  for (const id of DEFAULT_METRIC_MODULES) {
    const register = require(id) as (registry: Registry, config: object) => void;
    register(registry, config);
  }
}
