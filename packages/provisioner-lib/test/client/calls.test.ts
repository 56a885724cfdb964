/**
 * The calls of `makeCoreV1Calls`, `makeStorageV1Calls`, `makeBatchV1Calls` and `makeCoordinationV1Calls` against
 * client-node's generated API classes, every method of each: the requests they send (recorded by a proxy in front of
 * the testkit), what they answer (client-node's model shape for the kinds the library decodes), how they fail, and
 * their per-call options.
 */
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { WAIT } from '@kprov/testkit/vitest';
import {
  ApiException,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  RequiredError,
  StorageV1Api,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeSharedConnections, withSignal } from '../../src/client/agent.js';
import { apiStatus } from '../../src/client/api-errors.js';
import { makeCoreV1Calls } from '../../src/client/calls/core-v1.js';
import { makeBatchV1Calls, makeCoordinationV1Calls, makeStorageV1Calls } from '../../src/client/calls/other-apis.js';
import { failure, sent, startRecordingProxy, type RecordedRequest, type RecordingProxy } from './recording-proxy.js';

const NS = 'default';
const SELECTOR = 'app=calls-test';
const LOG = 'one\ntwo\nthree\n';
/** Methods whose answers the library decodes into client-node's model shape (timestamps `Date`s). */
const MODEL_SHAPE = /PersistentVolume|StorageClass|Lease/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const meta = (name: string, namespaced = true): Record<string, unknown> => ({
  name,
  labels: { app: 'calls-test' },
  ...(namespaced ? { namespace: NS } : {}),
});
const container = (command: string[]): Record<string, unknown> => ({ name: 'main', image: 'busybox', command });
const volume = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: meta(name, false),
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
});
const claim = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: meta(name),
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: 'calls' },
});
const pod = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: meta(name),
  spec: { restartPolicy: 'Never', containers: [container(['sleep', '60'])] },
});
const job = (name: string): Record<string, unknown> => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: meta(name),
  spec: { template: { spec: { restartPolicy: 'Never', containers: [container(['true'])] } } },
});
const STORED: [string, Record<string, unknown>][] = [
  ['persistentvolumes', volume('pv-a')],
  ['persistentvolumes', volume('pv-b')],
  ['persistentvolumeclaims', claim('claim-a')],
  ['persistentvolumeclaims', claim('claim-b')],
  ['configmaps', { metadata: meta('cm-a'), data: { key: 'a' } }],
  ['configmaps', { metadata: meta('cm-b'), data: { key: 'b' } }],
  ['pods', pod('pod-a')],
  ['storage.k8s.io/storageclasses', { metadata: meta('calls', false), provisioner: 'example.com/calls' }],
  ['batch/jobs', job('job-a')],
  [
    'coordination.k8s.io/leases',
    {
      metadata: meta('calls'),
      spec: { holderIdentity: 'calls-test', acquireTime: '2024-01-02T03:04:05.000000Z', leaseDurationSeconds: 15 },
    },
  ],
];

/** One call's parameter and per-call options; `created`: the answer is a new object (its uid and time differ). */
interface Fixture {
  param: Record<string, unknown>;
  options?: ConfigurationOptions;
  created?: boolean;
}
type Call = (param: object, options?: ConfigurationOptions) => Promise<unknown>;

/** `name` of `api` (a generated class or the library's set), called as a user calls it. */
function call(api: object, name: string, param: object, options?: ConfigurationOptions): Promise<unknown> {
  return (api as Record<string, Call>)[name]!.call(api, param, options);
}

/**
 * `x` as JSON; `sameTimestamps`: every timestamp as `Date.toISOString` writes it (from a string sent or a `Date`);
 * `created`: without what the server stamped the new object with at creation (its creationTimestamp, a PV's
 * `status.lastPhaseTransitionTime`), its uid (wherever it appears) a placeholder.
 */
