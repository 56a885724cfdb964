/**
 * The controller's own client (`makeProvisionControllerClient`) against client-node's generated `CoreV1Api`: the
 * requests it sends (recorded by a proxy in front of the testkit), and what its calls give back and throw on both
 * tiers, compared with what client-node gives for the same objects.
 */
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  RequiredError,
  setHeaderOptions,
  type KubeConfig,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { closeSharedConnections, withSignal } from '../../src/client/agent.js';
import { apiStatus, isConflict, isNotFound } from '../../src/client/api-errors.js';
import { modelDecoder } from '../../src/client/models.js';
import { clientRateLimiter, setClientRateLimit } from '../../src/client/rate-limit/client-rate-limit.js';
import type { TokenBucketRateLimiter } from '../../src/client/rate-limit/token-bucket.js';
import { RestClient } from '../../src/client/rest.js';
import { ANN_SELECTED_NODE } from '../../src/controller/annotations.js';
import { makeProvisionControllerClient, type ProvisionControllerClient } from '../../src/controller/client.js';
import { CountingAgent } from '../client/counting-agent.js';
import {
  failure,
  sent,
  startRecordingProxy,
  type RecordedRequest,
  type RecordingProxy,
} from '../client/recording-proxy.js';

const HOLD = 'example.com/hold';

const volume = (name: string, finalizers?: string[]): V1PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, labels: { app: 'client-test' }, ...(finalizers === undefined ? {} : { finalizers }) },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Retain',
    hostPath: { path: `/tmp/${name}` },
  },
});

const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', annotations: { [ANN_SELECTED_NODE]: 'node-1', keep: 'me' } },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Mi' } },
    storageClassName: 'no-such-class',
  },
});

/** The claim as the controller holds it: read as JSON and decoded by the informers' decoder. */
async function cachedClaim(kc: KubeConfig, name: string): Promise<V1PersistentVolumeClaim> {
  const raw = await new RestClient(kc).json({
    method: 'GET',
    path: `/api/v1/namespaces/default/persistentvolumeclaims/${name}`,
  });
  return modelDecoder<V1PersistentVolumeClaim>('V1PersistentVolumeClaim')(raw);
}

/** The claim without the selected-node annotation, as the controller's rescheduling writes it. */
function rescheduled(c: V1PersistentVolumeClaim): V1PersistentVolumeClaim {
  const annotations = { ...c.metadata?.annotations };
  delete annotations[ANN_SELECTED_NODE];
  return { ...c, metadata: { ...c.metadata, annotations } };
}

