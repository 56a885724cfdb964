/**
 * The fidelity table: API interactions replayed against the testkit and a real control plane, each reduced to a
 * normalised value that must be the same on both. A case is one entry: a plain request ({@link request}), a watch
 * over a few writes ({@link watchCase}), kubectl's output ({@link kubectlCase}), or a scenario of its own
 * ({@link scenario}). Cases run in order on one server per tier, so each names its own objects (`fid-<case>`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeObject } from '../../src/sim/nodes.js';
import { WAIT } from '../../src/vitest.js';
import { Canon, normaliseJson, normaliseTable, withoutTokenVolume } from './normalise.js';
import type { Answer, OpenWatch, RequestInit, Target } from './targets.js';

/** One row of the table. */
export interface FidelityCase {
  name: string;
  /** Needs kubectl on the PATH. */
  kubectl?: boolean;
  /** Runs the case against one server; resolves with the normalised value to compare. */
  run(t: Target): Promise<unknown>;
}

/** A request of a case: method, path, and optionally a body (objects are sent as JSON) and headers. */
export interface Req {
  method: string;
  path: string;
  /** An object is sent as JSON with `Content-Type: application/json` unless `contentType` says otherwise. */
  body?: unknown;
  contentType?: string;
  accept?: string;
}

const JSON_TYPE = 'application/json';
const MERGE = 'application/merge-patch+json';

function init(r: Req): RequestInit {
  const out: RequestInit = {};
  if (r.body !== undefined) {
    out.body = typeof r.body === 'string' || Buffer.isBuffer(r.body) ? r.body : JSON.stringify(r.body);
    out.contentType = JSON_TYPE;
  }
  if (r.contentType !== undefined) out.contentType = r.contentType;
  if (r.accept !== undefined) out.accept = r.accept;
  return out;
}

function parse(a: Answer): unknown {
  try {
    return JSON.parse(a.body);
  } catch {
    return a.body;
  }
}

/** Sends a request that must succeed (setup and steps). */
export async function must(t: Target, r: Req): Promise<unknown> {
  const a = await t.request(r.method, r.path, init(r));
  if (a.status >= 300) throw new Error(`${t.name}: ${r.method} ${r.path} answered ${a.status}: ${a.body}`);
  return parse(a);
}

/** The status, media type and normalised body of an answer. */
function answer(a: Answer, canon: Canon, normalise: (body: unknown) => unknown = (b) => b): unknown {
  return { status: a.status, contentType: a.contentType.split(';')[0], body: normalise(canon.json(parse(a))) };
}

/**
 * A case that sends `setup` (each must succeed), then one request, and compares status, media type and body (and
 * the `Warning` headers, with `warnings`).
 */
export function request(
  name: string,
  r: Req & { setup?: Req[]; normalise?: (body: unknown) => unknown; warnings?: boolean },
): FidelityCase {
  return {
    name,
    async run(t) {
      for (const s of r.setup ?? []) await must(t, s);
      const a = await t.request(r.method, r.path, init(r));
      const compared = answer(a, new Canon(), r.normalise);
      return r.warnings === true ? { ...(compared as object), warnings: a.warnings } : compared;
    },
  };
}

/** The events of a watch, normalised, with the answers of the steps taken while it was open. */
export function watchCase(
  name: string,
  c: {
    setup?: Req[];
    /** The watch path (with `?watch=true` and its parameters). */
    path: string;
    steps: Req[];
    /** Done when this holds for the events so far (default: when the server ends the stream). */
    until?: (events: OpenWatch['events']) => boolean;
    /** Replaces what may differ in the events before the common normalisation. */
    normalise?: (events: OpenWatch['events']) => unknown;
  },
): FidelityCase {
  return {
    name,
    async run(t) {
      for (const s of c.setup ?? []) await must(t, s);
      const w = t.watch(c.path);
      const canon = new Canon();
      try {
        await w.opened;
        const answers: unknown[] = [];
        for (const s of c.steps) answers.push(answer(await t.request(s.method, s.path, init(s)), canon));
        const until = c.until;
        if (until === undefined) await w.ended;
        else await waitUntil(`${name}: watch events`, () => until(w.events));
        return { events: canon.json(c.normalise === undefined ? w.events : c.normalise(w.events)), answers };
      } finally {
        w.stop();
      }
    },
  };
}

/** kubectl's output (exit code, stdout, stderr) after `setup`, with ages and column widths normalised. */
export function kubectlCase(name: string, c: { setup?: Req[]; args: string[] }): FidelityCase {
  return {
    name,
    kubectl: true,
    async run(t) {
      for (const s of c.setup ?? []) await must(t, s);
      const r = await t.kubectl(c.args);
      return { code: r.code, stdout: normaliseTable(r.stdout), stderr: r.stderr.trimEnd() };
    },
  };
}

/** A case with its own steps. */
export function scenario(
  name: string,
  run: (t: Target) => Promise<unknown>,
  options: { kubectl?: boolean } = {},
): FidelityCase {
  return { name, run, ...options };
}

