/**
 * The EventRecorder against an API server, on both tiers: what the server stores (an Event created with count 1,
 * patched on a repeat, a new one per message, combined after 10 messages, the spam filter's limit, an Event
 * created again when the one to patch is gone), and what happens while the server is down.
 */
import { kubeConfigFor, type Cluster } from '@kprov/testkit';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { EventRecorder, type EventRecorderOptions } from '../../src/events/recorder.js';
import type { ObjectReference } from '../../src/events/types.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { captureLogger } from './capture-logger.js';

const SOURCE = 'example.com/hostpath_node-1';

/** A settable wall clock in nanoseconds, starting at 2025-01-01T00:00:00Z. */
function wallClock(): { now: () => bigint; advanceSeconds: (s: number) => void } {
  let ns = BigInt(Date.UTC(2025, 0, 1)) * 1_000_000n;
  return { now: () => ns, advanceSeconds: (s) => (ns += BigInt(s) * 1_000_000_000n) };
}

const claim: ObjectReference = {
  kind: 'PersistentVolumeClaim',
  apiVersion: 'v1',
  namespace: 'team-a',
  name: 'data',
  uid: '5c1e7d4a-0000-4000-8000-000000000001',
  resourceVersion: '42',
};

describeTiers('EventRecorder against the API server', (tier) => {
  let c: Cluster;
  let core: CoreV1Api;
  const start = async (): Promise<void> => {
    c = await tier.start({
      nodes: [],
      namespaces: ['team-a'],
      testkit: { binder: false, scheduler: false, kubelet: false },
    });
    core = c.kubeConfig.makeApiClient(CoreV1Api);
  };

  function recorder(options: Partial<EventRecorderOptions> = {}): EventRecorder {
    return new EventRecorder({
      kubeConfig: c.kubeConfig,
      source: { component: SOURCE },
      retryDelayMs: 1,
      random: () => 0,
      ...options,
    });
  }

  /** The Events this recorder wrote to `namespace`, as the API server stores them. */
  async function events(namespace: string): Promise<CoreV1Event[]> {
    return (await core.listNamespacedEvent({ namespace })).items.filter((e) => e.source?.component === SOURCE);
  }

  it('creates an Event with count 1 for the first occurrence', async () => {
    await start();
    const wall = wallClock();
    const rec = recorder({ nowNanos: wall.now });
    rec.event(claim, 'Normal', 'Provisioning', 'External provisioner is provisioning volume for claim "team-a/data"');
    await rec.flush();

    const stored = await events('team-a');
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
      firstTimestamp: new Date('2025-01-01T00:00:00Z'),
      lastTimestamp: new Date('2025-01-01T00:00:00Z'),
    });
    expect(ev.eventTime ?? null).toBeNull();
  });

  it('patches count and lastTimestamp of the same Event on a repeat', async () => {
    await start();
    const wall = wallClock();
    const rec = recorder({ nowNanos: wall.now });
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'disk full');
    await rec.flush();
    const first = (await events('team-a'))[0]!;

    wall.advanceSeconds(5);
    rec.event({ ...claim, resourceVersion: '43' }, 'Warning', 'ProvisioningFailed', 'disk full');
    wall.advanceSeconds(5);
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'disk full');
    await rec.flush();

    const stored = await events('team-a');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.metadata.name).toBe(first.metadata.name);
    expect(stored[0]).toMatchObject({
      count: 3,
      firstTimestamp: new Date('2025-01-01T00:00:00Z'),
      lastTimestamp: new Date('2025-01-01T00:00:10Z'),
      message: 'disk full',
    });
  });

  it('creates a new Event when the message differs', async () => {
    await start();
    const rec = recorder();
    rec.event(claim, 'Normal', 'Provisioning', 'one');
    rec.event(claim, 'Normal', 'ProvisioningSucceeded', 'Successfully provisioned volume pvc-1');
    await rec.flush();
    expect((await events('team-a')).map((e) => e.reason).sort()).toEqual(['Provisioning', 'ProvisioningSucceeded']);
  });

  it('puts Events about a cluster-scoped PersistentVolume in namespace default', async () => {
    await start();
    const rec = recorder();
    rec.event(
      { kind: 'PersistentVolume', apiVersion: 'v1', name: 'pvc-123', uid: 'u-1' },
      'Warning',
      'VolumeFailedDelete',
      'boom',
    );
    await rec.flush();
    const stored = await events('default');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.metadata.name).toMatch(/^pvc-123\.[0-9a-f]{16}$/);
    expect(stored[0]!.involvedObject).toEqual({
      kind: 'PersistentVolume',
      apiVersion: 'v1',
      name: 'pvc-123',
      uid: 'u-1',
    });
  });

  // Testkit only: a real API server does not answer 500 on demand. (On both tiers, a recorder retries while the
  // server is down: see the last test.)
  it.skipIf(tier.name === 'real')('retries a write answered 500 and the Event still appears', async () => {
    await start();
    c.testkit?.faults.add({ resource: 'events', verb: 'create', action: { type: 'error', code: 500 }, count: 1 });
    const logger = captureLogger();
    const rec = recorder({ logger });
    rec.event(claim, 'Normal', 'Provisioning', 'retried');
    await vi.waitFor(async () => expect(await events('team-a')).toHaveLength(1), WAIT);
    await rec.flush();
    expect((await events('team-a'))[0]).toMatchObject({ count: 1, message: 'retried' });
    expect(logger.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true);
  });

  it('creates the Event again when the one it would patch is gone', async () => {
    await start();
    const rec = recorder();
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'again');
    await rec.flush();
    const name = (await events('team-a'))[0]!.metadata.name!;
    await core.deleteNamespacedEvent({ namespace: 'team-a', name });
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'again');
    await rec.flush();
    const stored = await events('team-a');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ metadata: { name }, count: 2 });
  });

  it('combines similar events after 10 distinct messages', async () => {
    await start();
    const rec = recorder();
    for (let i = 1; i <= 11; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', `attempt ${i}`);
    await rec.flush();
    const stored = await events('team-a');
    expect(stored).toHaveLength(10);
    const combined = stored.filter((e) => String(e.message).startsWith('(combined from similar events): '));
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ count: 2, message: '(combined from similar events): attempt 11' });
  });

  it('counts a repeated message once towards the 10 distinct messages', async () => {
    await start();
    const rec = recorder();
    for (let i = 0; i < 3; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', 'attempt 1');
    for (let i = 2; i <= 9; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', `attempt ${i}`);
    await rec.flush();
    let stored = await events('team-a');
    expect(stored).toHaveLength(9);
    expect(stored.find((e) => e.message === 'attempt 1')).toMatchObject({ count: 3 });

    rec.event(claim, 'Warning', 'ProvisioningFailed', 'attempt 10');
    await rec.flush();
    stored = await events('team-a');
    expect(stored).toHaveLength(10);
    expect(stored.filter((e) => e.message === '(combined from similar events): attempt 10')).toHaveLength(1);
  });

  it('keeps apart the Events of objects whose name and uid run together into the same text', async () => {
    await start();
    const rec = recorder();
    // client-go joins the key's fields with no separator: these two would patch one Event there.
    rec.event({ ...claim, name: 'data-1', uid: 'abc' }, 'Normal', 'Provisioning', 'same message');
    rec.event({ ...claim, name: 'data-', uid: '1abc' }, 'Normal', 'Provisioning', 'same message');
    rec.event({ ...claim, name: 'data-', uid: '1abc' }, 'Normal', 'Provisioning', 'same message');
    await rec.flush();
    const stored = await events('team-a');
    expect(stored.map((e) => [e.involvedObject.name, e.involvedObject.uid, e.count]).sort()).toEqual([
      ['data-', '1abc', 2],
      ['data-1', 'abc', 1],
    ]);
  });

  it('stops after a burst of 25 events per object and refills one every 5 minutes', async () => {
    await start();
    const clock = new FakeClock();
    const rec = recorder({ clock });
    for (let i = 0; i < 30; i++) rec.event(claim, 'Normal', `Reason${i}`, 'spam');
    await rec.flush();
    expect(await events('team-a')).toHaveLength(25);

    rec.event(claim, 'Normal', 'Later', 'still limited');
    await rec.flush();
    expect(await events('team-a')).toHaveLength(25);

    clock.advance(300_000);
    rec.event(claim, 'Normal', 'Refilled', 'one more');
    rec.event(claim, 'Normal', 'Refilled2', 'no more');
    await rec.flush();
    expect((await events('team-a')).map((e) => e.reason)).toContain('Refilled');
    expect(await events('team-a')).toHaveLength(26);

    // Another object has its own budget.
    rec.event({ ...claim, name: 'other', uid: 'u-2' }, 'Normal', 'Provisioning', 'fine');
    await rec.flush();
    expect(await events('team-a')).toHaveLength(27);
  });

  it('counts suppressed repeats in the next patch that passes the spam filter', async () => {
    await start();
    const clock = new FakeClock();
    const rec = recorder({ clock });
    for (let i = 0; i < 30; i++) rec.event(claim, 'Warning', 'ProvisioningFailed', 'same');
    await rec.flush();
    expect(await events('team-a')).toHaveLength(1);
    expect((await events('team-a'))[0]!.count).toBe(25);
    clock.advance(300_000);
    rec.event(claim, 'Warning', 'ProvisioningFailed', 'same');
    await rec.flush();
    expect((await events('team-a'))[0]!.count).toBe(31);
  });

  it('never throws while the API server is down, gives up after maxTries, and writes the Event once the server is back', async () => {
    await start();
    await c.stopApiServer();
    const logger = captureLogger();
    const rec = recorder({ logger, maxTries: 3 });
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

    // A recorder with tries left keeps retrying, and its Event appears once the server is back.
    const patientLog = captureLogger();
    const patient = recorder({ logger: patientLog, maxTries: 1000, retryDelayMs: 50 });
    patient.event(claim, 'Warning', 'ProvisioningFailed', 'written once the server is back');
    await vi.waitFor(
      () => expect(patientLog.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true),
      WAIT,
    );
    await c.startApiServer();
    await patient.flush();
    expect((await events('team-a')).map((e) => [e.reason, e.message, e.count])).toEqual([
      ['ProvisioningFailed', 'written once the server is back', 1],
    ]);
  });
});

describe('EventRecorder without a server', () => {
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
    await vi.waitFor(
      () => expect(logger.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true),
      WAIT,
    );
    rec.shutDown();
    await rec.flush();
    expect(logger.lines.some((l) => l.message === 'Unable to write event, recorder is shut down')).toBe(true);
  });
});
