/**
 * The work queue every simulated control loop runs on, modelled on client-go's rate-limited work queue: a store
 * listener only {@link WorkQueue.add}s keys (never writes: that would re-enter the store), and the queue drains them
 * one by one on a later turn of the event loop (`setImmediate`), calling a level-based reconcile that reads the
 * current store state. A key added again while queued is processed once; added while being processed, it runs
 * again afterwards. A reconcile that throws is retried with exponential backoff; a periodic resync key lets the
 * loop catch up with anything it was not told about. After {@link WorkQueue.stop} nothing runs any more.
 */

/** Options shared by every simulated control loop. */
export interface LoopOptions {
  /**
   * Called with every error a reconcile throws (the key is retried with backoff either way). Default: ignore;
   * conflicts and not-yet-satisfied preconditions are routine for control loops.
   */
  onError?: (error: unknown, key: string) => void;
  /** First retry delay after a failed reconcile, in ms; doubles per consecutive failure. Default 20. */
  retryBaseMs?: number;
  /** Cap of the retry delay, in ms. Default 1000. */
  retryMaxMs?: number;
  /** Interval of the full resync (every object reconsidered), in ms; 0 disables it. Default 1000. */
  resyncMs?: number;
}

/** What a started loop returns: stopping it waits for a reconcile in flight; afterwards nothing more is written. */
export interface Stoppable {
  stop(): Promise<void>;
}

/** The key a queue adds on every resync tick, if the loop asked for resyncs. */
export const RESYNC_KEY = '*';

/** A deduplicating, retrying work queue that drains asynchronously; see the module comment. */
export class WorkQueue {
  private readonly pending = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private immediate: NodeJS.Immediate | undefined;
  private interval: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private isStopped = false;

  constructor(
    private readonly reconcile: (key: string) => void | Promise<void>,
    private readonly options: LoopOptions = {},
  ) {
    const resync = options.resyncMs ?? 1000;
    if (resync > 0) {
      this.interval = setInterval(() => this.add(RESYNC_KEY), resync);
      this.interval.unref();
    }
  }

  /** Whether {@link stop} has been called. */
  get stopped(): boolean {
    return this.isStopped;
  }

  /** Queues a key (no-op after stop). Safe to call from a store listener. */
  add(key: string): void {
    if (this.isStopped) return;
    this.pending.add(key);
    this.schedule();
  }

  /** Queues a key after a delay. */
  addAfter(key: string, ms: number): void {
    if (this.isStopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private schedule(): void {
    if (this.immediate !== undefined || this.draining !== undefined) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      // The drain starts once `draining` is set: a reconcile that adds a key before its first await (the resync's
      // does) would otherwise schedule a second drain beside this one, and one key could be reconciled twice at once.
      this.draining = Promise.resolve()
        .then(() => this.drain())
        .finally(() => {
          this.draining = undefined;
          if (this.pending.size > 0) this.schedule();
        });
    });
  }

  private async drain(): Promise<void> {
    while (!this.isStopped) {
      const next = this.pending.values().next();
      if (next.done === true) return;
      const key = next.value;
      this.pending.delete(key);
      try {
        await this.reconcile(key);
        this.failures.delete(key);
      } catch (error) {
        if (this.isStopped) return;
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        try {
          this.options.onError?.(error, key);
        } catch {
          // A failing error hook must not stop the loop.
        }
        const base = this.options.retryBaseMs ?? 20;
        const max = this.options.retryMaxMs ?? 1000;
        this.addAfter(key, Math.min(base * 2 ** (n - 1), max));
      }
    }
  }

  /** Stops the queue: no key runs after the reconcile in flight (awaited) returns. */
  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    if (this.interval !== undefined) clearInterval(this.interval);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.pending.clear();
    await this.draining;
  }
}

/** `namespace/name`, the key form the loops use for namespaced objects. */
export function nsKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

/** Splits a {@link nsKey} key. */
export function splitKey(key: string): [namespace: string, name: string] {
  const i = key.indexOf('/');
  return i < 0 ? ['', key] : [key.slice(0, i), key.slice(i + 1)];
}
