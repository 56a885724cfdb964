/**
 * The simulated control loops' work queue: one reconcile at a time, a key added while it is being reconciled runs
 * again afterwards, and a failed one is retried. Every simulation (kubelet, scheduler, binder) writes to the API
 * server from its reconcile: two at once for one key write from the same stale copy, and one of them conflicts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { vi, describe, expect, it } from 'vitest';
import { RESYNC_KEY, WorkQueue } from '../../src/sim/queue.js';
import { WAIT } from '../../src/vitest.js';

describe('WorkQueue', () => {
  it('never runs two reconciles at once, even when one adds keys before its first await (as a resync does)', async () => {
    const ran: string[] = [];
    let active = 0;
    let most = 0;
    let resyncs = 0;
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        active += 1;
        most = Math.max(most, active);
        ran.push(key);
        // A resync queues every object at once, before anything is awaited; the first pass also queues the key being
        // reconciled here, which must wait for it.
        if (key === RESYNC_KEY && resyncs++ === 0) for (const k of ['pod-a', 'pod-b', RESYNC_KEY]) queue.add(k);
        await nextTurn();
        await nextTurn();
        active -= 1;
      },
      { resyncMs: 0 },
    );
    try {
      queue.add(RESYNC_KEY);
      await vi.waitFor(() => expect(ran).toEqual([RESYNC_KEY, 'pod-a', 'pod-b', RESYNC_KEY]), WAIT);
      expect(most).toBe(1);
    } finally {
      await queue.stop();
    }
  });

  it('retries a reconcile that threw, and reports the error', async () => {
    const errors: string[] = [];
    let attempts = 0;
    const queue = new WorkQueue(
      () => {
        attempts += 1;
        if (attempts < 3) throw new Error(`attempt ${attempts}`);
      },
      { resyncMs: 0, onError: (err, key) => errors.push(`${key}: ${(err as Error).message}`) },
    );
    try {
      queue.add('pod-a');
      await vi.waitFor(() => expect(attempts).toBe(3), WAIT);
      expect(errors).toEqual(['pod-a: attempt 1', 'pod-a: attempt 2']);
    } finally {
      await queue.stop();
    }
  });
});
