import type { Clock, TimerHandle } from '../clock/clock.js';
import { realClock } from '../clock/clock.js';
import type { MetricsSink } from '../metrics/sink.js';
import { noopMetrics } from '../metrics/sink.js';
import type { QueueMetrics } from './metrics.js';
import { newQueueMetrics, UNFINISHED_WORK_UPDATE_PERIOD_MS } from './metrics.js';

/** What {@link Queue.get} resolves to: an item to process, or the signal that the worker should stop. */
export type QueueGetResult<T> = { item: T; shutdown: false } | { shutdown: true };

/** Options shared by {@link Queue}, `DelayingQueue` and `RateLimitingQueue`. */
export interface QueueOptions {
  /**
   * Name of the queue, the `name` label of its metrics. Unnamed queues report no metrics (as in client-go).
   * @defaultValue `''`
   */
  name?: string;
  /**
   * Time source for delays and metrics.
   * @defaultValue {@link realClock}
   */
  clock?: Clock;
  /**
   * Where the queue reports the `workqueue_*` metrics (only when named).
   * @defaultValue {@link noopMetrics}
   */
  metrics?: MetricsSink;
}

/** FIFO of items with amortised O(1) removal from the front. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Removes and returns the front item; the caller checks `length` first. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * A work queue with client-go's semantics (`k8s.io/client-go/util/workqueue`, `queue.go`):
 *
 * - fair: items are handed out in the order they were added (FIFO);
 * - stingy: an item added several times before a worker takes it is processed once, and an item is never handed
 *   to two workers at once;
 * - an item added again while a worker processes it is queued once more when that worker calls {@link Queue.done};
 * - any number of producers and consumers; {@link Queue.get} waits for work.
 *
 * Items are compared with `Set` semantics (SameValueZero): strings by value, objects by identity. The library
 * uses string keys.
 *
 * Every successful {@link Queue.get} must be followed by exactly one {@link Queue.done} for that item, usually
 * in a `finally`.
 */
export class Queue<T> {
  /** The queue's name (`''` when unnamed). */
  readonly name: string;
  /** The clock the queue measures time with. */
  protected readonly clock: Clock;
  /** The queue's metrics (a no-op unless the queue is named and given a sink). */
  protected readonly metrics: QueueMetrics<T>;

  /** Processing order. Invariant: every element is in `dirty` and not in `processing`. */
  private readonly queue = new Fifo<T>();
  /** Items that need processing. */
  private readonly dirty = new Set<T>();
  /** Items handed to a worker and not yet done. They may be dirty too (added again meanwhile). */
  private readonly processing = new Set<T>();
  /** Pending `get` calls. Non-empty only while `queue` is empty and the queue is not shutting down. */
  private getters: ((result: QueueGetResult<T>) => void)[] = [];
  /** Pending `shutDownWithDrain` calls. */
  private drainers: (() => void)[] = [];
  private shutdownCalled = false;
  /** Whether a hand-out to waiting getters is scheduled (see {@link Queue.add}). */
  private handOutScheduled = false;
  private unfinishedWorkTimer: { readonly handle: TimerHandle } | undefined;

  /** @param options - see {@link QueueOptions}. */
  constructor(options: QueueOptions = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.metrics = newQueueMetrics<T>(this.name, options.metrics ?? noopMetrics, this.clock);
    if (this.metrics.enabled) this.scheduleUnfinishedWorkUpdate();
  }

  /**
   * Marks `item` as needing processing. Ignored after shutdown, and when the item is already waiting. When a
   * worker is processing the item, it is queued again once that worker calls {@link Queue.done}.
   */
  add(item: T): void {
    if (this.shutdownCalled) return;
    if (this.dirty.has(item)) return;
    this.metrics.add(item);
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.scheduleHandOut();
  }

  /**
   * Number of items waiting to be handed out (not counting items being processed). Informational only: never
   * decide whether to call {@link Queue.add} or {@link Queue.get} from it.
   */
  len(): number {
    return this.queue.length;
  }

