import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinationV1Api, CoreV1Api, EventsV1Api, V1MicroTime } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { apiError, raw } from '../helpers.js';

let kit: Testkit;
let leases: CoordinationV1Api;
let core: CoreV1Api;
let events: EventsV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  leases = kit.kubeConfig.makeApiClient(CoordinationV1Api);
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
  events = kit.kubeConfig.makeApiClient(EventsV1Api);
});
afterAll(() => kit.stop());

describe('leases', () => {
  it('accepts MicroTime with six fractional digits and serves it back with six', async () => {
    const at = new V1MicroTime('2026-03-04T05:06:07.123Z');
    const created = await leases.createNamespacedLease({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'example.com-p' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: at, renewTime: at },
      },
    });
    expect(created.spec?.holderIdentity).toBe('a');
    const res = await raw(kit, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/example.com-p');
    expect(res.json<{ spec: { renewTime: string } }>().spec.renewTime).toBe('2026-03-04T05:06:07.123000Z');
    const precise = await raw(kit, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', {
      contentType: 'application/json',
      body: JSON.stringify({ metadata: { name: 'precise' }, spec: { renewTime: '2026-03-04T07:06:07.123456+02:00' } }),
    });
    expect(precise.json<{ spec: { renewTime: string } }>().spec.renewTime).toBe('2026-03-04T05:06:07.123456Z');
  });

  it('refuses a plain JavaScript Date (three fractional digits) with 400, as kube-apiserver does', async () => {
    const status = await apiError(
      leases.createNamespacedLease({
        namespace: 'kube-system',
        body: {
          metadata: { name: 'plain-date' },
          spec: { holderIdentity: 'a', renewTime: new Date('2026-03-04T05:06:07.123Z') },
        },
      }),
    );
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(status.message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-03-04T05:06:07.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
  });

  it('updates a lease with optimistic concurrency', async () => {
    const lease = await leases.readNamespacedLease({ name: 'example.com-p', namespace: 'kube-system' });
    const renewed = await leases.replaceNamespacedLease({
      name: 'example.com-p',
      namespace: 'kube-system',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b', renewTime: new V1MicroTime() } },
    });
    expect(renewed.spec?.holderIdentity).toBe('b');
    const stale = await apiError(
      leases.replaceNamespacedLease({
        name: 'example.com-p',
        namespace: 'kube-system',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } },
      }),
    );
    expect(stale.reason).toBe('Conflict');
  });
});

describe('events', () => {
  it('stores core/v1 Events with their timestamps truncated to seconds and finds them by involvedObject', async () => {
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'claim.1' },
        involvedObject: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'claim', uid: 'u1' },
        reason: 'Provisioning',
        message: 'External provisioner is provisioning volume for claim "default/claim"',
        type: 'Normal',
        count: 1,
        firstTimestamp: new Date('2026-03-04T05:06:07.890Z'),
        lastTimestamp: new Date('2026-03-04T05:06:07.890Z'),
        source: { component: 'example.com/p' },
      },
    });
    const found = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=claim,reason=Provisioning',
    });
    expect(found.items).toHaveLength(1);
    const res = await raw(kit, 'GET', '/api/v1/namespaces/default/events/claim.1');
    expect(res.json<{ lastTimestamp: string }>().lastTimestamp).toBe('2026-03-04T05:06:07Z');
  });

  it('stores events.k8s.io/v1 Events, which need a MicroTime eventTime', async () => {
    const created = await events.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'claim.2' },
        eventTime: new V1MicroTime(),
        reportingController: 'example.com/p',
        reportingInstance: 'p-1',
        action: 'Provision',
        reason: 'ProvisioningSucceeded',
        regarding: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'claim' },
        note: 'Successfully provisioned volume pvc-1',
        type: 'Normal',
      },
    });
    expect(created.reason).toBe('ProvisioningSucceeded');
    const list = await events.listNamespacedEvent({ namespace: 'default' });
    expect(list.items.map((e) => e.metadata?.name)).toEqual(['claim.2']);
  });
});
