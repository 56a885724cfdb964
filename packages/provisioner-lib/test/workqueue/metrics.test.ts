import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type {
  Counter,
  Gauge,
  Histogram,
  HistogramOptions,
  Labels,
  MetricOptions,
  MetricsSink,
} from '../../src/metrics/sink.js';
import { noopMetrics } from '../../src/metrics/sink.js';
import { Queue } from '../../src/workqueue/queue.js';
import { newRateLimitingQueue } from '../../src/workqueue/rate-limiting.js';
import { WORKQUEUE_DURATION_BUCKETS } from '../../src/workqueue/metrics.js';

/** A sink that remembers every value, keyed by metric name and `name` label. */
class RecordingSink implements MetricsSink {
  readonly declared = new Map<string, MetricOptions | HistogramOptions>();
  readonly values = new Map<string, number>();
  readonly observations = new Map<string, number[]>();
  /** Lowest value any gauge ever had. */
  minGauge = 0;

  static key(metric: string, labels: Labels): string {
    return `${metric}{${labels.name ?? ''}}`;
  }

  counter(options: MetricOptions): Counter {
    this.declare(options);
    return { inc: (labels, value = 1) => this.add(options.name, labels, value) };
  }

  gauge(options: MetricOptions): Gauge {
    this.declare(options);
    return {
      set: (labels, value) => this.set(options.name, labels, value),
      inc: (labels, value = 1) => this.add(options.name, labels, value),
      dec: (labels, value = 1) => this.add(options.name, labels, -value),
    };
  }

  histogram(options: HistogramOptions): Histogram {
    this.declare(options);
    return {
      observe: (labels, value) => {
        const k = RecordingSink.key(options.name, labels);
        this.observations.set(k, [...(this.observations.get(k) ?? []), value]);
      },
    };
  }

  value(metric: string, queue: string): number | undefined {
    return this.values.get(RecordingSink.key(metric, { name: queue }));
  }

  observed(metric: string, queue: string): number[] {
    return this.observations.get(RecordingSink.key(metric, { name: queue })) ?? [];
  }

  private declare(options: MetricOptions): void {
    if (this.declared.has(options.name)) throw new Error(`${options.name} declared twice`);
    this.declared.set(options.name, options);
  }

  private add(metric: string, labels: Labels, delta: number): void {
    this.set(metric, labels, (this.values.get(RecordingSink.key(metric, labels)) ?? 0) + delta);
  }

  private set(metric: string, labels: Labels, value: number): void {
    this.values.set(RecordingSink.key(metric, labels), value);
    this.minGauge = Math.min(this.minGauge, value);
  }
}

