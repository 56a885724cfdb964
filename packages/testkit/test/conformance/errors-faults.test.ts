import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { apiError, raw } from '../helpers.js';

let kit: Testkit;
let core: CoreV1Api;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
});
afterAll(() => kit.stop());

describe('bad requests', () => {
  it('answers malformed JSON with 400 BadRequest', async () => {
    const res = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: '{"metadata": ',
      contentType: 'application/json',
    });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      message: expect.stringMatching(
        /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: /,
      ) as unknown,
    });
  });

  it('answers an unknown resource with the generic 404', async () => {
    const res = await raw(kit, 'GET', '/api/v1/namespaces/default/widgets');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      details: {},
      code: 404,
    });
  });

  it('answers a mismatched namespace and name with 400', async () => {
    const ns = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ metadata: { name: 'x', namespace: 'kube-system' } }),
      contentType: 'application/json',
    });
    expect(ns.status).toBe(400);
    expect(ns.json()).toMatchObject({
      message: 'the namespace of the provided object does not match the namespace sent on the request',
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'named' } } });
    const name = await raw(kit, 'PUT', '/api/v1/namespaces/default/configmaps/named', {
      body: JSON.stringify({ metadata: { name: 'other' } }),
      contentType: 'application/json',
    });
    expect(name.status).toBe(400);
    expect(name.json()).toMatchObject({
      message: 'the name of the object (other) does not match the name on the URL (named)',
    });
  });

  it('answers an unsupported method with 405', async () => {
    const res = await raw(kit, 'PUT', '/api/v1/namespaces/default/configmaps', {
      body: '{}',
      contentType: 'application/json',
    });
    expect(res.status).toBe(405);
    expect(res.json()).toMatchObject({ reason: 'MethodNotAllowed', code: 405 });
  });
});

describe('fault injection', () => {
  it('fails a share of requests per verb and resource with 500, 503 and 429 with Retry-After', async () => {
    const remove = kit.faults.add({
      verb: 'create',
      resource: 'configmaps',
      action: { type: 'error', code: 429, retryAfterSeconds: 3 },
      count: 1,
    });
    const res = await raw(kit, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ metadata: { name: 'f1' } }),
      contentType: 'application/json',
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.json()).toMatchObject({ reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });
    // The count is used up: the next create goes through.
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'f1' } } });
    remove();
    kit.faults.add({ verb: 'get', resource: 'configmaps', action: { type: 'error', code: 503 }, count: 1 });
    expect((await apiError(core.readNamespacedConfigMap({ name: 'f1', namespace: 'default' }))).code).toBe(503);
    kit.faults.add({ verb: ['list'], action: { type: 'error', code: 500 }, count: 1 });
    expect(await apiError(core.listNamespacedSecret({ namespace: 'default' }))).toMatchObject({
      code: 500,
      reason: 'InternalError',
    });
    expect((await core.listNamespacedSecret({ namespace: 'default' })).items).toEqual([]);
  });

  it('hits about the given rate of requests', async () => {
    kit.faults.clear();
    let n = 0;
    kit.faults.random = () => (n++ % 5) / 5;
    kit.faults.add({ verb: 'get', resource: 'namespaces', action: { type: 'error', code: 500 }, rate: 0.2 });
    let failed = 0;
    for (let i = 0; i < 20; i++) {
      const res = await raw(kit, 'GET', '/api/v1/namespaces/default');
      if (res.status === 500) failed += 1;
    }
    expect(failed).toBe(4);
    kit.faults.clear();
    kit.faults.random = Math.random;
  });

  it('answers 403 Forbidden as RBAC would', async () => {
    kit.faults.add({ verb: 'get', resource: 'configmaps', action: { type: 'error', code: 403 }, count: 1 });
    const status = await apiError(core.readNamespacedConfigMap({ name: 'f1', namespace: 'default' }));
    expect(status).toMatchObject({ code: 403, reason: 'Forbidden', details: { name: 'f1', kind: 'configmaps' } });
    expect(status.message).toBe(
      'configmaps "f1" is forbidden: User "kprov-testkit" cannot get resource "configmaps" in API group ""',
    );
  });

  it('forces a 409 Conflict on writes', async () => {
    kit.faults.add({ verb: 'update', resource: 'configmaps', action: { type: 'error', code: 409 }, count: 1 });
    const cm = await core.readNamespacedConfigMap({ name: 'f1', namespace: 'default' });
    const status = await apiError(core.replaceNamespacedConfigMap({ name: 'f1', namespace: 'default', body: cm }));
    expect(status).toMatchObject({ code: 409, reason: 'Conflict', details: { name: 'f1', kind: 'configmaps' } });
  });

  it('delays requests by the given latency', async () => {
    kit.faults.add({ verb: 'get', resource: 'secrets', action: { type: 'latency', ms: 300 }, count: 1 });
    const order: string[] = [];
    const slow = apiError(core.readNamespacedSecret({ name: 'none', namespace: 'default' })).then((s) =>
      order.push(`secret ${s.code}`),
    );
    const fast = core.readNamespace({ name: 'default' }).then(() => order.push('namespace'));
    await Promise.all([slow, fast]);
    // The delayed request is answered normally (404), after the undelayed one.
    expect(order).toEqual(['namespace', 'secret 404']);
    expect(kit.faults.hits()).toEqual([]);
  });

  it('restarts on the same port and keeps its data', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'survivor' } } });
    const url = kit.url;
    await kit.server.restart();
    expect(kit.server.url).toBe(url);
    expect((await core.readNamespacedConfigMap({ name: 'survivor', namespace: 'default' })).metadata?.name).toBe(
      'survivor',
    );
  });
});
