import { timeoutSignal, type Clock } from '../clock/clock.js';
import type { RateLimitingQueue } from '../workqueue/index.js';
import { OperationTimeoutError } from './operation.js';

/** What one worker loop needs: its queue, the sync of one key, and what to do on success and failure. */
export interface WorkerSpec {
  queue: RateLimitingQueue<string>;
  /** Processes one key; throwing requeues it with the rate limiter, up to the threshold. */
  sync(key: string, signal: AbortSignal): Promise<void>;
  /** Retries before giving up on a key until its next change or resync; 0 = forever. */
  threshold: number;
  /** Timeout of one sync, ms; 0 = none. */
  timeoutMs: number;
  /** The clock the timeout runs on. */
  clock: Clock;
  onSuccess(key: string): void;
  onError(key: string, err: unknown): void;
  /** The key exceeded the threshold: it is not requeued (its failure count is kept, as in Go). */
  onGiveUp(key: string, err: unknown): void;
  /** Counts operations under way (for `pendingWork`). */
  busy(delta: 1 | -1): void;
}

/**
 * The worker loop of the Go library's `processNextClaimWorkItem` / `processNextVolumeWorkItem`: `get`, sync,
 * `forget` on success or `addRateLimited` below the threshold on error, and `done` always. Returns when the queue
 * shuts down; once `signal` aborts it starts nothing new, even for keys still queued.
 */
export async function runWorker(spec: WorkerSpec, signal: AbortSignal): Promise<void> {
  const { queue } = spec;
  for (;;) {
    const next = await queue.get();
    if (next.shutdown) return;
    const key = next.item;
    if (signal.aborted) {
      // Stopped or no longer leading: the queue still hands out what was queued (client-go semantics), but no new
      // operation may start now.
      queue.done(key);
      return;
    }
    spec.busy(1);
    const timeout =
      spec.timeoutMs > 0
        ? timeoutSignal(spec.clock, spec.timeoutMs, () => new OperationTimeoutError(spec.timeoutMs))
        : undefined;
    try {
      await spec.sync(key, timeout === undefined ? signal : AbortSignal.any([signal, timeout.signal]));
      queue.forget(key);
      spec.onSuccess(key);
    } catch (err) {
      spec.onError(key, err);
      if (spec.threshold === 0 || queue.numRequeues(key) < spec.threshold) queue.addRateLimited(key);
      else spec.onGiveUp(key, err);
    } finally {
      timeout?.clear();
      spec.busy(-1);
      queue.done(key);
    }
  }
}
