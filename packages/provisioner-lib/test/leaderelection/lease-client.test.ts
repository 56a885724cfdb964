/**
 * The lease client (`makeLeaseClient`) against client-node's generated `CoordinationV1Api`: the requests it sends
 * (recorded by a proxy in front of the testkit), with the MicroTimes byte for byte, and what its calls give back and
 * throw on both tiers (on the real tier, kube-apiserver parses the MicroTimes it writes).
 */
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import { ApiException, CoordinationV1Api, KubeConfig, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withSignal } from '../../src/client/agent.js';
import { apiStatus, isAlreadyExists, isConflict, isNotFound } from '../../src/client/api-errors.js';
import { makeLeaseClient, type LeaseApi, type LeaseClient } from '../../src/leaderelection/lease-client.js';
import { LeaseLock, recordToLeaseSpec, type LeaderElectionRecord } from '../../src/leaderelection/lease-lock.js';
import {
  failure,
  sent,
  startRecordingProxy,
  type RecordedRequest,
  type RecordingProxy,
} from '../client/recording-proxy.js';
import { MICRO_TIME, uniqueName } from './helpers.js';

function record(holder: string, transitions = 0): LeaderElectionRecord {
  // A time with a millisecond part, so the six-digit form shows.
  const now = new V1MicroTime(Math.floor(Date.now() / 1000) * 1000 + 123);
  return {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitions,
  };
}

/** The Lease body a `LeaseLock` creates. */
function leaseBody(name: string, holder: string): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'default', labels: { app: 'lease-client-test' } },
    spec: recordToLeaseSpec(record(holder)),
  };
}

