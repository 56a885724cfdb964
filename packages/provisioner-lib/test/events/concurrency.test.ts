import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServer, type KubeObject, type Testkit } from '@kprov/testkit';
import { WAIT } from '@kprov/testkit/vitest';
import { EventRecorder, type EventRecorderOptions, type EventsApi } from '../../src/events/recorder.js';
import type { ObjectReference } from '../../src/events/types.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { captureLogger } from './capture-logger.js';

type CreateParam = Parameters<EventsApi['createNamespacedEvent']>[0];
type PatchParam = Parameters<EventsApi['patchNamespacedEvent']>[0];

/** What a {@link countingClient} saw. */
interface Counts {
  creates: number;
  patches: number;
  inFlight: number;
  maxInFlight: number;
  /** Most requests in flight at once for one Event name. */
  maxPerEvent: number;
  /** Requests in the order they were sent: `create <name>` or `patch <name>`. */
  log: string[];
}

/** Wraps `inner`, counting requests in flight overall and per Event name. */
function countingClient(inner: EventsApi): { client: EventsApi; counts: Counts } {
  const counts: Counts = { creates: 0, patches: 0, inFlight: 0, maxInFlight: 0, maxPerEvent: 0, log: [] };
  const perEvent = new Map<string, number>();
  const track = async <T>(name: string, call: () => Promise<T>): Promise<T> => {
    counts.inFlight++;
    counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
    const n = (perEvent.get(name) ?? 0) + 1;
    perEvent.set(name, n);
    counts.maxPerEvent = Math.max(counts.maxPerEvent, n);
    try {
      return await call();
    } finally {
      counts.inFlight--;
      perEvent.set(name, (perEvent.get(name) ?? 1) - 1);
    }
  };
  const client = {
    createNamespacedEvent: (param: CreateParam, options?: unknown) => {
      const name = param.body.metadata?.name ?? '';
      counts.creates++;
      counts.log.push(`create ${name}`);
      return track(name, () => inner.createNamespacedEvent(param, options as never));
    },
    patchNamespacedEvent: (param: PatchParam, options?: unknown) => {
      counts.patches++;
      counts.log.push(`patch ${param.name}`);
      return track(param.name, () => inner.patchNamespacedEvent(param, options as never));
    },
  } as unknown as EventsApi;
  return { client, counts };
}

let kit: Testkit;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
});

afterAll(async () => {
  await kit.stop();
});

beforeEach(() => {
  kit.faults.clear();
  for (const ev of kit.store.list('events', 'team-a')) kit.store.delete('events', 'team-a', ev.metadata.name!);
});

function claimRef(name: string): ObjectReference {
  return { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'team-a', name, uid: `uid-${name}` };
}

function events(): KubeObject[] {
  return kit.store.list('events', 'team-a');
}

function involvedName(e: KubeObject): string {
  return (e.involvedObject as ObjectReference).name;
}

function recorder(client: EventsApi, options: Partial<EventRecorderOptions> = {}): EventRecorder {
  return new EventRecorder({
    client,
    source: { component: 'example.com/hostpath_node-1' },
    retryDelayMs: 1,
    random: () => 0,
    ...options,
  });
}

const dropped = 'Too many queued events, event dropped';

describe('EventRecorder concurrency against a slow API server', () => {
  it('writes 200 events for 200 objects with at most 8 writes in flight and drops none', async () => {
    kit.faults.add({ resource: 'events', action: { type: 'latency', ms: 50 } });
    const { client, counts } = countingClient(kit.kubeConfig.makeApiClient(CoreV1Api));
    const logger = captureLogger();
    const rec = recorder(client, { logger });
    for (let i = 0; i < 200; i++)
      rec.event(claimRef(`claim-${i}`), 'Normal', 'Provisioning', `provisioning claim-${i}`);
    await rec.flush();

    expect(logger.lines.filter((l) => l.message === dropped)).toHaveLength(0);
    expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    const stored = events();
    expect(stored).toHaveLength(200);
    expect(new Set(stored.map((e) => involvedName(e))).size).toBe(200);
    expect(counts.creates).toBe(200);
    expect(counts.maxInFlight).toBe(8); // the default: all 200 were queued at once, so every slot was used
    expect(counts.inFlight).toBe(0);
  });

  it('keeps to the concurrency option', async () => {
    kit.faults.add({ resource: 'events', action: { type: 'latency', ms: 20 } });
    const { client, counts } = countingClient(kit.kubeConfig.makeApiClient(CoreV1Api));
    const rec = recorder(client, { concurrency: 3 });
    for (let i = 0; i < 30; i++) rec.event(claimRef(`claim-${i}`), 'Normal', 'Provisioning', 'provisioning');
    await rec.flush();
    expect(events()).toHaveLength(30);
    expect(counts.maxInFlight).toBe(3);
  });

  it('writes repeats of one event in order, as one Event with the right count, among concurrent writes', async () => {
    kit.faults.add({ resource: 'events', action: { type: 'latency', ms: 20 } });
    const { client, counts } = countingClient(kit.kubeConfig.makeApiClient(CoreV1Api));
    const logger = captureLogger();
    const rec = recorder(client, { logger });
    // 20 claims, each failing 5 times in a row with the same message, then succeeding: the repeats of one claim
    // are next to each other in the queue, and would be written at the same time if nothing kept them apart.
    for (let i = 0; i < 20; i++) {
      for (let attempt = 0; attempt < 5; attempt++)
        rec.event(claimRef(`claim-${i}`), 'Warning', 'ProvisioningFailed', 'disk full');
      rec.event(claimRef(`claim-${i}`), 'Normal', 'ProvisioningSucceeded', `provisioned claim-${i}`);
    }
    await rec.flush();

    expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expect(counts.maxInFlight).toBe(8);
    expect(counts.maxPerEvent).toBe(1); // a create and the patches of the same Event never overlapped
    // Every patch found its Event: one create per Event, no fallback creates after a 404.
    expect(counts.creates).toBe(40);
    expect(counts.patches).toBe(80);
    for (const [i, line] of counts.log.entries()) {
      if (line.startsWith('patch ')) expect(counts.log.slice(0, i)).toContain(`create ${line.slice('patch '.length)}`);
    }

    const stored = events();
    expect(stored).toHaveLength(40);
    for (let i = 0; i < 20; i++) {
      const forClaim = stored.filter((e) => involvedName(e) === `claim-${i}`);
      expect(forClaim.map((e) => [e.reason, e.count]).sort()).toEqual([
        ['ProvisioningFailed', 5],
        ['ProvisioningSucceeded', 1],
      ]);
    }
  });

  it('combines similar events of one object correctly while other objects are written concurrently', async () => {
    kit.faults.add({ resource: 'events', action: { type: 'latency', ms: 10 } });
    const { client, counts } = countingClient(kit.kubeConfig.makeApiClient(CoreV1Api));
    const rec = recorder(client);
    for (let attempt = 1; attempt <= 12; attempt++) {
      rec.event(claimRef('flaky'), 'Warning', 'ProvisioningFailed', `attempt ${attempt}`);
      for (let i = 0; i < 3; i++)
        rec.event(claimRef(`other-${attempt}-${i}`), 'Normal', 'Provisioning', 'provisioning');
    }
    await rec.flush();
    expect(counts.maxPerEvent).toBe(1);
    const flaky = events().filter((e) => involvedName(e) === 'flaky');
    expect(flaky).toHaveLength(10);
    const combined = flaky.filter((e) => String(e.message).startsWith('(combined from similar events): '));
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ count: 3, message: '(combined from similar events): attempt 12' });
    expect(events()).toHaveLength(10 + 36);
  });
});

