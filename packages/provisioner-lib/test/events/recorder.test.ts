import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startApiServer, kubeConfigFor, type KubeObject, type Testkit } from '@kprov/testkit';
import { EventRecorder, type EventRecorderOptions } from '../../src/events/recorder.js';
import type { ObjectReference } from '../../src/events/types.js';
import { FakeClock } from './fake-clock.js';
import { captureLogger } from './capture-logger.js';

let kit: Testkit;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
});

afterAll(async () => {
  await kit.stop();
});

beforeEach(() => {
  kit.faults.clear();
  for (const ns of ['default', 'team-a']) {
    for (const ev of kit.store.list('events', ns)) kit.store.delete('events', ns, ev.metadata.name!);
  }
});

/** A settable wall clock in nanoseconds, starting at 2025-01-01T00:00:00Z. */
function wallClock(): { now: () => bigint; advanceSeconds: (s: number) => void } {
  let ns = BigInt(Date.UTC(2025, 0, 1)) * 1_000_000n;
  return { now: () => ns, advanceSeconds: (s) => (ns += BigInt(s) * 1_000_000_000n) };
}

function recorder(options: Partial<EventRecorderOptions> = {}): EventRecorder {
  return new EventRecorder({
    kubeConfig: kit.kubeConfig,
    source: { component: 'example.com/hostpath_node-1' },
    retryDelayMs: 1,
    random: () => 0,
    ...options,
  });
}

const claim: ObjectReference = {
  kind: 'PersistentVolumeClaim',
  apiVersion: 'v1',
  namespace: 'team-a',
  name: 'data',
  uid: '5c1e7d4a-0000-4000-8000-000000000001',
  resourceVersion: '42',
};

function events(namespace: string): KubeObject[] {
  return kit.store.list('events', namespace);
}

describe('EventRecorder against the API server', () => {
  beforeAll(() => {
    kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  });

  it('creates an Event with count 1 for the first occurrence', async () => {
    const wall = wallClock();
    const rec = recorder({ nowNanos: wall.now });
    rec.event(claim, 'Normal', 'Provisioning', 'External provisioner is provisioning volume for claim "team-a/data"');
    await rec.flush();

    const stored = events('team-a');
    expect(stored).toHaveLength(1);
    const ev = stored[0]!;
    expect(ev.metadata.name).toMatch(/^data\.[0-9a-f]{16}$/);
    expect(ev.metadata.name).toBe(`data.${wall.now().toString(16)}`);
    expect(ev.involvedObject).toEqual({
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: 'team-a',
      name: 'data',
      uid: '5c1e7d4a-0000-4000-8000-000000000001',
      resourceVersion: '42',
    });
    expect(ev.source).toEqual({ component: 'example.com/hostpath_node-1' });
    expect(ev).toMatchObject({
      type: 'Normal',
      reason: 'Provisioning',
      message: 'External provisioner is provisioning volume for claim "team-a/data"',
      count: 1,
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:00:00Z',
    });
    expect(ev.eventTime ?? null).toBeNull();
  });

  it('patches count and lastTimestamp of the same Event on a repeat', async () => {
    const wall = wallClock();
    const rec = recorder({ nowNanos: wall.now });
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'disk full');
    await rec.flush();
    const first = events('team-a')[0]!;

    wall.advanceSeconds(5);
    rec.event({ ...claim, resourceVersion: '43' }, 'Warning', 'ProvisioningFailed', 'disk full');
    wall.advanceSeconds(5);
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'disk full');
    await rec.flush();

    const stored = events('team-a');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.metadata.name).toBe(first.metadata.name);
    expect(stored[0]).toMatchObject({
      count: 3,
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:00:10Z',
      message: 'disk full',
    });
  });

  it('creates a new Event when the message differs', async () => {
    const rec = recorder();
    rec.event(claim, 'Normal', 'Provisioning', 'one');
    rec.event(claim, 'Normal', 'ProvisioningSucceeded', 'Successfully provisioned volume pvc-1');
    await rec.flush();
    expect(events('team-a').map((e) => e.reason).sort()).toEqual(['Provisioning', 'ProvisioningSucceeded']);
  });

  it('puts Events about a cluster-scoped PersistentVolume in namespace default', async () => {
    const rec = recorder();
    rec.event({ kind: 'PersistentVolume', apiVersion: 'v1', name: 'pvc-123', uid: 'u-1' }, 'Warning', 'VolumeFailedDelete', 'boom');
    await rec.flush();
    const stored = events('default');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.metadata.name).toMatch(/^pvc-123\.[0-9a-f]{16}$/);
    expect(stored[0]!.involvedObject).toEqual({ kind: 'PersistentVolume', apiVersion: 'v1', name: 'pvc-123', uid: 'u-1' });
  });

  it('retries a failed write and the Event still appears', async () => {
    kit.faults.add({ resource: 'events', verb: 'create', action: { type: 'error', code: 500 }, count: 1 });
    const logger = captureLogger();
    const rec = recorder({ logger });
    rec.event(claim, 'Normal', 'Provisioning', 'retried');
    await vi.waitFor(() => expect(events('team-a')).toHaveLength(1));
    await rec.flush();
    expect(events('team-a')[0]).toMatchObject({ count: 1, message: 'retried' });
    expect(logger.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true);
  });

  it('creates the Event again when the one it would patch is gone', async () => {
    const rec = recorder();
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'again');
    await rec.flush();
    const name = events('team-a')[0]!.metadata.name!;
    kit.store.delete('events', 'team-a', name);
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'again');
    await rec.flush();
    const stored = events('team-a');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ metadata: { name }, count: 2 });
  });

  it('combines similar events after 10 distinct messages', async () => {
    const rec = recorder();
    for (let i = 1; i <= 11; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', `attempt ${i}`);
    await rec.flush();
    const stored = events('team-a');
    expect(stored).toHaveLength(10);
    const combined = stored.filter((e) => String(e.message).startsWith('(combined from similar events): '));
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ count: 2, message: '(combined from similar events): attempt 11' });
  });

  it('stops after a burst of 25 events per object and refills one every 5 minutes', async () => {
    const clock = new FakeClock();
    const rec = recorder({ clock });
    for (let i = 0; i < 30; i++) rec.event(claim, 'Normal', `Reason${i}`, 'spam');
    await rec.flush();
    expect(events('team-a')).toHaveLength(25);

    rec.event(claim, 'Normal', 'Later', 'still limited');
    await rec.flush();
    expect(events('team-a')).toHaveLength(25);

    clock.advance(300_000);
    rec.event(claim, 'Normal', 'Refilled', 'one more');
    rec.event(claim, 'Normal', 'Refilled2', 'no more');
    await rec.flush();
    expect(events('team-a').map((e) => e.reason)).toContain('Refilled');
    expect(events('team-a')).toHaveLength(26);

    // Another object has its own budget.
    rec.event({ ...claim, name: 'other', uid: 'u-2' }, 'Normal', 'Provisioning', 'fine');
    await rec.flush();
    expect(events('team-a')).toHaveLength(27);
  });

  it('counts suppressed repeats in the next patch that passes the spam filter', async () => {
    const clock = new FakeClock();
    const rec = recorder({ clock });
    for (let i = 0; i < 30; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', 'same');
    await rec.flush();
    expect(events('team-a')).toHaveLength(1);
    expect(events('team-a')[0]!.count).toBe(25);
    clock.advance(300_000);
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'same');
    await rec.flush();
    expect(events('team-a')[0]!.count).toBe(31);
  });
});