describe("makeLeaseClient sends what client-node's CoordinationV1Api sends", () => {
  let kit: Testkit;
  let proxy: RecordingProxy;
  let kc: KubeConfig;
  let reference: CoordinationV1Api;
  let lease: LeaseClient;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    proxy = await startRecordingProxy(kit.url);
    kc = kubeConfigFor(proxy.url);
    reference = kc.makeApiClient(CoordinationV1Api);
    lease = makeLeaseClient(kc);
  });

  afterEach(async () => {
    await lease.close();
    await proxy.close();
    await kit.stop();
  });

  /** The requests `call` sends through client-node's `CoordinationV1Api` and through the lease client. */
  async function requestsOf(call: (api: LeaseApi) => Promise<unknown>): Promise<[RecordedRequest, RecordedRequest]> {
    const start = proxy.requests.length;
    await call(reference).catch(() => undefined);
    await call(lease.api).catch(() => undefined);
    expect(proxy.requests).toHaveLength(start + 2);
    const [generated, lean] = proxy.requests.slice(start) as [RecordedRequest, RecordedRequest];
    return [generated, lean];
  }

  it('creates, reads and replaces a Lease with the same requests, MicroTimes in six digits as client-node writes them', async () => {
    const body = leaseBody('a', 'me');
    const [generatedCreate, leanCreate] = await requestsOf((api) =>
      api.createNamespacedLease({ namespace: 'default', body }),
    );
    expect(sent(leanCreate)).toEqual(sent(generatedCreate));
    expect(leanCreate).toMatchObject({
      method: 'POST',
      path: '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      contentType: 'application/json',
    });
    const spec = (JSON.parse(leanCreate.body) as V1Lease & { spec: { renewTime: string; acquireTime: string } }).spec;
    expect(spec.renewTime).toMatch(MICRO_TIME);
    expect(spec.renewTime).toMatch(/\.123000Z$/);
    expect(spec.acquireTime).toBe(spec.renewTime);

    const [generatedRead, leanRead] = await requestsOf((api) =>
      api.readNamespacedLease(
        { name: 'a', namespace: 'default', pretty: 'false' },
        withSignal(new AbortController().signal),
      ),
    );
    expect(sent(leanRead)).toEqual(sent(generatedRead));
    expect(leanRead).toMatchObject({ method: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/default/leases/a' });

    // As LeaseLock.update writes it: the Lease it read (times as received), the new record's spec.
    const current = await lease.api.readNamespacedLease({ name: 'a', namespace: 'default' });
    const replacement: V1Lease = { ...current, spec: recordToLeaseSpec(record('you', 1)) };
    const [generatedReplace, leanReplace] = await requestsOf((api) =>
      api.replaceNamespacedLease({ name: 'a', namespace: 'default', body: replacement, fieldManager: 'kprov-test' }),
    );
    expect(sent(leanReplace)).toEqual(sent(generatedReplace));
    expect(leanReplace).toMatchObject({
      method: 'PUT',
      path: '/apis/coordination.k8s.io/v1/namespaces/default/leases/a',
      query: [['fieldManager', 'kprov-test']],
    });
  });

  it('reads a Lease as client-node gives it: Dates for the timestamps, the MicroTimes as the strings received', async () => {
    await reference.createNamespacedLease({ namespace: 'default', body: leaseBody('a', 'me') });
    const read = await lease.api.readNamespacedLease({ name: 'a', namespace: 'default' });
    expect(read).toEqual(await reference.readNamespacedLease({ name: 'a', namespace: 'default' }));
    expect(read.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(typeof read.spec?.renewTime).toBe('string');
    expect(read.spec?.renewTime as unknown as string).toMatch(/\.123000Z$/);
  });
});

describe('makeLeaseClient', () => {
  it('needs a current cluster', () => {
    expect(() => makeLeaseClient(new KubeConfig())).toThrow('makeLeaseClient: the KubeConfig has no current cluster');
  });
});

describeTiers('The lease client against the API server', (tier) => {
  let kc: KubeConfig;
  let reference: CoordinationV1Api;
  let lease: LeaseClient;

  beforeEach(async () => {
    kc = (await tier.start({ nodes: [] })).kubeConfig;
    reference = kc.makeApiClient(CoordinationV1Api);
    lease = makeLeaseClient(kc);
    tier.defer(() => lease.close());
  });

  it('writes MicroTimes the server takes, and gives the Lease as client-node reads it', async () => {
    const name = uniqueName('lease-client');
    const created = await lease.api.createNamespacedLease({ namespace: 'default', body: leaseBody(name, 'me') });
    expect(created.spec?.renewTime as unknown as string).toMatch(/\.123000Z$/);
    expect(created).toEqual(await reference.readNamespacedLease({ name, namespace: 'default' }));

    const replaced = await lease.api.replaceNamespacedLease({
      name,
      namespace: 'default',
      body: { ...created, spec: recordToLeaseSpec(record('you', 1)) },
    });
    expect(replaced.spec).toMatchObject({ holderIdentity: 'you', leaseTransitions: 1 });
    expect(replaced.spec?.acquireTime as unknown as string).toMatch(MICRO_TIME);
    expect(replaced).toEqual(await lease.api.readNamespacedLease({ name, namespace: 'default' }));
  });

  it("fails as client-node's CoordinationV1Api fails: ApiExceptions with the server's Status", async () => {
    const name = uniqueName('lease-errors');
    const missing = await failure(lease.api.readNamespacedLease({ name, namespace: 'default' }));
    expect(missing).toBeInstanceOf(ApiException);
    expect(isNotFound(missing)).toBe(true);
    expect(apiStatus(missing)).toEqual(
      apiStatus(await failure(reference.readNamespacedLease({ name, namespace: 'default' }))),
    );

    const created = await lease.api.createNamespacedLease({ namespace: 'default', body: leaseBody(name, 'me') });
    const again = await failure(lease.api.createNamespacedLease({ namespace: 'default', body: leaseBody(name, 'me') }));
    expect(again).toBeInstanceOf(ApiException);
    expect(isAlreadyExists(again)).toBe(true);

    await reference.replaceNamespacedLease({
      name,
      namespace: 'default',
      body: { ...created, spec: { holderIdentity: 'other' } },
    });
    const stale = await failure(
      lease.api.replaceNamespacedLease({
        name,
        namespace: 'default',
        body: { ...created, spec: recordToLeaseSpec(record('me')) },
      }),
    );
    expect(stale).toBeInstanceOf(ApiException);
    expect((stale as ApiException<unknown>).code).toBe(409);
    expect(isConflict(stale)).toBe(true);
  });

  it('takes a LeaseLock through create, get and update, and rejects an aborted call with its reason', async () => {
    const name = uniqueName('lease-lock');
    const lock = new LeaseLock({ client: lease.api, namespace: 'default', name, identity: 'me' });
    expect(await lock.get()).toBeUndefined();
    await lock.create(record('me'));
    const observed = await lock.get();
    expect(observed?.record).toMatchObject({ holderIdentity: 'me', leaseDurationSeconds: 15 });
    expect(observed?.raw).toContain('.123000Z');
    await lock.update(record('me', 2));
    expect((await lock.get())?.record.leaseTransitions).toBe(2);

    const abort = new AbortController();
    abort.abort(new Error('caller gave up'));
    await expect(lock.get(abort.signal)).rejects.toThrow('caller gave up');
    await expect(lock.update(record('me', 3), abort.signal)).rejects.toThrow('caller gave up');
    expect((await lock.get())?.record.leaseTransitions).toBe(2);
  });
});
