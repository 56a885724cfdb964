import { CoordinationV1Api, V1MicroTime, type V1ObjectReference } from '@kubernetes/client-node';
import type { Testkit } from '@kprov/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedAgent } from '../../src/client/agent.js';
import { makeLeaseClient } from '../../src/leaderelection/lease-client.js';
import { isConflict } from '../../src/client/api-errors.js';
import { LeaseLock, type LeaderElectionRecord } from '../../src/leaderelection/lease-lock.js';
import { CountingAgent } from '../client/counting-agent.js';
import { MICRO_TIME, rawLease, startKit, uniqueName } from './helpers.js';

let kit: Testkit;
beforeAll(async () => {
  kit = await startKit();
});
afterAll(() => kit.stop());

function record(holder: string, transitions = 0): LeaderElectionRecord {
  const now = new V1MicroTime();
  return {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitions,
  };
}

describe('LeaseLock', () => {
  it('reads nothing when the Lease does not exist, and refuses to update before get or create', async () => {
    const lock = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      name: uniqueName('absent'),
      identity: 'a',
    });
    try {
      expect(await lock.get()).toBeUndefined();
      await expect(lock.update(record('a'))).rejects.toThrow('lease not initialized, call get or create first');
    } finally {
      await lock.close();
    }
  });

  it('creates the Lease with six-digit MicroTimes and its labels, and reads the record back', async () => {
    const name = uniqueName('create');
    const lock = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      name,
      identity: 'a',
      labels: { app: 'p' },
    });
    try {
      const written = record('a', 3);
      await lock.create(written);
      const raw = await rawLease(kit, 'default', name);
      expect(raw.metadata.labels).toEqual({ app: 'p' });
      expect(raw.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 3 });
      expect(raw.spec.acquireTime).toMatch(MICRO_TIME);
      expect(raw.spec.renewTime).toMatch(MICRO_TIME);

      const observed = await lock.get();
      expect(observed?.record).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 3 });
      expect(observed?.record.renewTime?.getTime()).toBe(written.renewTime?.getTime());
      expect(observed?.raw).toContain(raw.spec.renewTime);
      expect((await lock.get())?.raw).toBe(observed?.raw);
    } finally {
      await lock.close();
    }
  });

  it('updates with optimistic concurrency: a stale resourceVersion is a Conflict', async () => {
    const name = uniqueName('conflict');
    const a = new LeaseLock({ kubeConfig: kit.kubeConfig, namespace: 'default', name, identity: 'a' });
    const b = new LeaseLock({ kubeConfig: kit.kubeConfig, namespace: 'default', name, identity: 'b' });
    try {
      await a.create(record('a'));
      const before = await b.get();
      await b.update(record('b', 1));
      const error = await a.update(record('a')).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isConflict(error)).toBe(true);
      const after = await a.get();
      expect(after?.record.holderIdentity).toBe('b');
      expect(after?.raw).not.toBe(before?.raw);
      await a.update(record('a', 2));
      expect((await rawLease(kit, 'default', name)).spec.holderIdentity).toBe('a');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('merges its labels into existing ones on update', async () => {
    const name = uniqueName('labels');
    const plain = new LeaseLock({ kubeConfig: kit.kubeConfig, namespace: 'default', name, identity: 'a' });
    const labelled = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'default',
      name,
      identity: 'a',
      labels: { mine: 'yes' },
    });
    try {
      await kit.kubeConfig.makeApiClient(CoordinationV1Api).createNamespacedLease({
        namespace: 'default',
        body: { metadata: { name, labels: { theirs: 'kept' } }, spec: {} },
      });
      await labelled.get();
      await labelled.update(record('a'));
      expect((await rawLease(kit, 'default', name)).metadata.labels).toEqual({ theirs: 'kept', mine: 'yes' });
      await plain.get();
      await plain.update(record('a'));
      expect((await rawLease(kit, 'default', name)).metadata.labels).toEqual({ theirs: 'kept', mine: 'yes' });
    } finally {
      await plain.close();
      await labelled.close();
    }
  });

  it('describes itself as namespace/name and records LeaderElection events about the Lease', async () => {
    const name = uniqueName('events');
    const seen: [string, string, V1ObjectReference][] = [];
    const lock = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'kube-system',
      name,
      identity: 'me_1',
      recordEvent: (reason, message, subject) => {
        seen.push([reason, message, subject]);
      },
    });
    const throwing = new LeaseLock({
      kubeConfig: kit.kubeConfig,
      namespace: 'kube-system',
      name,
      identity: 'x',
      recordEvent: () => {
        throw new Error('recorder broke');
      },
    });
    try {
      expect(lock.describe()).toBe(`kube-system/${name}`);
      await lock.create(record('me_1'));
      lock.recordEvent('became leader');
      lock.recordEvent('stopped leading');
      expect(seen.map(([reason, message]) => `${reason}: ${message}`)).toEqual([
        'LeaderElection: me_1 became leader',
        'LeaderElection: me_1 stopped leading',
      ]);
      expect(seen[0]?.[2]).toMatchObject({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: 'kube-system',
        name,
      });
      expect(seen[0]?.[2].uid).toEqual(expect.any(String));
      expect(() => throwing.recordEvent('became leader')).not.toThrow();
    } finally {
      await lock.close();
      await throwing.close();
    }
  });

  it('needs exactly one of kubeConfig and client, and a non-empty identity', () => {
    const client = kit.kubeConfig.makeApiClient(CoordinationV1Api);
    expect(() => new LeaseLock({ namespace: 'default', name: 'n', identity: 'a' })).toThrow(
      'exactly one of kubeConfig and client',
    );
    expect(
      () => new LeaseLock({ kubeConfig: kit.kubeConfig, client, namespace: 'default', name: 'n', identity: 'a' }),
    ).toThrow('exactly one of kubeConfig and client');
    expect(() => new LeaseLock({ client, namespace: 'default', name: 'n', identity: ' ' })).toThrow(
      'non-empty identity',
    );
  });
});

describe('makeLeaseClient', () => {
  it('sends lease requests through its own agent, not the shared one', async () => {
    const agent = new CountingAgent();
    const client = makeLeaseClient(kit.kubeConfig, { agent });
    const lock = new LeaseLock({ client: client.api, namespace: 'default', name: uniqueName('agent'), identity: 'a' });
    try {
      await lock.get();
      await lock.create(record('a'));
      expect(agent.dispatched).toBe(2);
      await client.close(); // does not close an agent it was given
      await lock.get();
      expect(agent.dispatched).toBe(3);
    } finally {
      await agent.close();
    }

    const own = makeLeaseClient(kit.kubeConfig);
    const other = makeLeaseClient(kit.kubeConfig);
    try {
      expect(own.agent).not.toBe(sharedAgent(kit.kubeConfig));
      expect(own.agent).not.toBe(other.agent);
      const lease = await own.api.createNamespacedLease({
        namespace: 'default',
        body: { metadata: { name: uniqueName('own') }, spec: {} },
      });
      expect(lease.metadata?.name).toMatch(/^own-/);
    } finally {
      await own.close();
      await other.close();
    }
  });
});
