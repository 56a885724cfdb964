/**
 * Where the library reports metrics. The library declares its metrics (names, help, labels, buckets) and the sink
 * provides the instruments, so the host program picks the registry: see `@kprov/provisioner-lib/prometheus` for a
 * prom-client sink. The default sink discards everything.
 */
export type Labels = Readonly<Record<string, string>>;

export interface MetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds in seconds. */
  buckets: readonly number[];
}

export interface Counter {
  inc(labels: Labels, value?: number): void;
}

export interface Gauge {
  set(labels: Labels, value: number): void;
  inc(labels: Labels, value?: number): void;
  dec(labels: Labels, value?: number): void;
}

export interface Histogram {
  observe(labels: Labels, value: number): void;
}

export interface MetricsSink {
  counter(options: MetricOptions): Counter;
  gauge(options: MetricOptions): Gauge;
  histogram(options: HistogramOptions): Histogram;
}

const noopInstrument = { inc: () => undefined, dec: () => undefined, set: () => undefined, observe: () => undefined };

/** Discards every measurement. The default. */
export const noopMetrics: MetricsSink = {
  counter: () => noopInstrument,
  gauge: () => noopInstrument,
  histogram: () => noopInstrument,
};

/** Prometheus' default histogram buckets, which the Go library's duration histograms use. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
