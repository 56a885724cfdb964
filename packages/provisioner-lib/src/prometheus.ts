/**
 * prom-client support: `@kprov/provisioner-lib/prometheus`. prom-client is an optional peer dependency; only this
 * entry point imports it.
 */
import type { LabelValues, Metric, Registry } from 'prom-client';
import { promClient } from './metrics/prom-client.js';
import type { MetricsSink, MetricOptions, Labels } from './metrics/sink.js';
import type { RenderedMetrics } from './metrics/http.js';

type MetricClass<M> = abstract new (...args: never[]) => M;

function existing<M>(registry: Registry, name: string, kind: MetricClass<M>, kindName: string): M | undefined {
  const metric: Metric | undefined = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  if (metric instanceof kind) return metric;
  throw new Error(`metric ${name} is already registered, but not as a ${kindName}`);
}

function labels(l: Labels): LabelValues<string> {
  return l;
}

/**
 * A {@link MetricsSink} creating prom-client Counters, Gauges and Histograms in `registry`. When a metric of the
 * same name is already registered there (a second controller in the process, a test creating metrics twice) it
 * is reused instead of throwing; one of another kind is an error.
 *
 * @param registry - where the metrics are registered. Default prom-client's global `register`, as the Go library
 *   registers into the default Prometheus registry.
 */
export function prometheusSink(registry: Registry = promClient.Registry.globalRegistry): MetricsSink {
  const { Counter, Gauge, Histogram } = promClient;
  const common = (o: MetricOptions) => ({
    name: o.name,
    help: o.help,
    labelNames: [...o.labelNames],
    registers: [registry],
  });
  return {
    counter(options) {
      const c = existing(registry, options.name, Counter, 'counter') ?? new Counter(common(options));
      return { inc: (l, value = 1) => c.inc(labels(l), value) };
    },
    gauge(options) {
      const g = existing(registry, options.name, Gauge, 'gauge') ?? new Gauge(common(options));
      return {
        set: (l, value) => g.set(labels(l), value),
        inc: (l, value = 1) => g.inc(labels(l), value),
        dec: (l, value = 1) => g.dec(labels(l), value),
      };
    },
    histogram(options) {
      const h =
        existing(registry, options.name, Histogram, 'histogram') ??
        new Histogram({ ...common(options), buckets: [...options.buckets] });
      return { observe: (l, value) => h.observe(labels(l), value) };
    },
  };
}

/**
 * Renders `registry` in the Prometheus text format with its content type, as `startHttpEndpoint`'s
 * `renderMetrics` option takes it: `renderMetrics: () => renderRegistry(registry)`.
 *
 * @param registry - default prom-client's global `register`.
 */
export async function renderRegistry(
  registry: Registry = promClient.Registry.globalRegistry,
): Promise<RenderedMetrics> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