/** Polls `probe` until it is true, for the tests' WAIT at most. */
export async function waitUntil(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = WAIT.timeout,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

// Objects.

const NS = '/api/v1/namespaces/default';
const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  ...extra,
});
const pvc = (
  name: string,
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, ...metadata },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const pv = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, ...spec },
});
const sc = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: 'fidelity.kprov.dev/none',
  ...extra,
});
const pod = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});
const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const job = (
  name: string,
  spec: Record<string, unknown> = {},
  podSpec: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: {
    template: {
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }], ...podSpec },
    },
    ...spec,
  },
});
const create = (path: string, body: unknown): Req => ({ method: 'POST', path, body });
const INITIAL = 'labelSelector=fidelity%3Dinitial';
/** A claim spec no volume of the table matches and no class provisions: it stays Pending, untouched by binders. */
const UNBINDABLE = { storageClassName: '', selector: { matchLabels: { 'fidelity.kprov.dev/never': 'true' } } };

/** A Status body with the numbers in its message (resourceVersions) taken out. */
const withNumbersOut = (body: unknown): unknown => {
  const b = body as { message?: unknown };
  return typeof b.message === 'string' ? { ...b, message: b.message.replace(/\d+/g, '<n>') } : body;
};

/** A watch's events with the numbers in their Status messages (resourceVersions) taken out. */
const withoutNumbers = (events: OpenWatch['events']): unknown =>
  events.map((e) =>
    e.type === 'ERROR'
      ? { ...e, object: { ...e.object, message: String(e.object.message).replace(/\d+/g, '<n>') } }
      : e,
  );

/**
 * Events whose closing BOOKMARK's resourceVersion is replaced by whether it is at least that of every object sent:
 * the watch cache's own resourceVersion, which may be the newest object's or a later one (the testkit's is the
 * newest of any write).
 */
const initialEventsEnd = (events: OpenWatch['events']): unknown => {
  const rv = (e: OpenWatch['events'][number]): number =>
    Number((e.object.metadata as { resourceVersion?: string }).resourceVersion);
  const newest = Math.max(0, ...events.filter((e) => e.type === 'ADDED').map(rv));
  return events.map((e) => {
    if (e.type !== 'BOOKMARK') return e;
    const { resourceVersion: _rv, ...metadata } = e.object.metadata as Record<string, unknown>;
    return {
      ...e,
      object: { ...e.object, metadata: { ...metadata, resourceVersionNotOlderThanTheObjects: rv(e) >= newest } },
    };
  });
};

/** The resourceVersion of a created object. */
async function createdRv(t: Target, path: string, body: unknown): Promise<string> {
  const created = (await must(t, create(path, body))) as { metadata: { resourceVersion: string } };
  return created.metadata.resourceVersion;
}