describe("makeProvisionControllerClient sends what client-node's CoreV1Api sends", () => {
  let kit: Testkit;
  let proxy: RecordingProxy;
  let kc: KubeConfig;
  let reference: CoreV1Api;
  let client: ProvisionControllerClient;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    proxy = await startRecordingProxy(kit.url);
    kc = kubeConfigFor(proxy.url);
    reference = kc.makeApiClient(CoreV1Api);
    client = makeProvisionControllerClient(kc);
  });

  afterEach(async () => {
    await closeSharedConnections(kc);
    await proxy.close();
    await kit.stop();
  });

  /** The requests `call` sends through client-node's `CoreV1Api` and through the client, whatever they answer. */
  async function requestsOf(
    call: (api: ProvisionControllerClient) => Promise<unknown>,
  ): Promise<[RecordedRequest, RecordedRequest]> {
    const start = proxy.requests.length;
    await call(reference).catch(() => undefined);
    await call(client).catch(() => undefined);
    expect(proxy.requests).toHaveLength(start + 2);
    const [generated, lean] = proxy.requests.slice(start) as [RecordedRequest, RecordedRequest];
    return [generated, lean];
  }

  it('creates a PV as the controller saves one, and with the query parameters', async () => {
    const [generated, lean] = await requestsOf((api) => api.createPersistentVolume({ body: volume('a') }));
    expect(sent(lean)).toEqual(sent(generated));
    expect(lean).toMatchObject({
      method: 'POST',
      path: '/api/v1/persistentvolumes',
      query: [],
      contentType: 'application/json',
    });
    const [generatedDryRun, leanDryRun] = await requestsOf((api) =>
      api.createPersistentVolume({ body: volume('b'), dryRun: 'All', fieldManager: 'kprov-test' }),
    );
    expect(sent(leanDryRun)).toEqual(sent(generatedDryRun));
    expect(leanDryRun.query).toEqual([
      ['dryRun', 'All'],
      ['fieldManager', 'kprov-test'],
    ]);
  });

  it('patches as the controller patches finalizers: a merge patch guarded by the resourceVersion', async () => {
    const pv = await reference.createPersistentVolume({ body: volume('a', [HOLD]) });
    const [generated, lean] = await requestsOf((api) =>
      api.patchPersistentVolume(
        {
          name: 'a',
          body: { metadata: { finalizers: null, resourceVersion: pv.metadata?.resourceVersion } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(sent(lean)).toEqual(sent(generated));
    expect(lean).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/persistentvolumes/a',
      contentType: 'application/merge-patch+json',
    });
    expect(lean.body).toBe(generated.body);
  });

  it('sends a JSON patch without a Content-Type option and a strategic merge patch with one, with the query parameters', async () => {
    await reference.createPersistentVolume({ body: volume('a') });
    const query = { fieldManager: 'kprov-test', dryRun: 'All', fieldValidation: 'Strict', pretty: 'true' };
    const [generated, lean] = await requestsOf((api) =>
      api.patchPersistentVolume({
        name: 'a',
        body: [{ op: 'add', path: '/metadata/labels/x', value: 'y' }],
        ...query,
      }),
    );
    expect(sent(lean)).toEqual(sent(generated));
    expect(lean.contentType).toBe('application/json-patch+json');
    expect(Object.fromEntries(lean.query)).toEqual(query);

    const [generatedSmp, leanSmp] = await requestsOf((api) =>
      api.patchPersistentVolume(
        { name: 'a', body: { metadata: { labels: { x: 'z' } } }, force: false },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(sent(leanSmp)).toEqual(sent(generatedSmp));
    expect(leanSmp.contentType).toBe('application/strategic-merge-patch+json');
    expect(leanSmp.query).toEqual([['force', 'false']]);
  });

  it('deletes with the same query parameters and delete options', async () => {
    await reference.createPersistentVolume({ body: volume('a', [HOLD]) });
    const [generated, lean] = await requestsOf((api) => api.deletePersistentVolume({ name: 'a' }));
    expect(sent(lean)).toEqual(sent(generated));
    expect(lean).toMatchObject({ method: 'DELETE', path: '/api/v1/persistentvolumes/a', body: '' });

    const [generatedWithOptions, leanWithOptions] = await requestsOf((api) =>
      api.deletePersistentVolume({
        name: 'a',
        gracePeriodSeconds: 0,
        propagationPolicy: 'Background',
        dryRun: 'All',
        body: { preconditions: { resourceVersion: '1' }, orphanDependents: false },
      }),
    );
    expect(sent(leanWithOptions)).toEqual(sent(generatedWithOptions));
    expect(leanWithOptions.contentType).toBe('application/json');
  });

  it('replaces a claim as the controller reschedules it: the cached claim, timestamps as client-node writes them', async () => {
    await reference.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('c') });
    const cached = await cachedClaim(kc, 'c');
    expect(cached.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const [generated, lean] = await requestsOf((api) =>
      api.replaceNamespacedPersistentVolumeClaim({
        name: 'c',
        namespace: 'default',
        body: rescheduled(cached),
        fieldManager: 'kprov-test',
      }),
    );
    expect(sent(lean)).toEqual(sent(generated));
    expect(lean).toMatchObject({
      method: 'PUT',
      path: '/api/v1/namespaces/default/persistentvolumeclaims/c',
      contentType: 'application/json',
      query: [['fieldManager', 'kprov-test']],
    });
    const body = JSON.parse(lean.body) as {
      metadata: { creationTimestamp: string };
    };
    expect(body.metadata.creationTimestamp).toBe(cached.metadata?.creationTimestamp?.toISOString());
  });

  it('refuses server-side apply and per-call options it would not honour, sending nothing', async () => {
    await reference.createPersistentVolume({ body: volume('a') });
    const start = proxy.requests.length;
    const apply = await failure(
      client.patchPersistentVolume(
        { name: 'a', body: { metadata: { labels: { x: 'y' } } }, fieldManager: 'kprov-test' },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
    expect(apply).not.toBeInstanceOf(ApiException);
    expect((apply as Error).message).toBe(
      "PATCH /api/v1/persistentvolumes/a: the library's client does not support the patch type " +
        'application/apply-patch+yaml (it sends application/json-patch+json, application/merge-patch+json, ' +
        'application/strategic-merge-patch+json); use makeApiClient for this call',
    );
    const header = await failure(client.deletePersistentVolume({ name: 'a' }, setHeaderOptions('X-Trace', '1')));
    expect((header as Error).message).toContain('does not support the header X-Trace set by per-call options');
    const yaml = await failure(
      client.replaceNamespacedPersistentVolumeClaim(
        { name: 'c', namespace: 'default', body: claim('c') },
        setHeaderOptions('Content-Type', 'application/yaml'),
      ),
    );
    expect((yaml as Error).message).toContain('does not support the Content-Type application/yaml for a PUT');
    expect(proxy.requests).toHaveLength(start);
  });

  it("checks the required parameters as client-node does, with client-node's RequiredError", async () => {
    const err = await failure(client.patchPersistentVolume({ name: 'a', body: undefined }));
    expect(err).toBeInstanceOf(RequiredError);
    expect((err as Error).message).toBe(
      'Required parameter body was null or undefined when calling CoreV1Api.patchPersistentVolume.',
    );
    expect(await failure(client.deletePersistentVolume({ name: undefined as unknown as string }))).toBeInstanceOf(
      RequiredError,
    );
    expect(proxy.requests).toHaveLength(0);
  });
});

describe('makeProvisionControllerClient over its dispatcher and rate limit', () => {
  let kit: Testkit;
  let kc: KubeConfig;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    kc = kubeConfigFor(kit.url);
  });

  afterEach(async () => {
    await closeSharedConnections(kc);
    await kit.stop();
  });

  it('sends every call through the agent it is given', async () => {
    const agent = new CountingAgent();
    try {
      const client = makeProvisionControllerClient(kc, { agent });
      const pv = await client.createPersistentVolume({ body: volume('a', [HOLD]) });
      await client.patchPersistentVolume(
        { name: 'a', body: { metadata: { finalizers: null, resourceVersion: pv.metadata?.resourceVersion } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await client.deletePersistentVolume({ name: 'a' });
      kit.store.create('persistentvolumeclaims', claim('c') as never);
      await client.replaceNamespacedPersistentVolumeClaim({
        name: 'c',
        namespace: 'default',
        body: rescheduled(await cachedClaim(kc, 'c')),
      });
      expect(agent.dispatched).toBe(4);
    } finally {
      await agent.close();
    }
  });

  it('waits for the client-side rate limit, and stops waiting, sending nothing, when the call is aborted', async () => {
    const clock = new FakeClock();
    setClientRateLimit(kc, { qps: 1, burst: 1, clock });
    const bucket = clientRateLimiter(kc) as TokenBucketRateLimiter;
    kit.store.create('persistentvolumes', volume('a') as never);
    const client = makeProvisionControllerClient(kc);
    expect(bucket.tryAccept()).toBe(true);
    const abort = new AbortController();
    const aborted = client.deletePersistentVolume({ name: 'a' }, withSignal(abort.signal));
    const patched = client.patchPersistentVolume(
      { name: 'a', body: { metadata: { labels: { x: 'y' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await vi.waitFor(() => expect(bucket.waiting).toBe(2), WAIT);
    abort.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    await clock.advanceAsync(1000);
    expect((await patched).metadata?.labels).toEqual({ app: 'client-test', x: 'y' });
    expect(kit.server.requestCounts()['delete persistentvolumes'] ?? 0).toBe(0);
    expect(kit.server.requestCounts()['patch persistentvolumes']).toBe(1);
  });
});

describeTiers("makeProvisionControllerClient's results and errors", (tier) => {
  let kc: KubeConfig;
  let reference: CoreV1Api;
  let client: ProvisionControllerClient;

  beforeEach(async () => {
    kc = (await tier.start({ nodes: [] })).kubeConfig;
    reference = kc.makeApiClient(CoreV1Api);
    client = makeProvisionControllerClient(kc);
  });

  /** Creates a PV and waits until the cluster has made it Available, its last write until the test's. */
  async function available(name: string, finalizers: string[]): Promise<V1PersistentVolume> {
    await reference.createPersistentVolume({ body: volume(name, finalizers) });
    return vi.waitFor(async () => {
      const pv = await reference.readPersistentVolume({ name });
      expect(pv.status?.phase).toBe('Available');
      return pv;
    }, WAIT);
  }

  it('patches finalizers and gives the PV as client-node reads it; a stale resourceVersion is a Conflict', async () => {
    const pv = await available('client-patch', [HOLD]);
    // The finalizers but ours, as the controller writes them (the real tier's pv-protection one stays).
    const body = {
      metadata: {
        finalizers: (pv.metadata?.finalizers ?? []).filter((f) => f !== HOLD),
        resourceVersion: pv.metadata?.resourceVersion,
      },
    };
    const patch = (api: ProvisionControllerClient): Promise<V1PersistentVolume> =>
      api.patchPersistentVolume(
        { name: 'client-patch', body },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const patched = await patch(client);
    expect(patched.metadata?.finalizers ?? []).not.toContain(HOLD);
    expect(patched.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(patched).toEqual(await reference.readPersistentVolume({ name: 'client-patch' }));

    const stale = await failure(patch(client));
    const generated = await failure(patch(reference));
    expect(stale).toBeInstanceOf(ApiException);
    expect(isConflict(stale)).toBe(true);
    expect(apiStatus(stale)).toEqual(apiStatus(generated));
    expect((stale as ApiException<unknown>).headers['content-type']).toBe('application/json');
  });

  it('deletes a PV: gives it back while a finalizer holds it, and a NotFound once it is gone', async () => {
    await available('client-delete', [HOLD]);
    const deleting = await client.deletePersistentVolume({ name: 'client-delete' });
    expect(deleting.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(deleting.metadata?.finalizers).toContain(HOLD);
    // The cluster takes its pv-protection finalizer off a deleted PV that is not bound, maybe already.
    const read = await reference.readPersistentVolume({ name: 'client-delete' });
    expect(deleting).toEqual({
      ...read,
      metadata: {
        ...read.metadata,
        finalizers: deleting.metadata?.finalizers,
        resourceVersion: deleting.metadata?.resourceVersion,
      },
    });

    await reference.patchPersistentVolume(
      { name: 'client-delete', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await vi.waitFor(
      async () =>
        expect(isNotFound(await failure(reference.readPersistentVolume({ name: 'client-delete' })))).toBe(true),
      WAIT,
    );
    const gone = await failure(client.deletePersistentVolume({ name: 'client-delete' }));
    const generated = await failure(reference.deletePersistentVolume({ name: 'client-delete' }));
    expect(gone).toBeInstanceOf(ApiException);
    expect((gone as ApiException<unknown>).code).toBe(404);
    expect(isNotFound(gone)).toBe(true);
    expect(apiStatus(gone)).toEqual(apiStatus(generated));
  });

  it('replaces a claim without its selected node; a stale copy is a Conflict', async () => {
    await reference.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('client-replace') });
    const cached = await cachedClaim(kc, 'client-replace');
    const replaced = await client.replaceNamespacedPersistentVolumeClaim({
      name: 'client-replace',
      namespace: 'default',
      body: rescheduled(cached),
    });
    expect(replaced.metadata?.annotations?.[ANN_SELECTED_NODE]).toBeUndefined();
    expect(replaced.metadata?.annotations?.keep).toBe('me');
    const read = await reference.readNamespacedPersistentVolumeClaim({ name: 'client-replace', namespace: 'default' });
    // kube-controller-manager may have written the claim since: compare with what client-node read, if it did not.
    if (read.metadata?.resourceVersion === replaced.metadata?.resourceVersion) expect(replaced).toEqual(read);

    const stale = await failure(
      client.replaceNamespacedPersistentVolumeClaim({
        name: 'client-replace',
        namespace: 'default',
        body: rescheduled(cached),
      }),
    );
    expect(stale).toBeInstanceOf(ApiException);
    expect(isConflict(stale)).toBe(true);
    expect(apiStatus(stale)?.reason).toBe('Conflict');
  });
});
