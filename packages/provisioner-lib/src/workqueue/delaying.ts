import type { TimerHandle } from '../clock/clock.js';
import type { QueueOptions } from './queue.js';
import { Queue } from './queue.js';

/** Longest delay handed to one `setTimeout` (Node treats anything above 2^31 − 1 ms as 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface WaitEntry<T> {
  readonly item: T;
  readyAt: number;
  /** Insertion order, so entries ready at the same time are added in the order they were requested. */
  readonly seq: number;
  /** Position in the heap array. */
  index: number;
}

/** Whether `a` should leave the heap before `b`. */
function before<T>(a: WaitEntry<T>, b: WaitEntry<T>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

/** Binary min-heap of wait entries ordered by ready time. */
class WaitHeap<T> {
  private readonly a: WaitEntry<T>[] = [];

  get size(): number {
    return this.a.length;
  }

  peek(): WaitEntry<T> | undefined {
    return this.a[0];
  }

  push(entry: WaitEntry<T>): void {
    entry.index = this.a.length;
    this.a.push(entry);
    this.up(entry.index);
  }

  pop(): WaitEntry<T> | undefined {
    const top = this.a[0];
    const last = this.a.pop();
    if (top === undefined || last === undefined) return undefined;
    if (last !== top) {
      last.index = 0;
      this.a[0] = last;
      this.down(0);
    }
    top.index = -1;
    return top;
  }

  /** Restores the order after `entry.readyAt` decreased. */
  decreased(entry: WaitEntry<T>): void {
    this.up(entry.index);
  }

  clear(): void {
    this.a.length = 0;
  }

  private at(i: number): WaitEntry<T> {
    return this.a[i] as WaitEntry<T>;
  }

  private swap(i: number, j: number): void {
    const x = this.at(i);
    const y = this.at(j);
    this.a[i] = y;
    this.a[j] = x;
    y.index = i;
    x.index = j;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(this.at(i), this.at(parent))) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const child = r < n && before(this.at(r), this.at(l)) ? r : l;
      if (!before(this.at(child), this.at(i))) return;
      this.swap(i, child);
      i = child;
    }
  }
}

/**
 * A {@link Queue} that can also add items later (client-go's `DelayingInterface`, `delaying_queue.go`), so failed
 * items can be retried without a hot loop. Waiting items sit in a min-heap by ready time; one timer on the
 * queue's clock, armed for the earliest of them, moves ready items into the queue.
 */
export class DelayingQueue<T> extends Queue<T> {
  private readonly heap = new WaitHeap<T>();
  private readonly waiting = new Map<T, WaitEntry<T>>();
  private seq = 0;
  /** The one armed timer, and the ready time it was set for. */
  private timer: { readonly handle: TimerHandle; readonly readyAt: number } | undefined;

  /** @param options - see {@link QueueOptions}. */
  constructor(options: QueueOptions = {}) {
    super(options);
  }

  /**
   * Adds `item` after `ms` milliseconds. Ignored after shutdown; `ms <= 0` (or `NaN`) adds it at once. If the
   * item is already waiting, it keeps the earlier of the two ready times: a later request never postpones it.
   * Every call counts in `workqueue_retries_total`.
   */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    this.metrics.retry();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.waiting.get(item);
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.heap.decreased(existing);
        this.arm();
      }
      return;
    }
    const entry: WaitEntry<T> = { item, readyAt, seq: this.seq++, index: -1 };
    this.heap.push(entry);
    this.waiting.set(item, entry);
    this.arm();
  }

  /** Stops the timer and drops the items still waiting. */
  protected override onShutDown(): void {
    super.onShutDown();
    this.clearTimer();
    this.heap.clear();
    this.waiting.clear();
  }

  /** Makes sure exactly one timer is armed for the earliest waiting item (or none when nothing waits). */
  private arm(): void {
    const head = this.heap.peek();
    if (head === undefined) {
      this.clearTimer();
      return;
    }
    if (this.timer?.readyAt === head.readyAt) return;
    this.clearTimer();
    const delay = Math.min(Math.max(head.readyAt - this.clock.now(), 0), MAX_TIMER_MS);
    const handle = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.addReady();
    }, delay);
    this.timer = { handle, readyAt: head.readyAt };
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer.handle);
    this.timer = undefined;
  }

  /** Moves every item whose time has come into the queue, then re-arms for the next one. */
  private addReady(): void {
    if (this.shuttingDown()) return;
    const now = this.clock.now();
    for (let head = this.heap.peek(); head !== undefined && head.readyAt <= now; head = this.heap.peek()) {
      this.heap.pop();
      this.waiting.delete(head.item);
      this.add(head.item);
    }
    // A timer that fired a little early (or was capped at MAX_TIMER_MS) simply re-arms for the remainder.
    this.arm();
  }
}
