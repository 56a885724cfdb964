import type { Labels, MetricsSink } from '../../src/metrics/sink.js';

/** A MetricsSink that keeps every series it was given, for assertions on metrics. */
export class RecordingSink implements MetricsSink {
  /** metric name → label set JSON → value (counters/gauges) or observation count (histograms). */
  readonly series = new Map<string, Map<string, number>>();

  private bump(name: string, labels: Labels, by: number, set = false): void {
    const m = this.series.get(name) ?? new Map<string, number>();
    const key = JSON.stringify(Object.fromEntries(Object.entries(labels).sort()));
    m.set(key, set ? by : (m.get(key) ?? 0) + by);
    this.series.set(name, m);
  }

  counter(o: { name: string }) {
    return { inc: (labels: Labels, v = 1) => this.bump(o.name, labels, v) };
  }

  gauge(o: { name: string }) {
    return {
      set: (labels: Labels, v: number) => this.bump(o.name, labels, v, true),
      inc: (labels: Labels, v = 1) => this.bump(o.name, labels, v),
      dec: (labels: Labels, v = 1) => this.bump(o.name, labels, -v),
    };
  }

  histogram(o: { name: string }) {
    return { observe: (labels: Labels) => this.bump(o.name, labels, 1) };
  }

  /** How many series the provisioner's own (`controller_*`) metrics have. */
  controllerSeries(): number {
    let n = 0;
    for (const [name, m] of this.series) if (name.startsWith('controller_')) n += m.size;
    return n;
  }

  /** Classes (label `class`) that have a series of the metric. */
  classes(name: string): string[] {
    return [...(this.series.get(name)?.keys() ?? [])].map((k) => (JSON.parse(k) as { class: string }).class).sort();
  }
}
