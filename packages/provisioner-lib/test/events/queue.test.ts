import { describe, expect, it, vi } from 'vitest';
import { ApiException, type CoreV1Event } from '@kubernetes/client-node';
import { WAIT } from '@kprov/testkit/vitest';
import { EVENT_RECORDER_DROPPED_EVENTS, EventRecorder, type EventsApi } from '../../src/events/recorder.js';
import { RecordingSink } from '../controller/recording-sink.js';
import { captureLogger } from './capture-logger.js';

/** A client whose creates wait until `release()` is called. */
function blockingClient(): { client: EventsApi; created: CoreV1Event[]; release: () => void } {
  const created: CoreV1Event[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const client = {
    createNamespacedEvent: async ({ body }: { body: CoreV1Event }) => {
      await gate;
      created.push(body);
      return body;
    },
    patchNamespacedEvent: () => Promise.reject(new Error('unexpected patch')),
  } as unknown as EventsApi;
  return { client, created, release: () => release() };
}

describe('EventRecorder queue', () => {
  it('drops events beyond queueSize without blocking or throwing', async () => {
    const { client, created, release } = blockingClient();
    const logger = captureLogger();
    const rec = new EventRecorder({ client, source: { component: 'test' }, logger, queueSize: 2, concurrency: 1 });
    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'c' };
    rec.event(ref, 'Normal', 'R0', 'm'); // taken by the worker at once
    for (let i = 1; i <= 4; i++) rec.event(ref, 'Normal', `R${i}`, 'm');
    expect(logger.lines.filter((l) => l.message === 'Too many queued events, event dropped')).toHaveLength(2);
    release();
    await rec.flush();
    expect(created.map((e) => e.reason)).toEqual(['R0', 'R1', 'R2']);
  });

  it('does not count events being written against queueSize', async () => {
    const { client, created, release } = blockingClient();
    const logger = captureLogger();
    const rec = new EventRecorder({ client, source: { component: 'test' }, logger, queueSize: 2, concurrency: 3 });
    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'c' };
    for (let i = 0; i <= 6; i++) rec.event(ref, 'Normal', `R${i}`, 'm'); // R0-R2 in flight, R3-R4 queued
    expect(
      logger.lines.filter((l) => l.message === 'Too many queued events, event dropped').map((l) => l.fields.reason),
    ).toEqual(['R5', 'R6']);
    release();
    await rec.flush();
    expect(created.map((e) => e.reason).sort()).toEqual(['R0', 'R1', 'R2', 'R3', 'R4']);
  });

  it('requires a client or a kubeConfig', () => {
    expect(() => new EventRecorder({ source: { component: 'test' } })).toThrow(/client or a kubeConfig/);
  });

  it('rejects a concurrency that is not a positive integer', () => {
    const { client } = blockingClient();
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => new EventRecorder({ client, source: { component: 'test' }, concurrency })).toThrow(RangeError);
    }
  });

  it('flush waits only for the events queued before it', async () => {
    const gates = new Map<string, () => void>();
    const created: string[] = [];
    const client = {
      createNamespacedEvent: async ({ body }: { body: CoreV1Event }) => {
        await new Promise<void>((resolve) => gates.set(body.reason!, resolve));
        created.push(body.reason!);
        return body;
      },
      patchNamespacedEvent: () => Promise.reject(new Error('unexpected patch')),
    } as unknown as EventsApi;
    const rec = new EventRecorder({ client, source: { component: 'test' } });
    const ref = { kind: 'PersistentVolume', name: 'pv' };
    rec.event(ref, 'Normal', 'A', 'm');
    rec.event(ref, 'Normal', 'B', 'm');
    let flushed = false;
    const flush = rec.flush().then(() => (flushed = true));
    rec.event(ref, 'Normal', 'Later', 'm');
    gates.get('B')!();
    gates.get('Later')!();
    await vi.waitFor(() => expect(created).toEqual(['B', 'Later']), WAIT);
    expect(flushed).toBe(false); // A is still being written
    gates.get('A')!();
    await flush;
    expect(created).toEqual(['B', 'Later', 'A']);
    await rec.flush(); // nothing queued: resolves at once
  });

  it('gives each event a unique name even within one millisecond', async () => {
    const { client, created, release } = blockingClient();
    release();
    const rec = new EventRecorder({
      client,
      source: { component: 'test' },
      nowNanos: () => 1_735_689_600_000_000_000n,
    });
    const ref = { kind: 'PersistentVolume', name: 'pv' };
    rec.event(ref, 'Normal', 'A', 'm');
    rec.event(ref, 'Normal', 'B', 'm');
    await rec.flush();
    expect(created.map((e) => e.metadata.name)).toEqual(['pv.1816687ec0570000', 'pv.1816687ec0570001']);
  });

  it('counts the events it does not write in a metric, by reason', async () => {
    const { client: blocked, release } = blockingClient();
    const answers: Record<string, () => Promise<CoreV1Event>> = {
      Forbidden: () =>
        Promise.reject(
          new ApiException(
            403,
            'Forbidden',
            '{"kind":"Status","reason":"Forbidden","message":"events is forbidden"}',
            {},
          ),
        ),
      Exists: () =>
        Promise.reject(
          new ApiException(409, 'Conflict', '{"kind":"Status","reason":"AlreadyExists","message":"exists"}', {}),
        ),
      Unavailable: () => Promise.reject(new ApiException(503, 'Service Unavailable', '', {})),
    };
    const client = {
      createNamespacedEvent: ({ body }: { body: CoreV1Event }) =>
        answers[body.reason!]?.() ?? blocked.createNamespacedEvent({ namespace: '', body }),
      patchNamespacedEvent: () => Promise.reject(new Error('unexpected patch')),
    } as unknown as EventsApi;
    const metrics = new RecordingSink();
    const dropped = (): Record<string, number> =>
      Object.fromEntries(
        [...(metrics.series.get(EVENT_RECORDER_DROPPED_EVENTS) ?? [])].map(([l, n]) => [
          (JSON.parse(l) as { reason: string }).reason,
          n,
        ]),
      );
    const rec = new EventRecorder({
      client,
      source: { component: 'test' },
      metrics,
      queueSize: 1,
      concurrency: 1,
      maxTries: 2,
      retryDelayMs: 1,
    });
    // Every series is there from the start.
    expect(dropped()).toEqual({ queue_full: 0, shut_down: 0, retry_limit: 0, rejected: 0 });

    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'c' };
    rec.event(ref, 'Normal', 'Held', 'm'); // being written: the one write slot is taken
    rec.event(ref, 'Warning', 'Forbidden', 'm'); // queued: the queue of 1 is full
    rec.event(ref, 'Normal', 'Lost', 'm');
    expect(dropped()).toMatchObject({ queue_full: 1 });
    release();
    await rec.flush();
    expect(dropped()).toMatchObject({ queue_full: 1, rejected: 1 });

    rec.event(ref, 'Normal', 'Exists', 'm'); // already there: not counted
    rec.event(ref, 'Normal', 'Unavailable', 'm'); // 503 twice: the retry limit
    await rec.flush();
    rec.shutDown();
    rec.event(ref, 'Normal', 'Late', 'm');
    expect(dropped()).toEqual({ queue_full: 1, shut_down: 1, retry_limit: 1, rejected: 1 });
  });
});