  /**
   * Waits for the next item and hands it to the caller, who must call {@link Queue.done} with it afterwards.
   * Resolves `{ shutdown: true }` only when the queue is shutting down and nothing is left to hand out; items
   * queued before the shutdown are still handed out first. Concurrent callers are served in call order.
   */
  get(): Promise<QueueGetResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ item: this.take(), shutdown: false });
    if (this.shutdownCalled) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => {
      this.getters.push(resolve);
    });
  }

  /**
   * Marks `item` as processed. If it was added again while being processed, it is queued again. Calling it for
   * an item that is not being processed (a second `done`, say) does nothing.
   */
  done(item: T): void {
    // client-go would queue a dirty item a second time on a double Done (and drive workqueue_depth negative);
    // ignoring calls for items not being processed keeps the invariants instead.
    if (!this.processing.has(item)) return;
    this.metrics.done(item);
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.scheduleHandOut();
    }
    if (this.processing.size === 0) this.releaseDrainers();
  }

  /**
   * Stops accepting items and wakes every waiting {@link Queue.get}. Workers still receive the items already
   * queued, then `{ shutdown: true }`. Also ends the wait of a pending {@link Queue.shutDownWithDrain}.
   * Safe to call more than once.
   */
  shutDown(): void {
    this.shutdown();
    this.releaseDrainers();
  }

  /**
   * Like {@link Queue.shutDown}, then resolves once no item is being processed, i.e. every item handed out has
   * been passed to {@link Queue.done}. Never resolves if a worker forgets `done`; a later {@link Queue.shutDown}
   * ends the wait.
   */
  shutDownWithDrain(): Promise<void> {
    this.shutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainers.push(resolve);
    });
  }

  /** Whether {@link Queue.shutDown} or {@link Queue.shutDownWithDrain} has been called. */
  shuttingDown(): boolean {
    return this.shutdownCalled;
  }

  /** Called once, when the queue starts shutting down. Subclasses stop their timers here. */
  protected onShutDown(): void {
    if (this.unfinishedWorkTimer !== undefined) {
      this.clock.clearTimeout(this.unfinishedWorkTimer.handle);
      this.unfinishedWorkTimer = undefined;
    }
  }

  private shutdown(): void {
    if (this.shutdownCalled) return;
    this.shutdownCalled = true;
    this.onShutDown();
    // Getters wait only while the queue is empty, so each of them is told to stop.
    const getters = this.getters;
    this.getters = [];
    for (const resolve of getters) resolve({ shutdown: true });
  }

  /**
   * Hands queued items to waiting workers on the next turn of the event loop, not inside `add`: a worker blocked in
   * client-go's `Get` takes an item only once it runs, so adds that come together (the events of one watch read,
   * say) find the item still queued and are collapsed into one. Handing it out at once would mark it processing,
   * and the next add would queue it a second time.
   */
  private scheduleHandOut(): void {
    if (this.handOutScheduled || this.getters.length === 0) return;
    this.handOutScheduled = true;
    setImmediate(() => {
      this.handOutScheduled = false;
      this.handOut();
    });
  }

  /** Gives queued items to waiting getters. The item moves to processing now, so no one else can take it. */
  private handOut(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      const resolve = this.getters.shift();
      resolve?.({ item: this.take(), shutdown: false });
    }
  }

  private take(): T {
    const item = this.queue.shift();
    this.metrics.get(item);
    this.processing.add(item);
    this.dirty.delete(item);
    return item;
  }

  private releaseDrainers(): void {
    const drainers = this.drainers;
    this.drainers = [];
    for (const resolve of drainers) resolve();
  }

  private scheduleUnfinishedWorkUpdate(): void {
    const handle = this.clock.setTimeout(() => {
      this.unfinishedWorkTimer = undefined;
      if (this.shutdownCalled) return;
      this.metrics.updateUnfinishedWork();
      this.scheduleUnfinishedWorkUpdate();
    }, UNFINISHED_WORK_UPDATE_PERIOD_MS);
    this.unfinishedWorkTimer = { handle };
  }
}