/** The table. */
export const CASES: FidelityCase[] = [
  // Error Status bodies and codes.
  request('NotFound: a namespaced object', { method: 'GET', path: `${NS}/configmaps/fid-missing` }),
  request('NotFound: a cluster-scoped object', { method: 'GET', path: '/api/v1/persistentvolumes/fid-missing' }),
  request('NotFound: an object of a named group', {
    method: 'GET',
    path: '/apis/storage.k8s.io/v1/storageclasses/fid-missing',
  }),
  request('NotFound: create in a missing namespace', {
    method: 'POST',
    path: '/api/v1/namespaces/fid-no-such-ns/configmaps',
    body: cm('fid-a'),
  }),
  request('NotFound: an unknown subresource', { method: 'GET', path: `${NS}/configmaps/fid-missing/nosuch` }),
  request('AlreadyExists', {
    setup: [create(`${NS}/configmaps`, cm('fid-dup'))],
    method: 'POST',
    path: `${NS}/configmaps`,
    body: cm('fid-dup'),
  }),
  request('Conflict: update with a stale resourceVersion', {
    setup: [create(`${NS}/configmaps`, cm('fid-conflict'))],
    method: 'PUT',
    path: `${NS}/configmaps/fid-conflict`,
    body: cm('fid-conflict', { metadata: { name: 'fid-conflict', resourceVersion: '1' }, data: { a: 'b' } }),
  }),
  request('Conflict: delete with a stale resourceVersion precondition', {
    setup: [create(`${NS}/configmaps`, cm('fid-conflict-delete'))],
    method: 'DELETE',
    path: `${NS}/configmaps/fid-conflict-delete`,
    body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: '1' } },
    // The message quotes the stored resourceVersion.
    normalise: (body) => withNumbersOut(body),
  }),
  request('Conflict: delete with a uid precondition of another object', {
    setup: [create('/apis/storage.k8s.io/v1/storageclasses', sc('fid-conflict-uid'))],
    method: 'DELETE',
    path: '/apis/storage.k8s.io/v1/storageclasses/fid-conflict-uid',
    body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '6f1bd7c2-0000-4000-8000-000000000000' } },
  }),
  request('Invalid: a claim without access modes', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-bad', { accessModes: [] }),
  }),
  request('Invalid: a claim asking for less than nothing', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-bad', { resources: { requests: { storage: '-1Gi' } } }),
  }),
  request('BadRequest: a claim with a storage quantity that does not parse', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-bad', { resources: { requests: { storage: '1Gx' } } }),
  }),
  request('Invalid: a volume without capacity', {
    method: 'POST',
    path: '/api/v1/persistentvolumes',
    body: pv('fid-bad', { capacity: undefined }),
  }),
  request('Invalid: a pod without containers', {
    method: 'POST',
    path: `${NS}/pods`,
    body: pod('fid-bad', { containers: [] }),
  }),
  request('Invalid: a bad name', { method: 'POST', path: `${NS}/configmaps`, body: cm('Fid_Bad') }),
  request('Invalid: a class with an unknown reclaim policy and binding mode', {
    method: 'POST',
    path: '/apis/storage.k8s.io/v1/storageclasses',
    body: sc('fid-bad', { reclaimPolicy: 'Keep', volumeBindingMode: 'Later' }),
  }),
  request('Invalid: changing a claim spec after creation', {
    setup: [create(`${NS}/persistentvolumeclaims`, pvc('fid-immutable', UNBINDABLE))],
    method: 'PATCH',
    path: `${NS}/persistentvolumeclaims/fid-immutable`,
    contentType: MERGE,
    body: { spec: { accessModes: ['ReadWriteMany'] } },
    // The message ends with Go's cmp.Diff of the internal spec types, which the testkit only approximates (a known
    // difference): compared up to it.
    normalise: (body) =>
      JSON.parse(JSON.stringify(body), (_k, v: unknown) =>
        typeof v === 'string' ? v.replace(/(for bound claims)\n[\s\S]*$/, '$1') : v,
      ) as unknown,
  }),
  request('BadRequest: malformed JSON', { method: 'POST', path: `${NS}/configmaps`, body: '{"metadata":{"name":"x"' }),
  request('BadRequest: malformed JSON, longer than the summary', {
    method: 'POST',
    path: `${NS}/configmaps`,
    body: '{"metadata":{"name":"a-name-long-enough-to-be-cut"',
  }),
  request('BadRequest: a JSON array', { method: 'POST', path: `${NS}/configmaps`, body: '[1,2,3]' }),
  request('BadRequest: an empty body', { method: 'POST', path: `${NS}/configmaps`, body: '' }),
  request('BadRequest: a malformed merge patch', {
    setup: [create(`${NS}/configmaps`, cm('fid-bad-patch'))],
    method: 'PATCH',
    path: `${NS}/configmaps/fid-bad-patch`,
    contentType: MERGE,
    body: '{"data":',
  }),
  request('UnsupportedMediaType: a patch as application/json', {
    setup: [create(`${NS}/configmaps`, cm('fid-patch-type'))],
    method: 'PATCH',
    path: `${NS}/configmaps/fid-patch-type`,
    contentType: JSON_TYPE,
    body: { data: { a: 'b' } },
  }),
  request('UnsupportedMediaType: a patch as text/plain', {
    setup: [create(`${NS}/configmaps`, cm('fid-patch-text'))],
    method: 'PATCH',
    path: `${NS}/configmaps/fid-patch-text`,
    contentType: 'text/plain',
    body: '{}',
  }),
  request('UnsupportedMediaType: a create as text/plain', {
    method: 'POST',
    path: `${NS}/configmaps`,
    contentType: 'text/plain',
    body: cm('fid-text'),
  }),
  request('a create without a content type is read as JSON', {
    method: 'POST',
    path: `${NS}/configmaps`,
    contentType: '',
    body: cm('fid-no-type'),
  }),
  request('MethodNotAllowed: PUT on a collection', { method: 'PUT', path: `${NS}/configmaps`, body: cm('fid-put') }),
  request('MethodNotAllowed: POST on an object', {
    method: 'POST',
    path: `${NS}/configmaps/fid-dup`,
    body: cm('fid-dup'),
  }),
  request('MethodNotAllowed: create through the all-namespaces path', {
    method: 'POST',
    path: '/api/v1/configmaps',
    body: cm('fid-all'),
  }),
  request('MethodNotAllowed: delete all namespaces', { method: 'DELETE', path: '/api/v1/namespaces' }),
  request('Invalid: a namespace without a name (no name in the details)', {
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: {} },
  }),
  request('Invalid: resourceVersionMatch without resourceVersion', {
    method: 'GET',
    path: `${NS}/configmaps?resourceVersionMatch=Exact`,
  }),
  request('Invalid: resourceVersionMatch Exact at resourceVersion 0', {
    method: 'GET',
    path: `${NS}/configmaps?resourceVersion=0&resourceVersionMatch=Exact`,
  }),
  request('Invalid: an unknown resourceVersionMatch', {
    method: 'GET',
    path: `${NS}/configmaps?resourceVersion=1&resourceVersionMatch=Sometimes`,
  }),
  request('Invalid: sendInitialEvents on a list', { method: 'GET', path: `${NS}/configmaps?sendInitialEvents=true` }),
  request('Invalid: sendInitialEvents on a watch without resourceVersionMatch', {
    method: 'GET',
    path: `${NS}/configmaps?watch=true&sendInitialEvents=true`,
  }),
  request('Invalid: resourceVersionMatch on a watch without sendInitialEvents', {
    method: 'GET',
    path: `${NS}/configmaps?watch=true&resourceVersion=1&resourceVersionMatch=Exact`,
  }),

  // Defaulting: minimal objects, and what comes back.
  request('defaults: a minimal claim', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-min', { storageClassName: '' }),
  }),
  request('defaults: a claim with a data source', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-datasource', {
      storageClassName: '',
      volumeMode: 'Block',
      dataSource: { kind: 'PersistentVolumeClaim', name: 'fid-min' },
    }),
  }),
  request('defaults: storage quantities in their canonical form', {
    method: 'POST',
    path: `${NS}/persistentvolumeclaims`,
    body: pvc('fid-quantities', {
      storageClassName: '',
      resources: { requests: { storage: '1024Mi' }, limits: { storage: 2147483648 } },
    }),
  }),
  request('defaults: a minimal volume', { method: 'POST', path: '/api/v1/persistentvolumes', body: pv('fid-min') }),
  request('defaults: a local volume', {
    method: 'POST',
    path: '/api/v1/persistentvolumes',
    body: pv('fid-local', {
      hostPath: undefined,
      local: { path: '/mnt/fid' },
      storageClassName: 'fid-local',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
          ],
        },
      },
    }),
  }),
  request('defaults: a minimal class', {
    method: 'POST',
    path: '/apis/storage.k8s.io/v1/storageclasses',
    body: sc('fid-min'),
  }),
  request('defaults: a minimal pod', {
    method: 'POST',
    path: `${NS}/pods`,
    body: pod('fid-min', { nodeName: 'fid-ghost' }),
    normalise: withoutTokenVolume,
  }),
  request('defaults: a pod with init containers, probes, resources and volumes', {
    method: 'POST',
    path: `${NS}/pods`,
    body: pod('fid-full', {
      nodeName: 'fid-ghost',
      restartPolicy: 'Never',
      initContainers: [{ name: 'i', image: 'busybox:1.36', command: ['true'] }],
      containers: [
        {
          name: 'c',
          image: 'busybox:latest',
          ports: [{ containerPort: 80 }],
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '1', memory: '1Gi' } },
          livenessProbe: { httpGet: { port: 80 } },
          volumeMounts: [
            { name: 'claim', mountPath: '/data' },
            { name: 'host', mountPath: '/host' },
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'config', mountPath: '/config' },
          ],
        },
      ],
      volumes: [
        { name: 'claim', persistentVolumeClaim: { claimName: 'fid-min' } },
        { name: 'host', hostPath: { path: '/tmp' } },
        { name: 'scratch', emptyDir: {} },
        { name: 'config', configMap: { name: 'fid-dup' } },
      ],
    }),
    normalise: withoutTokenVolume,
  }),
  request('defaults: a namespace', {
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: 'fid-ns' } },
  }),
  request('defaults: a secret with stringData', {
    method: 'POST',
    path: `${NS}/secrets`,
    body: { metadata: { name: 'fid-secret' }, stringData: { a: 'b' } },
  }),
  request('defaults: a claim status condition', {
    setup: [create(`${NS}/persistentvolumeclaims`, pvc('fid-condition', UNBINDABLE))],
    method: 'PATCH',
    path: `${NS}/persistentvolumeclaims/fid-condition/status`,
    contentType: MERGE,
    body: { status: { conditions: [{ type: 'Resizing', status: 'True' }] } },
  }),

  // Server-side dry run (kubectl apply --dry-run=server, kubectl diff).
  scenario('dry run: create, patch and delete are answered, nothing is stored', async (t) => {
    const canon = new Canon();
    const ask = async (method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> =>
      answer(
        await t.request(
          method,
          path,
          init({ method, path, body, ...(contentType === undefined ? {} : { contentType }) }),
        ),
        canon,
      );
    await must(t, create(`${NS}/configmaps`, cm('fid-dry-kept', { data: { a: '1' } })));
    return [
      await ask('POST', `${NS}/configmaps?dryRun=All`, cm('fid-dry-new', { data: { a: '1' } })),
      await ask('GET', `${NS}/configmaps/fid-dry-new`),
      await ask('PATCH', `${NS}/configmaps/fid-dry-kept?dryRun=All`, { data: { a: '2' } }, MERGE),
      await ask('DELETE', `${NS}/configmaps/fid-dry-kept?dryRun=All`),
      await ask('GET', `${NS}/configmaps/fid-dry-kept`),
      await ask('POST', `${NS}/configmaps?dryRun=Some`, cm('fid-dry-bad')),
    ];
  }),

  // Watches.
  watchCase('watch: the life of a claim (create, update, status, delete)', {
    path: `${NS}/persistentvolumeclaims?watch=true&fieldSelector=metadata.name%3Dfid-life`,
    steps: [
      create(`${NS}/persistentvolumeclaims`, pvc('fid-life', UNBINDABLE)),
      {
        method: 'PATCH',
        path: `${NS}/persistentvolumeclaims/fid-life`,
        contentType: MERGE,
        body: { metadata: { labels: { step: 'update' } } },
      },
      {
        method: 'PATCH',
        path: `${NS}/persistentvolumeclaims/fid-life/status`,
        contentType: MERGE,
        body: { status: { conditions: [{ type: 'Resizing', status: 'True' }] } },
      },
      { method: 'DELETE', path: `${NS}/persistentvolumeclaims/fid-life` },
    ],
    until: (events) => events.some((e) => e.type === 'DELETED'),
  }),
  watchCase('watch: a deletion held by a finalizer', {
    path: `${NS}/configmaps?watch=true&fieldSelector=metadata.name%3Dfid-held`,
    steps: [
      create(
        `${NS}/configmaps`,
        cm('fid-held', { metadata: { name: 'fid-held', finalizers: ['fidelity.kprov.dev/hold'] }, data: { a: '1' } }),
      ),
      { method: 'DELETE', path: `${NS}/configmaps/fid-held` },
      {
        method: 'PATCH',
        path: `${NS}/configmaps/fid-held`,
        contentType: MERGE,
        body: { metadata: { finalizers: null } },
      },
      { method: 'GET', path: `${NS}/configmaps/fid-held` },
    ],
    until: (events) => events.some((e) => e.type === 'DELETED'),
  }),

  // kubectl: what it prints from the server's Table output, and what its generators send (protobuf).
  kubectlCase('kubectl get sc', {
    setup: [
      create(
        '/apis/storage.k8s.io/v1/storageclasses',
        sc('fid-k-wait', {
          volumeBindingMode: 'WaitForFirstConsumer',
          allowVolumeExpansion: true,
          reclaimPolicy: 'Retain',
        }),
      ),
      create(
        '/apis/storage.k8s.io/v1/storageclasses',
        sc('fid-k-now', {
          metadata: { name: 'fid-k-now', annotations: { 'storageclass.kubernetes.io/is-default-class': 'false' } },
        }),
      ),
    ],
    args: ['get', 'sc', 'fid-k-wait', 'fid-k-now'],
  }),
  kubectlCase('kubectl get sc -o wide', { args: ['get', 'sc', 'fid-k-wait', 'fid-k-now', '-o', 'wide'] }),
  scenario(
    'kubectl get pv,pvc -o wide (a provisioned pair, bound, and a pending claim)',
    async (t) => {
      // As a provisioner does it: the claim, then a volume whose claimRef names it, which the PV controller binds.
      const claim = (await must(
        t,
        create(`${NS}/persistentvolumeclaims`, pvc('fid-k-pvc', { storageClassName: 'fid-k-manual' })),
      )) as { metadata: { uid: string } };
      await must(t, create(`${NS}/persistentvolumeclaims`, pvc('fid-k-pending', { storageClassName: 'fid-k-wait' })));
      await must(
        t,
        create(
          '/api/v1/persistentvolumes',
          pv('fid-k-pv', {
            storageClassName: 'fid-k-manual',
            capacity: { storage: '2Gi' },
            accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
            persistentVolumeReclaimPolicy: 'Delete',
            claimRef: {
              kind: 'PersistentVolumeClaim',
              apiVersion: 'v1',
              namespace: 'default',
              name: 'fid-k-pvc',
              uid: claim.metadata.uid,
            },
          }),
        ),
      );
      await waitUntil('the claim bound', async () => {
        const c = (await must(t, { method: 'GET', path: `${NS}/persistentvolumeclaims/fid-k-pvc` })) as {
          status?: { phase?: string };
        };
        return c.status?.phase === 'Bound';
      });
      const r = await t.kubectl(['get', 'pv/fid-k-pv', 'pvc/fid-k-pvc', 'pvc/fid-k-pending', '-o', 'wide']);
      return { code: r.code, stdout: normaliseTable(r.stdout), stderr: r.stderr };
    },
    { kubectl: true },
  ),
  kubectlCase('kubectl get pvc', { args: ['get', 'pvc', 'fid-k-pvc', 'fid-k-pending'] }),
  kubectlCase('kubectl get pv', { args: ['get', 'pv', 'fid-k-pv'] }),
  kubectlCase('kubectl get pods -o wide', {
    setup: [
      create(
        `${NS}/pods`,
        pod('fid-k-pod', {
          nodeName: 'fid-ghost',
          containers: [
            { name: 'a', image: 'busybox' },
            { name: 'b', image: 'busybox' },
          ],
        }),
      ),
      create(`${NS}/pods`, pod('fid-k-gated', { schedulingGates: [{ name: 'fidelity.kprov.dev/gate' }] })),
    ],
    args: ['get', 'pods', 'fid-k-pod', 'fid-k-gated', '-o', 'wide'],
  }),
  kubectlCase('kubectl get pods', { args: ['get', 'pods', 'fid-k-pod', 'fid-k-gated'] }),
  kubectlCase('kubectl get events -o wide', {
    setup: [
      create(`${NS}/configmaps`, cm('fid-k-target')),
      create(`${NS}/events`, {
        metadata: { name: 'fid-k-event' },
        involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'fid-k-target', apiVersion: 'v1' },
        reason: 'Testing',
        message: 'an event for the table',
        type: 'Warning',
        source: { component: 'fidelity' },
        count: 3,
        firstTimestamp: new Date(Date.now() - 125_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      }),
    ],
    args: ['get', 'events', '--field-selector', 'involvedObject.name=fid-k-target', '-o', 'wide'],
  }),
  kubectlCase('kubectl get events', {
    args: ['get', 'events', '--field-selector', 'involvedObject.name=fid-k-target'],
  }),
  scenario(
    'kubectl get nodes, and -o wide',
    async (t) => {
      const node = nodeObject({ name: 'fid-k-node', labels: { 'node-role.kubernetes.io/worker': '' } });
      await must(t, create('/api/v1/nodes', node));
      await must(t, {
        method: 'PATCH',
        path: '/api/v1/nodes/fid-k-node/status',
        contentType: MERGE,
        body: { status: node.status },
      });
      const plain = await t.kubectl(['get', 'nodes', 'fid-k-node']);
      const wide = await t.kubectl(['get', 'nodes', 'fid-k-node', '-o', 'wide']);
      await must(t, { method: 'DELETE', path: '/api/v1/nodes/fid-k-node' });
      return {
        plain: normaliseTable(plain.stdout),
        wide: normaliseTable(wide.stdout),
        stderr: plain.stderr + wide.stderr,
      };
    },
    { kubectl: true },
  ),
  scenario(
    'kubectl create namespace, configmap, secret and serviceaccount (sent as protobuf)',
    async (t) => {
      const out: string[] = [];
      for (const args of [
        ['create', 'namespace', 'fid-kc-ns'],
        ['create', 'configmap', 'fid-kc-cm', '--from-literal=a=b', '--from-literal=empty='],
        ['create', 'secret', 'generic', 'fid-kc-secret', '--from-literal=x=y'],
        ['create', 'serviceaccount', 'fid-kc-sa'],
      ]) {
        const r = await t.kubectl(args);
        out.push(`${r.code} ${r.stdout.trim()} ${r.stderr.trim()}`);
      }
      const objects = [];
      for (const path of [
        '/api/v1/namespaces/fid-kc-ns',
        `${NS}/configmaps/fid-kc-cm`,
        `${NS}/secrets/fid-kc-secret`,
        `${NS}/serviceaccounts/fid-kc-sa`,
      ]) {
        objects.push(normaliseJson(await must(t, { method: 'GET', path })));
      }
      return { out, objects };
    },
    { kubectl: true },
  ),

  // The PV controller's Events on claims.
  scenario('events: why claims wait, as the PV controller records it', async (t) => {
    const external = 'fidelity.kprov.dev/external';
    await must(
      t,
      create(
        '/apis/storage.k8s.io/v1/storageclasses',
        sc('fid-ev-later', { provisioner: external, volumeBindingMode: 'WaitForFirstConsumer' }),
      ),
    );
    await must(t, create('/apis/storage.k8s.io/v1/storageclasses', sc('fid-ev-now', { provisioner: external })));
    await must(
      t,
      create(
        '/apis/storage.k8s.io/v1/storageclasses',
        sc('fid-ev-local', { provisioner: 'kubernetes.io/no-provisioner' }),
      ),
    );
    // The pod comes first: the controller looks for the claim's pods when it syncs the claim, not when pods change.
    await must(
      t,
      create(
        `${NS}/pods`,
        pod('fid-ev-user', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'fid-ev-pod-waits' } }] }),
      ),
    );
    const claims: [string, Record<string, unknown>][] = [
      ['fid-ev-waits', { storageClassName: 'fid-ev-later' }],
      ['fid-ev-pod-waits', { storageClassName: 'fid-ev-later' }],
      ['fid-ev-now', { storageClassName: 'fid-ev-now' }],
      ['fid-ev-no-class', UNBINDABLE],
      ['fid-ev-missing-class', { storageClassName: 'fid-ev-nope' }],
      ['fid-ev-in-tree', { storageClassName: 'fid-ev-local' }],
    ];
    for (const [name, spec] of claims) await must(t, create(`${NS}/persistentvolumeclaims`, pvc(name, spec)));
    // Every claim gets one reason from the PV controller (repeats only raise its count).
    const eventsOf = async (name: string): Promise<{ items: unknown[] }> =>
      (await must(t, { method: 'GET', path: `${NS}/events?fieldSelector=involvedObject.name%3D${name}` })) as {
        items: unknown[];
      };
    await waitUntil('an Event on every claim', async () => {
      for (const [name] of claims) if ((await eventsOf(name)).items.length === 0) return false;
      return true;
    });
    const out: Record<string, unknown> = {};
    for (const [name] of claims) {
      const canon = new Canon();
      const claim = (await must(t, { method: 'GET', path: `${NS}/persistentvolumeclaims/${name}` })) as {
        metadata: { uid: string; resourceVersion: string };
      };
      const list = (await must(t, {
        method: 'GET',
        path: `${NS}/events?fieldSelector=involvedObject.name%3D${name}`,
      })) as { items: { count?: number }[] };
      // Each repeat raises the count of the one Event (what is compared: one Event per reason, counted); how many
      // repeats there were by now depends on when each controller's resync came and on races of its own (whether a
      // claim's update finds its provisioning operation still running), so the number itself is not compared.
      const events = list.items.map((e) => ({ ...e, count: (e.count ?? 0) >= 1 ? 'counted' : e.count }));
      out[name] = {
        claim: canon.json({ uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion }),
        events: canon.json(events),
      };
    }
    return out;
  }),

  // How soon the PV controller answers a claim, as a watcher sees it.
  scenario(
    'binder: the storage-provisioner annotation reaches a watcher milliseconds after the claim, not with it',
    async (t) => {
      await must(
        t,
        create(
          '/apis/storage.k8s.io/v1/storageclasses',
          sc('fid-b-now', { provisioner: 'fidelity.kprov.dev/external' }),
        ),
      );
      const w = t.watch(`${NS}/persistentvolumeclaims?watch=true&labelSelector=fidelity%3Dannotation`);
      await w.opened;
      const names = ['fid-b-1', 'fid-b-2', 'fid-b-3', 'fid-b-4', 'fid-b-5', 'fid-b-6'];
      for (const name of names)
        await must(
          t,
          create(
            `${NS}/persistentvolumeclaims`,
            pvc(name, { storageClassName: 'fid-b-now' }, { labels: { fidelity: 'annotation' } }),
          ),
        );
      const annotated = (e: OpenWatch['events'][number]): boolean =>
        (e.object.metadata as { annotations?: Record<string, string> }).annotations?.[
          'volume.kubernetes.io/storage-provisioner'
        ] !== undefined;
      try {
        await waitUntil(
          'the annotations',
          () => w.events.filter((e) => e.type === 'MODIFIED' && annotated(e)).length === names.length,
        );
        const gaps: number[] = [];
        const events = names.map((name) => {
          const of = w.events
            .map((e, i) => ({ e, at: w.times[i] ?? 0 }))
            .filter(({ e }) => (e.object.metadata as { name: string }).name === name);
          const added = of.find(({ e }) => e.type === 'ADDED')?.at ?? NaN;
          const annotation = of.find(({ e }) => e.type === 'MODIFIED' && annotated(e))?.at ?? NaN;
          gaps.push(annotation - added);
          return of.map(({ e }) => e.type).slice(0, 2);
        });
        // kube-controller-manager hears of a claim through its own watch and writes back over HTTP: its annotation
        // reaches a watcher a few milliseconds after the claim (a median of 2-3 ms on a 2-core machine), though a busy
        // watcher may read both at once. A testkit binder acting in the same turn of the event loop sent both at once,
        // every time.
        return { events, someAnnotationAtLeast1msLater: gaps.some((g) => g >= 1) };
      } finally {
        w.stop();
      }
    },
  ),

  // Bookmarks and initial events.
  watchCase('watch: sendInitialEvents, then the BOOKMARK that ends them', {
    setup: [
      { method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'fid-initial' } } },
      create(
        '/api/v1/namespaces/fid-initial/configmaps',
        cm('fid-b', { metadata: { name: 'fid-b', labels: { fidelity: 'initial' } } }),
      ),
      create(
        '/api/v1/namespaces/fid-initial/configmaps',
        cm('fid-a', { metadata: { name: 'fid-a', labels: { fidelity: 'initial' } } }),
      ),
    ],
    // Selected by label: kube-controller-manager also publishes kube-root-ca.crt into every namespace.
    path: `/api/v1/namespaces/fid-initial/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&${INITIAL}`,
    steps: [],
    until: (events) => events.some((e) => e.type === 'BOOKMARK'),
    normalise: initialEventsEnd,
  }),
  watchCase('watch: from no resourceVersion with bookmarks, the same (WatchList defaulting)', {
    path: `/api/v1/namespaces/fid-initial/configmaps?watch=true&allowWatchBookmarks=true&${INITIAL}`,
    steps: [],
    until: (events) => events.some((e) => e.type === 'BOOKMARK'),
    normalise: initialEventsEnd,
  }),
  watchCase('watch: from no resourceVersion without bookmarks: the initial events alone', {
    path: `/api/v1/namespaces/fid-initial/configmaps?watch=true&timeoutSeconds=2&${INITIAL}`,
    steps: [],
  }),
  scenario('watch: a periodic BOOKMARK carries only a newer resourceVersion', async (t) => {
    const rv = await createdRv(t, '/api/v1/namespaces/fid-initial/configmaps', cm('fid-before-bookmark'));
    const w = t.watch(
      `/api/v1/namespaces/fid-initial/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion=${rv}`,
    );
    await w.opened;
    // A change elsewhere moves the resourceVersion on without an event for this watch.
    await must(t, create(`${NS}/configmaps`, cm('fid-elsewhere')));
    await w.ended;
    const first = w.events.find((e) => e.type === 'BOOKMARK');
    const bookmarkRv = Number((first?.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion);
    return {
      types: [...new Set(w.events.map((e) => e.type))],
      first: new Canon().json(first),
      newer: bookmarkRv > Number(rv),
    };
  }),

  // Jobs (their controller's part, with a kubelet, is in test/sim/job-controller.test.ts on both tiers).
  request('defaults: a minimal Job', { method: 'POST', path: JOBS, body: job('fid-job-min') }),
  request('defaults: a Job with template labels, parallelism and no completions', {
    method: 'POST',
    path: JOBS,
    body: {
      ...job('fid-job-labels', { parallelism: 2 }),
      spec: {
        parallelism: 2,
        template: {
          metadata: { labels: { app: 'fid' }, annotations: { note: 'x' } },
          spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox:1.36' }] },
        },
      },
    },
  }),
  request('Invalid: a Job whose pods would restart Always', {
    method: 'POST',
    path: JOBS,
    body: job('fid-job-always', {}, { restartPolicy: 'Always' }),
  }),
  request('Invalid: a Job with a negative backoffLimit and no containers', {
    method: 'POST',
    path: JOBS,
    body: job('fid-job-bad', { backoffLimit: -1 }, { containers: [] }),
  }),
  request('Invalid: a Job whose selector does not match its template', {
    method: 'POST',
    path: JOBS,
    body: job('fid-job-selector', { manualSelector: true, selector: { matchLabels: { app: 'other' } } }),
  }),
  request('BadRequest: a field selector jobs do not support', {
    method: 'GET',
    path: `${JOBS}?fieldSelector=spec.parallelism%3D1`,
  }),
  scenario('a Job gets its pod from its template, and an active status', async (t) => {
    await must(t, create(JOBS, job('fid-job-pod')));
    let pods: unknown[] = [];
    await waitUntil('the pod of fid-job-pod', async () => {
      const list = (await must(t, { method: 'GET', path: `${NS}/pods?labelSelector=job-name%3Dfid-job-pod` })) as {
        items: unknown[];
      };
      const j = (await must(t, { method: 'GET', path: `${JOBS}/fid-job-pod` })) as { status?: { active?: number } };
      pods = list.items;
      return pods.length === 1 && j.status?.active === 1;
    });
    const canon = new Canon();
    const j = canon.json(await must(t, { method: 'GET', path: `${JOBS}/fid-job-pod` })) as Record<string, unknown>;
    const pod = canon.json(withoutTokenVolume(pods[0])) as Record<string, unknown>;
    return {
      status: j.status,
      pod: { metadata: pod.metadata, spec: { ...(pod.spec as object), nodeName: undefined } },
    };
  }),
  scenario(
    'kubectl get jobs -o wide: a suspended Job',
    async (t) => {
      await must(t, create(JOBS, job('fid-job-suspended', { suspend: true })));
      await waitUntil('fid-job-suspended suspended', async () => {
        const j = (await must(t, { method: 'GET', path: `${JOBS}/fid-job-suspended` })) as {
          status?: { conditions?: { type: string }[] };
        };
        return (j.status?.conditions ?? []).some((c) => c.type === 'Suspended');
      });
      const r = await t.kubectl(['get', 'jobs', 'fid-job-suspended', '-o', 'wide']);
      return { code: r.code, stdout: normaliseTable(new Canon().uid(r.stdout)), stderr: r.stderr.trimEnd() };
    },
    { kubectl: true },
  ),
  request('delete: a Job without a propagation policy keeps its pods (orphan), with a warning', {
    setup: [create(JOBS, job('fid-job-orphan', { suspend: true }))],
    method: 'DELETE',
    path: `${JOBS}/fid-job-orphan`,
    warnings: true,
    normalise: (body) => ({ ...(body as object), status: '<controller-written>' }),
  }),
  request('delete: a Job in the foreground waits for its pods', {
    setup: [create(JOBS, job('fid-job-fg', { suspend: true }))],
    method: 'DELETE',
    path: `${JOBS}/fid-job-fg`,
    body: { propagationPolicy: 'Foreground' },
    warnings: true,
    normalise: (body) => ({ ...(body as object), status: '<controller-written>' }),
  }),
  request('delete: a Job in the background is gone at once', {
    setup: [create(JOBS, job('fid-job-bg', { suspend: true }))],
    method: 'DELETE',
    path: `${JOBS}/fid-job-bg?propagationPolicy=Background`,
    warnings: true,
  }),
  request('Invalid: an unknown propagation policy', {
    setup: [create(JOBS, job('fid-job-policy', { suspend: true }))],
    method: 'DELETE',
    path: `${JOBS}/fid-job-policy`,
    body: { propagationPolicy: 'Sideways' },
  }),

  // 410 Gone.
  scenario('410: a list at an exact resourceVersion compacted away', async (t) => {
    const rv = await createdRv(t, `${NS}/configmaps`, cm('fid-old'));
    await must(t, create(`${NS}/configmaps`, cm('fid-newer')));
    await t.compact();
    return answer(
      await t.request('GET', `${NS}/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`),
      new Canon(),
    );
  }),
  scenario('410: a watch from a resourceVersion the watch cache no longer has', async (t) => {
    const rv = await createdRv(t, `${NS}/configmaps`, cm('fid-gone'));
    await must(t, create(`${NS}/configmaps`, cm('fid-gone-newer')));
    await t.forgetWatchHistory();
    const w = t.watch(`${NS}/configmaps?watch=true&resourceVersion=${rv}`);
    await w.ended;
    return withoutNumbers(w.events);
  }),
];
