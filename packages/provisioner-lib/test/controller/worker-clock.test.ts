/**
 * The operation timeout of the worker loop and the pause between the default volume store's attempts run on the
 * controller's clock, so a fake clock decides when an operation times out and when the next attempt starts.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { timeoutSignal } from '../../src/clock/clock.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { BackoffVolumeStore } from '../../src/controller/volume-store.js';
import { runWorker, type WorkerSpec } from '../../src/controller/worker.js';
import { silentLogger } from '../../src/logging/logger.js';
import { newRateLimitingQueue } from '../../src/workqueue/index.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';

describe('timeoutSignal', () => {
  it('aborts with a TimeoutError once the time has passed on the clock', () => {
    const clock = new FakeClock();
    const { signal } = timeoutSignal(clock, 100);
    clock.advance(99);
    expect(signal.aborted).toBe(false);
    clock.advance(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never aborts once cleared, and leaves no timer behind', () => {
    const clock = new FakeClock();
    const timeout = timeoutSignal(clock, 100);
    timeout.clear();
    expect(clock.pending()).toBe(0);
    clock.advance(1000);
    expect(timeout.signal.aborted).toBe(false);
  });
});

describe('runWorker', () => {
  function spec(clock: FakeClock, sync: WorkerSpec['sync']): { spec: WorkerSpec; errors: unknown[] } {
    const errors: unknown[] = [];
    const queue = newRateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(1_000_000, 1_000_000),
    });
    return {
      errors,
      spec: {
        queue,
        sync,
        threshold: 1,
        timeoutMs: 500,
        clock,
        onSuccess: () => undefined,
        onError: (_key, err) => errors.push(err),
        onGiveUp: () => undefined,
        busy: () => undefined,
      },
    };
  }

  it('aborts an operation that outlasts the timeout on the clock', async () => {
    const clock = new FakeClock();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { spec: s, errors } = spec(
      clock,
      (_key, signal) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    );
    const worker = runWorker(s, new AbortController().signal);
    s.queue.add('a');
    await running;
    await clock.advanceAsync(499);
    expect(errors).toEqual([]);
    await clock.advanceAsync(1);
    expect(errors).toHaveLength(1);
    expect((errors[0] as DOMException).name).toBe('TimeoutError');
    s.queue.shutDown();
    await worker;
  });

  it('clears the timeout of an operation that ended in time', async () => {
    const clock = new FakeClock();
    const { spec: s, errors } = spec(clock, () => Promise.resolve());
    const worker = runWorker(s, new AbortController().signal);
    s.queue.add('a');
    s.queue.shutDown();
    await worker;
    expect(errors).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});

describe('BackoffVolumeStore', () => {
  const claim: V1PersistentVolumeClaim = { metadata: { name: 'c', namespace: 'default', uid: 'u' } };
  const volume: V1PersistentVolume = { metadata: { name: 'pvc-u' } };

  it('spaces its attempts by the interval on the clock, then deletes the asset with the same spacing', async () => {
    const clock = new FakeClock();
    const creates: number[] = [];
    const deletes: number[] = [];
    const api = {
      createPersistentVolume: () => {
        creates.push(clock.now());
        return Promise.reject(new Error('create refused'));
      },
    };
    const provisioner: Provisioner = {
      provision: () => Promise.reject(new Error('unused')),
      delete: () => {
        deletes.push(clock.now());
        return Promise.reject(new Error('delete refused'));
      },
    };
    const events: string[] = [];
    const store = new BackoffVolumeStore(
      api,
      provisioner,
      3,
      1000,
      (_c, _t, reason) => events.push(reason),
      silentLogger,
      clock,
    );
    const stored = store.storeVolume(claim, volume).catch((err: unknown) => err);
    for (let i = 0; i < 6; i++) await clock.advanceAsync(1000);
    expect(((await stored) as Error).message).toBe('create refused');
    expect(creates).toEqual([0, 1000, 2000]);
    expect(deletes).toEqual([2000, 3000, 4000]);
    expect(events).toEqual(['ProvisioningFailed', 'ProvisioningCleanupFailed']);
  });
});