describe('EventRecorder when the API server is down', () => {
  it('never throws, gives up after maxTries and flushes', async () => {
    const down = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    const url = down.url;
    await down.stop();
    const logger = captureLogger();
    const rec = new EventRecorder({
      kubeConfig: kubeConfigFor(url),
      source: { component: 'test' },
      logger,
      maxTries: 3,
      retryDelayMs: 1,
    });
    expect(() => rec.event(claim, 'Normal', 'Provisioning', 'nobody listens')).not.toThrow();
    expect(() => rec.event(claim, 'Bogus' as 'Normal', 'Provisioning', 'bad type')).not.toThrow();
    await rec.flush();
    expect(logger.lines.filter((l) => l.message.startsWith('Unable to write event, may retry'))).toHaveLength(3);
    expect(logger.lines.some((l) => l.message === 'Unable to write event, retry limit exceeded')).toBe(true);
    expect(logger.lines.some((l) => l.message.startsWith('Unsupported event type'))).toBe(true);

    rec.shutDown();
    expect(() => rec.event(claim, 'Normal', 'Provisioning', 'after shut down')).not.toThrow();
    await rec.flush();
    expect(logger.lines.some((l) => l.message.startsWith('Event recorder is shut down'))).toBe(true);
  });

  it('shutDown cancels retry sleeps', async () => {
    const clock = new FakeClock();
    const logger = captureLogger();
    const rec = new EventRecorder({
      kubeConfig: kubeConfigFor('http://127.0.0.1:1'),
      source: { component: 'test' },
      logger,
      clock,
    });
    rec.event(claim, 'Normal', 'Provisioning', 'waits for a retry');
    await vi.waitFor(() => expect(logger.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true));
    rec.shutDown();
    await rec.flush();
    expect(logger.lines.some((l) => l.message === 'Unable to write event, recorder is shut down')).toBe(true);
  });
});