describe('EventRecorder retries with concurrency', () => {
  it('lets other events proceed while one sleeps before a retry, even with a single write slot', async () => {
    const clock = new FakeClock();
    const logger = captureLogger();
    const inner = kit.kubeConfig.makeApiClient(CoreV1Api);
    let failing = true;
    const written: string[] = [];
    const client: EventsApi = {
      createNamespacedEvent: async (param: CreateParam) => {
        if (failing && param.body.involvedObject.name === 'broken') throw new Error('connection reset');
        const created = await inner.createNamespacedEvent(param);
        written.push(`${param.body.involvedObject.name}: ${param.body.message}`);
        return created;
      },
      patchNamespacedEvent: (param: PatchParam) => inner.patchNamespacedEvent(param),
    };
    const rec = new EventRecorder({
      client,
      source: { component: 'test' },
      logger,
      clock,
      concurrency: 1,
      random: () => 0.5,
    });

    rec.event(claimRef('broken'), 'Warning', 'ProvisioningFailed', 'first');
    await vi.waitFor(
      () => expect(logger.lines.some((l) => l.message.startsWith('Unable to write event, may retry'))).toBe(true),
      WAIT,
    );
    // The failed event now sleeps 5 s (half of retryDelayMs) on the fake clock, which does not move by itself.
    rec.event(claimRef('broken'), 'Warning', 'ProvisioningFailed', 'second'); // same group: waits behind it
    for (let i = 0; i < 20; i++) rec.event(claimRef(`claim-${i}`), 'Normal', 'Provisioning', 'provisioning');
    await vi.waitFor(() => expect(events()).toHaveLength(20), WAIT);
    expect(written.filter((w) => w.startsWith('broken'))).toEqual([]);

    failing = false;
    clock.advance(5_000);
    await rec.flush();
    expect(written.filter((w) => w.startsWith('broken'))).toEqual(['broken: first', 'broken: second']);
    expect(written.slice(0, 20).every((w) => w.startsWith('claim-'))).toBe(true);
    expect(events()).toHaveLength(22);
  });

  it('counts events waiting to retry against queueSize', async () => {
    const clock = new FakeClock();
    const logger = captureLogger();
    const client = {
      createNamespacedEvent: () => Promise.reject(new Error('connection refused')),
      patchNamespacedEvent: () => Promise.reject(new Error('unexpected patch')),
    } as unknown as EventsApi;
    const rec = new EventRecorder({
      client,
      source: { component: 'test' },
      logger,
      clock,
      queueSize: 1,
      maxTries: 2,
      random: () => 0,
    });
    const mayRetry = (): number =>
      logger.lines.filter((l) => l.message.startsWith('Unable to write event, may retry')).length;
    const drops = (): number => logger.lines.filter((l) => l.message === dropped).length;
    rec.event(claimRef('claim-0'), 'Normal', 'Provisioning', 'provisioning'); // written at once: not queued
    rec.event(claimRef('claim-1'), 'Normal', 'Provisioning', 'provisioning'); // written at once too (concurrency 8)
    await vi.waitFor(() => expect(mayRetry()).toBe(2), WAIT);
    // Both now sleep before their retry, and so count against the queue: new events are dropped.
    rec.event(claimRef('claim-2'), 'Normal', 'Provisioning', 'provisioning');
    expect(drops()).toBe(1);
    clock.advance(0); // the retries (maxTries 2) fail too, and the events are given up
    await rec.flush();
    expect(logger.lines.filter((l) => l.message === 'Unable to write event, retry limit exceeded')).toHaveLength(2);
    rec.event(claimRef('claim-3'), 'Normal', 'Provisioning', 'provisioning');
    expect(drops()).toBe(1);
    rec.shutDown();
    await rec.flush();
  });
});