function comparable(x: unknown, sameTimestamps: boolean, created = false): unknown {
  const uid = (x as { metadata?: { uid?: string } }).metadata?.uid;
  let text = JSON.stringify(x);
  if (created && uid !== undefined) text = text.replaceAll(uid, '<uid>');
  const json = JSON.parse(text, (_key, v: unknown) =>
    sameTimestamps && typeof v === 'string' && TIMESTAMP.test(v) ? new Date(v).toISOString() : v,
  ) as { metadata?: Record<string, unknown> };
  // Two creates a second apart differ in these.
  if (created) {
    delete json.metadata?.creationTimestamp;
    delete (json as { status?: Record<string, unknown> }).status?.lastPhaseTransitionTime;
  }
  return json;
}

describe("the library's calls send and answer what client-node's generated APIs do", () => {
  let kit: Testkit;
  let proxy: RecordingProxy;
  let kc: KubeConfig;
  let apis: { generated: object; lean: object }[];
  let core: ReturnType<typeof makeCoreV1Calls>;
  let reference: CoreV1Api;

  beforeEach(async () => {
    kit = await startApiServer({ binder: false, scheduler: false, jobs: false });
    for (const [resource, object] of STORED) kit.store.create(resource, object as never);
    proxy = await startRecordingProxy(kit.url);
    kc = kubeConfigFor(proxy.url);
    reference = kc.makeApiClient(CoreV1Api);
    core = makeCoreV1Calls(kc);
    apis = [
      { generated: reference, lean: core },
      { generated: kc.makeApiClient(StorageV1Api), lean: makeStorageV1Calls(kc) },
      { generated: kc.makeApiClient(BatchV1Api), lean: makeBatchV1Calls(kc) },
      { generated: kc.makeApiClient(CoordinationV1Api), lean: makeCoordinationV1Calls(kc) },
    ];
  });

  afterEach(async () => {
    await closeSharedConnections(kc);
    await proxy.close();
    await kit.stop();
  });

  const methods = (): { api: { generated: object; lean: object }; name: string }[] =>
    apis.flatMap((api) => Object.keys(api.lean).map((name) => ({ api, name })));

  /** A parameter for every method: a realistic call, writes as dry runs so that both clients' calls do the same. */
  async function fixtures(): Promise<Record<string, Fixture>> {
    const node = await reference.readNode({ name: 'node-1' });
    const claimA = await reference.readNamespacedPersistentVolumeClaim({ name: 'claim-a', namespace: NS });
    const first = await reference.listNamespacedPersistentVolumeClaim({ namespace: NS, limit: 1 });
    const all: Record<string, Fixture> = {
      readNode: { param: { name: 'node-1' } },
      replaceNode: { param: { name: 'node-1', body: node, dryRun: 'All', fieldManager: 'calls-test' } },
      listNode: { param: { labelSelector: 'kubernetes.io/hostname=node-1' } },
      createPersistentVolume: { param: { body: volume('pv-new'), dryRun: 'All' }, created: true },
      readPersistentVolume: { param: { name: 'pv-a' } },
      patchPersistentVolume: {
        param: { name: 'pv-a', body: [{ op: 'add', path: '/metadata/labels/x', value: 'y' }], dryRun: 'All' },
      },
      deletePersistentVolume: { param: { name: 'pv-a', gracePeriodSeconds: 0, dryRun: 'All' } },
      listPersistentVolume: { param: { labelSelector: SELECTOR, limit: 1 } },
      readNamespacedPersistentVolumeClaim: { param: { name: 'claim-a', namespace: NS } },
      replaceNamespacedPersistentVolumeClaim: {
        param: { name: 'claim-a', namespace: NS, body: claimA, dryRun: 'All' },
      },
      patchNamespacedPersistentVolumeClaimStatus: {
        param: { name: 'claim-a', namespace: NS, body: { status: { phase: 'Lost' } }, dryRun: 'All' },
        options: setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      },
      deleteNamespacedPersistentVolumeClaim: {
        param: { name: 'claim-a', namespace: NS, dryRun: 'All', body: { propagationPolicy: 'Background' } },
      },
      listNamespacedPersistentVolumeClaim: { param: { namespace: NS, limit: 1, _continue: first.metadata?._continue } },
      readNamespacedConfigMap: { param: { name: 'cm-a', namespace: NS } },
      listNamespacedConfigMap: { param: { namespace: NS, fieldSelector: 'metadata.name=cm-b' } },
      createNamespacedPod: { param: { namespace: NS, body: pod('pod-new'), dryRun: 'All' }, created: true },
      readNamespacedPod: { param: { name: 'pod-a', namespace: NS } },
      deleteNamespacedPod: { param: { name: 'pod-a', namespace: NS, gracePeriodSeconds: 0, dryRun: 'All' } },
      listNamespacedPod: { param: { namespace: NS, labelSelector: SELECTOR } },
      readNamespacedPodLog: { param: { name: 'logger', namespace: NS, tailLines: 2 } },
      readStorageClass: { param: { name: 'calls' } },
      listStorageClass: { param: { fieldSelector: 'metadata.name=calls' } },
      readNamespacedJob: { param: { name: 'job-a', namespace: NS } },
      createNamespacedJob: { param: { namespace: NS, body: job('job-new'), dryRun: 'All' }, created: true },
      deleteNamespacedJob: { param: { name: 'job-a', namespace: NS, propagationPolicy: 'Background', dryRun: 'All' } },
      readNamespacedLease: { param: { name: 'calls', namespace: NS } },
    };
    // A method without a fixture (one added to a table) fails here rather than going untested.
    expect(Object.keys(all).sort()).toEqual(
      methods()
        .map((m) => m.name)
        .sort(),
    );
    return all;
  }

  /** Runs a pod on node-1 that prints {@link LOG}, and waits until it has finished (its last status write). */
  async function logger(): Promise<void> {
    kit.store.create('pods', {
      metadata: { name: 'logger', namespace: NS },
      spec: {
        nodeName: 'node-1',
        restartPolicy: 'Never',
        containers: [container(['sh', '-c', `printf 'one\\ntwo\\nthree\\n'`])],
      },
    });
    await vi.waitFor(() => {
      const status = kit.store.get('pods', NS, 'logger')?.status as { phase?: string } | undefined;
      expect(status?.phase).toBe('Succeeded');
    }, WAIT);
  }

  /** The requests sent since `start`. */
  const since = (start: number): RecordedRequest[] => proxy.requests.slice(start);
  /** The two requests sent since `start`, in the order sent. */
  function pair(start: number, what?: string): [RecordedRequest, RecordedRequest] {
    expect(since(start), what).toHaveLength(2);
    return since(start) as [RecordedRequest, RecordedRequest];
  }

  it('sends every call as client-node does and answers the same, in model shape where the library decodes the kind', async () => {
    await logger();
    const all = await fixtures();
    const requests: Record<string, RecordedRequest> = {};
    const answers: Record<string, [unknown, unknown]> = {};
    for (const { api, name } of methods()) {
      const { param, options, created } = all[name]!;
      const start = proxy.requests.length;
      const generated = await call(api.generated, name, param, options);
      const lean = await call(api.lean, name, param, options);
      const [a, b] = pair(start, name);
      expect(sent(b), name).toEqual(sent(a));
      const exact = MODEL_SHAPE.test(name);
      expect(comparable(lean, !exact, created), name).toEqual(comparable(generated, !exact, created));
      requests[name] = b;
      answers[name] = [generated, lean];
    }
    // The parameters did go out, as client-node sends them.
    expect(requests.listNamespacedPersistentVolumeClaim?.query).toEqual([
      ['continue', all.listNamespacedPersistentVolumeClaim?.param._continue],
      ['limit', '1'],
    ]);
    expect(requests.patchPersistentVolume).toMatchObject({
      contentType: 'application/json-patch+json',
      query: [['dryRun', 'All']],
    });
    expect(requests.deleteNamespacedPod?.query).toEqual([
      ['dryRun', 'All'],
      ['gracePeriodSeconds', '0'],
    ]);
    expect(requests.readNamespacedPodLog).toMatchObject({
      path: `/api/v1/namespaces/${NS}/pods/logger/log`,
      query: [['tailLines', '2']],
    });
    // A list's continue token as client-node names it, on the first page and not on the last.
    const [pvs, leanPvs] = answers.listPersistentVolume as [
      { metadata: object; items: unknown[] },
      { metadata: object },
    ];
    expect(leanPvs.metadata).toEqual({
      resourceVersion: expect.any(String),
      _continue: expect.any(String),
      remainingItemCount: 1,
    });
    expect(leanPvs.metadata).toEqual(pvs.metadata);
    expect(pvs.items).toHaveLength(1);
    const [, leanClaims] = answers.listNamespacedPersistentVolumeClaim as [
      unknown,
      { items: { metadata: { name: string } }[]; metadata: object },
    ];
    expect(leanClaims.items.map((c) => c.metadata.name)).toEqual(['claim-b']);
    expect(leanClaims.metadata).not.toHaveProperty('_continue');
    expect(answers.readNamespacedPodLog).toEqual(['two\nthree\n', 'two\nthree\n']);
  });

  it("gives PVs, claims, StorageClasses and Leases in client-node's model shape, Nodes, Pods and Jobs as sent", async () => {
    const storage = makeStorageV1Calls(kc);
    expect((await core.readPersistentVolume({ name: 'pv-a' })).metadata?.creationTimestamp).toBeInstanceOf(Date);
    const claims = await core.listNamespacedPersistentVolumeClaim({ namespace: NS, labelSelector: SELECTOR });
    expect(claims.items).toHaveLength(2);
    for (const c of claims.items) expect(c.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect((await storage.readStorageClass({ name: 'calls' })).metadata?.creationTimestamp).toBeInstanceOf(Date);
    const lease = await makeCoordinationV1Calls(kc).readNamespacedLease({ name: 'calls', namespace: NS });
    expect(lease.metadata?.creationTimestamp).toBeInstanceOf(Date);
    // A MicroTime stays the string sent, in client-node's Lease too.
    expect(lease.spec?.acquireTime).toBe('2024-01-02T03:04:05.000000Z');

    const stored = (name: string): unknown => kit.store.get('pods', NS, name)?.metadata.creationTimestamp;
    const node = await core.readNode({ name: 'node-1' });
    expect(node.metadata?.creationTimestamp).toBe(
      kit.store.get('nodes', undefined, 'node-1')?.metadata.creationTimestamp,
    );
    expect(typeof node.metadata?.creationTimestamp).toBe('string');
    expect((await reference.readNode({ name: 'node-1' })).metadata?.creationTimestamp).toBeInstanceOf(Date);
    const p = await core.readNamespacedPod({ name: 'pod-a', namespace: NS });
    expect(typeof p.metadata?.creationTimestamp).toBe('string');
    expect(p.metadata?.creationTimestamp).toBe(stored('pod-a'));
    const j = await makeBatchV1Calls(kc).readNamespacedJob({ name: 'job-a', namespace: NS });
    expect(typeof j.metadata?.creationTimestamp).toBe('string');
  });

  it("rejects a read of a missing object (its name escaped) with client-node's ApiException, as client-node does", async () => {
    const all = await fixtures();
    const reads = methods().filter(({ name }) => name.startsWith('read'));
    expect(reads.length).toBeGreaterThan(5);
    for (const { api, name } of reads) {
      const param = { ...all[name]!.param, name: 'no such?name' }; // escaped in the path
      const start = proxy.requests.length;
      const generated = await failure(call(api.generated, name, param));
      const lean = await failure(call(api.lean, name, param));
      expect(lean, name).toBeInstanceOf(ApiException);
      expect((lean as ApiException<unknown>).code, name).toBe(404);
      expect((lean as ApiException<unknown>).code, name).toBe((generated as ApiException<unknown>).code);
      expect(apiStatus(lean), name).toEqual(apiStatus(generated));
      const [a, b] = pair(start, name);
      expect(sent(b), name).toEqual(sent(a));
    }
  });

  it("rejects a call without a path parameter or required body with client-node's RequiredError, sending nothing", async () => {
    const all = await fixtures();
    let refused = 0;
    for (const { api, name } of methods()) {
      for (const key of ['name', 'namespace', 'body'].filter((k) => k in all[name]!.param)) {
        const param = { ...all[name]!.param, [key]: undefined };
        const start = proxy.requests.length;
        const generated = await call(api.generated, name, param).catch((err: unknown) => err);
        const lean = await call(api.lean, name, param).catch((err: unknown) => err);
        if (generated instanceof RequiredError) {
          refused++;
          expect(lean, `${name} without ${key}`).toBeInstanceOf(RequiredError);
          expect((lean as Error).message).toBe(generated.message);
          expect(since(start), `${name} without ${key}`).toEqual([]);
        } else {
          // An optional body (a delete's options): both send the call, alike.
          expect(lean, `${name} without ${key}`).not.toBeInstanceOf(RequiredError);
          const [a, b] = pair(start, `${name} without ${key}`);
          expect(sent(b), `${name} without ${key}`).toEqual(sent(a));
        }
      }
    }
    expect(refused).toBeGreaterThan(20);
  });

  it('sends nothing for an aborted signal, rejecting with its reason as client-node does', async () => {
    const all = await fixtures();
    const abort = new AbortController();
    const reason = new Error('caller gave up');
    abort.abort(reason);
    const start = proxy.requests.length;
    for (const { api, name } of methods()) {
      const { param } = all[name]!;
      const generated = await failure(call(api.generated, name, param, withSignal(abort.signal)));
      const lean = await failure(call(api.lean, name, param, withSignal(abort.signal)));
      expect(lean, name).toBe(reason);
      expect(generated, name).toBe(reason);
    }
    expect(since(start)).toEqual([]);
  });

  it('sends a merge patch with the Content-Type option, and gives the patched PV as client-node does', async () => {
    const body = { metadata: { labels: { x: 'y' } } };
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const start = proxy.requests.length;
    const generated = await reference.patchPersistentVolume(
      { name: 'pv-a', body, fieldManager: 'calls-test' },
      options,
    );
    const lean = await core.patchPersistentVolume({ name: 'pv-a', body, fieldManager: 'calls-test' }, options);
    const [a, b] = pair(start);
    expect(sent(b)).toEqual(sent(a));
    expect(b).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/persistentvolumes/pv-a',
      contentType: 'application/merge-patch+json',
      query: [['fieldManager', 'calls-test']],
    });
    expect(lean.metadata?.labels).toEqual({ app: 'calls-test', x: 'y' });
    expect(lean).toEqual(generated);
  });

  it('reads a pod log as client-node does: the text served, its last lines with tailLines', async () => {
    await logger();
    const param = { name: 'logger', namespace: NS };
    expect(await core.readNamespacedPodLog(param)).toBe(LOG);
    expect(await core.readNamespacedPodLog(param)).toBe(await reference.readNamespacedPodLog(param));
    const start = proxy.requests.length;
    const tail = await core.readNamespacedPodLog({ ...param, tailLines: 1 });
    expect(tail).toBe('three\n');
    expect(tail).toBe(await reference.readNamespacedPodLog({ ...param, tailLines: 1 }));
    const [leanRequest, generatedRequest] = pair(start);
    expect(sent(leanRequest)).toEqual(sent(generatedRequest));
    expect(leanRequest.query).toEqual([['tailLines', '1']]);
    // A pod not on a node has no log: the server's 400, from both.
    const generated = await failure(reference.readNamespacedPodLog({ name: 'pod-a', namespace: NS }));
    const lean = await failure(core.readNamespacedPodLog({ name: 'pod-a', namespace: NS }));
    expect(lean).toBeInstanceOf(ApiException);
    expect(apiStatus(lean)).toEqual(apiStatus(generated));
    expect(apiStatus(lean)?.code).toBe(400);
  });
});