describe('workqueue metrics', () => {
  it('declares the seven client-go metrics labelled by name, with 1e-8…10 s buckets', () => {
    const sink = new RecordingSink();
    new Queue<string>({ name: 'claims', metrics: sink, clock: new FakeClock() }).shutDown();
    expect([...sink.declared.keys()].sort()).toEqual([
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
    ]);
    for (const options of sink.declared.values()) expect(options.labelNames).toEqual(['name']);
    const histogram = sink.declared.get('workqueue_queue_duration_seconds') as HistogramOptions;
    expect(histogram.buckets).toEqual([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10]);
    expect(WORKQUEUE_DURATION_BUCKETS).toHaveLength(10);
  });

  it('shares one set of instruments between queues reporting to the same sink', () => {
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const claims = newRateLimitingQueue<string>({ name: 'claims', metrics: sink, clock });
    const volumes = newRateLimitingQueue<string>({ name: 'volumes', metrics: sink, clock });
    claims.add('a');
    volumes.add('b');
    volumes.add('c');
    expect(sink.value('workqueue_depth', 'claims')).toBe(1);
    expect(sink.value('workqueue_depth', 'volumes')).toBe(2);
    claims.shutDown();
    volumes.shutDown();
  });

  it('tracks depth, adds and the queue and work durations', async () => {
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const q = new Queue<string>({ name: 'claims', metrics: sink, clock });
    q.add('a');
    q.add('a');
    q.add('b');
    expect(sink.value('workqueue_adds_total', 'claims')).toBe(2);
    expect(sink.value('workqueue_depth', 'claims')).toBe(2);

    clock.advance(250);
    await q.get();
    expect(sink.value('workqueue_depth', 'claims')).toBe(1);
    expect(sink.observed('workqueue_queue_duration_seconds', 'claims')).toEqual([0.25]);

    clock.advance(2000);
    q.done('a');
    expect(sink.observed('workqueue_work_duration_seconds', 'claims')).toEqual([2]);
    q.shutDown();
  });

  it('counts an add while processing in depth until the re-queued item is taken', async () => {
    const sink = new RecordingSink();
    const q = new Queue<string>({ name: 'claims', metrics: sink, clock: new FakeClock() });
    q.add('a');
    await q.get();
    q.add('a');
    expect(sink.value('workqueue_depth', 'claims')).toBe(1);
    q.done('a');
    await q.get();
    expect(sink.value('workqueue_depth', 'claims')).toBe(0);
    q.shutDown();
  });

  it('never drives depth negative on a double done', async () => {
    const sink = new RecordingSink();
    const q = new Queue<string>({ name: 'claims', metrics: sink, clock: new FakeClock() });
    q.add('a');
    await q.get();
    q.add('a');
    q.done('a');
    q.done('a');
    q.done('a');
    await q.get();
    q.done('a');
    q.done('a');
    expect(q.len()).toBe(0);
    expect(sink.value('workqueue_depth', 'claims')).toBe(0);
    expect(sink.minGauge).toBe(0);
    expect(sink.observed('workqueue_work_duration_seconds', 'claims')).toHaveLength(2);
    q.shutDown();
  });

  it('counts every addAfter and addRateLimited as a retry', () => {
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ name: 'volumes', metrics: sink, clock });
    q.addAfter('a', 0);
    q.addAfter('b', 100);
    q.addRateLimited('c');
    expect(sink.value('workqueue_retries_total', 'volumes')).toBe(3);
    q.shutDown();
    q.addAfter('d', 100);
    expect(sink.value('workqueue_retries_total', 'volumes')).toBe(3);
  });

  it('refreshes the unfinished-work gauges every 500 ms while running and stops on shutdown', async () => {
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const q = new Queue<string>({ name: 'claims', metrics: sink, clock });
    expect(clock.pending()).toBe(1);
    q.add('a');
    q.add('b');
    await q.get();
    clock.advance(1000);
    await q.get();
    clock.advance(499);
    expect(sink.value('workqueue_unfinished_work_seconds', 'claims')).toBe(1);
    expect(sink.value('workqueue_longest_running_processor_seconds', 'claims')).toBe(1);
    clock.advance(1);
    expect(sink.value('workqueue_unfinished_work_seconds', 'claims')).toBe(1.5 + 0.5);
    expect(sink.value('workqueue_longest_running_processor_seconds', 'claims')).toBe(1.5);
    q.done('a');
    q.done('b');
    clock.advance(500);
    expect(sink.value('workqueue_unfinished_work_seconds', 'claims')).toBe(0);
    expect(sink.value('workqueue_longest_running_processor_seconds', 'claims')).toBe(0);
    q.shutDown();
    expect(clock.pending()).toBe(0);
  });

  it('reports nothing and starts no timer for an unnamed queue or the no-op sink', () => {
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const unnamed = newRateLimitingQueue<string>({ metrics: sink, clock });
    unnamed.add('a');
    unnamed.addAfter('b', 10);
    expect(sink.declared.size).toBe(0);
    expect(sink.values.size).toBe(0);
    const noop = new Queue<string>({ name: 'claims', metrics: noopMetrics, clock });
    noop.add('a');
    expect(clock.pending()).toBe(1); // only the addAfter timer
  });
});
