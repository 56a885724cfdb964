import type { Clock } from '../clock/clock.js';
import type { Counter, Gauge, Histogram, Labels, MetricsSink } from '../metrics/sink.js';
import { noopMetrics } from '../metrics/sink.js';

/**
 * Buckets (seconds) of `workqueue_queue_duration_seconds` and `workqueue_work_duration_seconds`: 1e-8 · 10^k for
 * k = 0…9, i.e. 10 ns to 10 s, as k8s.io/component-base and controller-runtime (before it moved to 12 buckets and
 * native histograms) register them.
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** How often a running, metered queue refreshes its unfinished-work gauges, in ms (client-go's 500 ms). */
export const UNFINISHED_WORK_UPDATE_PERIOD_MS = 500;

/** Metric names, as client-go's providers (component-base, controller-runtime) register them. */
export const WORKQUEUE_METRIC_NAMES = {
  depth: 'workqueue_depth',
  adds: 'workqueue_adds_total',
  queueDuration: 'workqueue_queue_duration_seconds',
  workDuration: 'workqueue_work_duration_seconds',
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  longestRunningProcessor: 'workqueue_longest_running_processor_seconds',
  retries: 'workqueue_retries_total',
} as const;

/**
 * What a queue reports about itself (the `workqueue_*` metrics of its `name`). The queue classes build it from
 * their `metrics` sink; users never do.
 */
export interface QueueMetrics<T> {
  /** False for the no-op implementation: then the queue starts no refresh timer. */
  readonly enabled: boolean;
  /** An item became dirty (a real add, not a deduplicated one). */
  add(item: T): void;
  /** An item was handed to a worker. */
  get(item: T): void;
  /** A worker finished an item it had been handed. */
  done(item: T): void;
  /** Recomputes the unfinished-work gauges from the items being processed. */
  updateUnfinishedWork(): void;
  /** A delayed or rate-limited add was requested. */
  retry(): void;
}

interface Instruments {
  depth: Gauge;
  adds: Counter;
  queueDuration: Histogram;
  workDuration: Histogram;
  unfinishedWork: Gauge;
  longestRunningProcessor: Gauge;
  retries: Counter;
}

const LABEL_NAMES: readonly string[] = ['name'];

// One set of instruments per sink, shared by every queue reporting to it (told apart by the `name` label), so a
// sink backed by a registry that refuses duplicate names is asked for each metric once.
const instrumentsBySink = new WeakMap<MetricsSink, Instruments>();

function instrumentsFor(sink: MetricsSink): Instruments {
  let instruments = instrumentsBySink.get(sink);
  if (instruments === undefined) {
    const n = WORKQUEUE_METRIC_NAMES;
    instruments = {
      depth: sink.gauge({ name: n.depth, help: 'Number of items waiting in the work queue.', labelNames: LABEL_NAMES }),
      adds: sink.counter({ name: n.adds, help: 'Items added to the work queue.', labelNames: LABEL_NAMES }),
      queueDuration: sink.histogram({
        name: n.queueDuration,
        help: 'Seconds an item waited in the work queue before a worker took it.',
        labelNames: LABEL_NAMES,
        buckets: WORKQUEUE_DURATION_BUCKETS,
      }),
      workDuration: sink.histogram({
        name: n.workDuration,
        help: 'Seconds a worker spent on an item taken from the work queue.',
        labelNames: LABEL_NAMES,
        buckets: WORKQUEUE_DURATION_BUCKETS,
      }),
      unfinishedWork: sink.gauge({
        name: n.unfinishedWork,
        help:
          'Seconds of work in progress that work_duration has not observed yet. Large values point to stuck ' +
          'workers; the rate at which it grows tells how many are stuck.',
        labelNames: LABEL_NAMES,
      }),
      longestRunningProcessor: sink.gauge({
        name: n.longestRunningProcessor,
        help: 'Seconds the longest-running worker of the work queue has been busy with its current item.',
        labelNames: LABEL_NAMES,
      }),
      retries: sink.counter({
        name: n.retries,
        help: 'Delayed and rate-limited re-adds requested from the work queue.',
        labelNames: LABEL_NAMES,
      }),
    };
    instrumentsBySink.set(sink, instruments);
  }
  return instruments;
}

const noopQueueMetrics: QueueMetrics<never> = {
  enabled: false,
  add: () => undefined,
  get: () => undefined,
  done: () => undefined,
  updateUnfinishedWork: () => undefined,
  retry: () => undefined,
};

class SinkQueueMetrics<T> implements QueueMetrics<T> {
  readonly enabled = true;
  private readonly labels: Labels;
  private readonly m: Instruments;
  private readonly clock: Clock;
  private readonly addTimes = new Map<T, number>();
  private readonly processingStartTimes = new Map<T, number>();
  private depth = 0;
  /** Whether the gauges last reported an idle queue (zeros): an idle queue's refresh then sets nothing. */
  private reportedIdle = false;

  constructor(name: string, sink: MetricsSink, clock: Clock) {
    this.labels = { name };
    this.m = instrumentsFor(sink);
    this.clock = clock;
  }

  add(item: T): void {
    this.m.adds.inc(this.labels);
    this.depth++;
    this.m.depth.inc(this.labels);
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.now());
  }

  get(item: T): void {
    // The queue only hands out dirty items, so this never underflows; the guard keeps the gauge sane regardless.
    if (this.depth > 0) {
      this.depth--;
      this.m.depth.dec(this.labels);
    }
    const now = this.clock.now();
    this.processingStartTimes.set(item, now);
    const addedAt = this.addTimes.get(item);
    if (addedAt !== undefined) {
      this.m.queueDuration.observe(this.labels, (now - addedAt) / 1000);
      this.addTimes.delete(item);
    }
  }

  done(item: T): void {
    const startedAt = this.processingStartTimes.get(item);
    if (startedAt !== undefined) {
      this.m.workDuration.observe(this.labels, (this.clock.now() - startedAt) / 1000);
      this.processingStartTimes.delete(item);
    }
  }

  updateUnfinishedWork(): void {
    // A provisioner is idle most of the time: its refreshes (two per queue a second) then have nothing to change.
    const idle = this.processingStartTimes.size === 0;
    if (idle && this.reportedIdle) return;
    this.reportedIdle = idle;
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.processingStartTimes.values()) {
      const age = (now - startedAt) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    this.m.unfinishedWork.set(this.labels, total);
    this.m.longestRunningProcessor.set(this.labels, oldest);
  }

  retry(): void {
    this.m.retries.inc(this.labels);
  }
}

/**
 * The metrics of one queue. As in client-go, only named queues report: with an empty `name` or the
 * {@link noopMetrics} sink this returns a no-op implementation (and the queue starts no refresh timer).
 * Every metric carries the label `name`.
 * @param name - the queue's name, the `name` label value.
 * @param sink - where to report.
 * @param clock - time source for durations.
 */
export function newQueueMetrics<T>(name: string | undefined, sink: MetricsSink, clock: Clock): QueueMetrics<T> {
  if (name === undefined || name === '' || sink === noopMetrics) return noopQueueMetrics;
  return new SinkQueueMetrics<T>(name, sink, clock);
}
