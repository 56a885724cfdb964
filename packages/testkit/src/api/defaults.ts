/**
 * Server-side defaulting as kube-apiserver 1.32 applies it to the kinds the testkit serves: the scheme defaulters
 * (`pkg/apis/core/v1/defaults.go`, `pkg/apis/storage/v1/defaults.go`), the v1 conversion quirks a client can see
 * (Secret `stringData`, Pod `serviceAccount`), the zero-valued structs Go always serializes, and the default-on
 * admission plugins' mutations (ServiceAccount, Priority, DefaultTolerationSeconds, StorageObjectInUseProtection,
 * DefaultStorageClass). Pure functions that mutate the object in place.
 *
 * `applyDefaults` is what runs on every decode, create or update. `defaultsForCreate` / `defaultsForUpdate` add what
 * only happens on one of the two (registry PrepareForCreate/PrepareForUpdate and create-only admission).
 */

import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';
import { resourceKey } from './resources.js';
import { asArr, asNum, asObj, asStr, parseQuantity, semanticEqual } from './validation/util.js';
import type { Obj } from './validation/util.js';

/** Inputs the real server gets from its own state or clock rather than from the request. */
export interface DefaultsOptions {
  /** Clock for server-set timestamps (PV `status.lastPhaseTransitionTime`); defaults to the current time. */
  now?: Date;
  /**
   * Name of the cluster's default StorageClass, if any (the DefaultStorageClass admission plugin sets it on PVCs
   * created without `spec.storageClassName`).
   */
  defaultStorageClass?: string;
  /**
   * Whether the StorageObjectInUseProtection admission plugin adds `kubernetes.io/pv-protection` and
   * `kubernetes.io/pvc-protection` on create (default true, as in a real cluster).
   */
  storageProtection?: boolean;
  /**
   * When set, pods get the ServiceAccount admission plugin's projected token volume under this name (the real one is
   * `kube-api-access-` plus five random characters) and a read-only mount of it in every container.
   */
  serviceAccountTokenVolume?: string;
}

/** Pod QoS classes, as `status.qosClass` reports them. */
export type QOSClass = 'BestEffort' | 'Burstable' | 'Guaranteed';

/** Gets `o[k]` as an object, creating an empty one when missing. */
function ensureObj(o: Obj, k: string): Obj {
  const existing = asObj(o[k]);
  if (existing !== undefined) return existing;
  const created: Obj = {};
  o[k] = created;
  return created;
}

function setIfUnset(o: Obj, k: string, value: unknown): void {
  if (o[k] === undefined || o[k] === null || o[k] === '') o[k] = value;
}

function objects(value: unknown): Obj[] {
  return asArr(value).flatMap((v) => {
    const o = asObj(v);
    return o === undefined ? [] : [o];
  });
}

/**
 * A `metav1.Time` a client left out is served as `null`: Go serialises a zero struct even under `omitempty`. For the
 * time fields of the conditions (and container states) in `list`.
 */
function nullTimes(list: unknown, fields: readonly string[]): void {
  for (const item of objects(list)) for (const f of fields) if (item[f] === undefined) item[f] = null;
}

/** `TypedLocalObjectReference.apiGroup` and `TypedObjectReference.apiGroup` are pointers without `omitempty`. */
function nullApiGroup(ref: unknown): void {
  const o = asObj(ref);
  if (o !== undefined && o.apiGroup === undefined) o.apiGroup = null;
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The pull policy SetDefaults_Container picks: `Always` for an untagged image (which means `:latest`) or an explicit
 * `:latest`, `IfNotPresent` otherwise (including digest-only references).
 */
function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const named = at === -1 ? image : image.slice(0, at);
  const lastPart = named.slice(named.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  const tag = colon === -1 ? (at === -1 ? 'latest' : '') : lastPart.slice(colon + 1);
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultFieldRef(item: Obj): void {
  const ref = asObj(item.fieldRef);
  if (ref !== undefined) setIfUnset(ref, 'apiVersion', 'v1');
}

function defaultHandler(handler: Obj | undefined): void {
  const httpGet = asObj(handler?.httpGet);
  if (httpGet === undefined) return;
  setIfUnset(httpGet, 'path', '/');
  setIfUnset(httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: Obj | undefined): void {
  if (probe === undefined) return;
  const zeroToDefault = (k: string, v: number): void => {
    if ((asNum(probe[k]) ?? 0) === 0) probe[k] = v;
  };
  zeroToDefault('timeoutSeconds', 1);
  zeroToDefault('periodSeconds', 10);
  zeroToDefault('successThreshold', 1);
  zeroToDefault('failureThreshold', 3);
  defaultHandler(probe);
}

function defaultContainer(c: Obj, hostNetwork: boolean, requestsFromLimits: boolean): void {
  setIfUnset(c, 'imagePullPolicy', defaultPullPolicy(asStr(c.image)));
  setIfUnset(c, 'terminationMessagePath', '/dev/termination-log');
  setIfUnset(c, 'terminationMessagePolicy', 'File');
  const resources = ensureObj(c, 'resources');
  const limits = asObj(resources.limits);
  if (requestsFromLimits && limits !== undefined) {
    const requests = ensureObj(resources, 'requests');
    for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
  }
  for (const port of objects(c.ports)) {
    setIfUnset(port, 'protocol', 'TCP');
    if (hostNetwork && (asNum(port.hostPort) ?? 0) === 0) port.hostPort = port.containerPort;
  }
  for (const env of objects(c.env)) {
    const from = asObj(env.valueFrom);
    if (from !== undefined) defaultFieldRef(from);
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(asObj(c[probe]));
  const lifecycle = asObj(c.lifecycle);
  defaultHandler(asObj(lifecycle?.postStart));
  defaultHandler(asObj(lifecycle?.preStop));
}

/** Members of a pod VolumeSource; a volume with none of them gets `emptyDir: {}`. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((s) => v[s] !== undefined && v[s] !== null)) v.emptyDir = {};
  const hostPath = asObj(v.hostPath);
  if (hostPath !== undefined && hostPath.type === undefined) hostPath.type = '';
  for (const s of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const source = asObj(v[s]);
    if (source !== undefined && (source.defaultMode === undefined || source.defaultMode === null))
      source.defaultMode = 420;
  }
  for (const item of objects(asObj(v.downwardAPI)?.items)) defaultFieldRef(item);
  for (const source of objects(asObj(v.projected)?.sources)) {
    const token = asObj(source.serviceAccountToken);
    if (token !== undefined && (token.expirationSeconds === undefined || token.expirationSeconds === null))
      token.expirationSeconds = 3600;
    for (const item of objects(asObj(source.downwardAPI)?.items)) defaultFieldRef(item);
  }
  const template = asObj(asObj(v.ephemeral)?.volumeClaimTemplate);
  if (template !== undefined) setIfUnset(ensureObj(template, 'spec'), 'volumeMode', 'Filesystem');
  const image = asObj(v.image);
  if (image !== undefined) setIfUnset(image, 'pullPolicy', defaultPullPolicy(asStr(image.reference)));
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The DefaultTolerationSeconds admission plugin (create and update of pods). */
function defaultTolerations(spec: Obj): void {
  const tolerations = objects(spec.tolerations);
  const tolerates = (taint: string): boolean =>
    tolerations.some(
      (t) => (t.key === taint || asStr(t.key) === '') && (t.effect === 'NoExecute' || asStr(t.effect) === ''),
    );
  const add = [NOT_READY, UNREACHABLE].filter((taint) => !tolerates(taint));
  if (add.length === 0) return;
  spec.tolerations = [
    ...asArr(spec.tolerations),
    ...add.map((k) => ({ key: k, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 })),
  ];
}

/** Priorities of the built-in PriorityClasses the Priority admission plugin knows without a lookup. */
const BUILTIN_PRIORITIES: Record<string, number> = {
  '': 0,
  'system-cluster-critical': 2000000000,
  'system-node-critical': 2000001000,
};

function qosAmounts(
  containers: Obj[],
  field: 'requests' | 'limits',
): { totals: Map<string, number>; perContainer: Set<string>[] } {
  const totals = new Map<string, number>();
  const perContainer = containers.map((c) => {
    const found = new Set<string>();
    for (const [k, v] of Object.entries(asObj(asObj(c.resources)?.[field]) ?? {})) {
      if (k !== 'cpu' && k !== 'memory') continue;
      const q = parseQuantity(v) ?? 0;
      if (q <= 0) continue;
      found.add(k);
      totals.set(k, (totals.get(k) ?? 0) + q);
    }
    return found;
  });
  return { totals, perContainer };
}

/** `qos.GetPodQOS` over containers and init containers (after requests have been defaulted from limits). */
export function podQOSClass(spec: unknown): QOSClass {
  const s = asObj(spec) ?? {};
  const containers = [...objects(s.containers), ...objects(s.initContainers)];
  const requests = qosAmounts(containers, 'requests');
  const limits = qosAmounts(containers, 'limits');
  if (requests.totals.size === 0 && limits.totals.size === 0) return 'BestEffort';
  const allLimited = limits.perContainer.every((found) => found.has('cpu') && found.has('memory'));
  const matching = [...requests.totals].every(([k, v]) => limits.totals.get(k) === v);
  return allLimited && matching && requests.totals.size === limits.totals.size ? 'Guaranteed' : 'Burstable';
}

/**
 * `SetDefaults_PodSpec` and the containers' and volumes' defaulters: what a pod and a pod template both get. A pod
 * also gets `SetDefaults_Pod`'s requests from limits (`requestsFromLimits`) and service links.
 */
function defaultPodSpec(spec: Obj, requestsFromLimits: boolean): void {
  const hostNetwork = spec.hostNetwork === true;
  for (const c of objects(spec.containers)) defaultContainer(c, hostNetwork, requestsFromLimits);
  for (const c of objects(spec.initContainers)) defaultContainer(c, hostNetwork, requestsFromLimits);
  for (const c of objects(spec.ephemeralContainers)) defaultContainer(c, false, false);
  for (const v of objects(spec.volumes)) defaultVolume(v);
  setIfUnset(spec, 'dnsPolicy', 'ClusterFirst');
  setIfUnset(spec, 'restartPolicy', 'Always');
  if (asObj(spec.securityContext) === undefined) spec.securityContext = {};
  if (asNum(spec.terminationGracePeriodSeconds) === undefined) spec.terminationGracePeriodSeconds = 30;
  setIfUnset(spec, 'schedulerName', 'default-scheduler');
}

function defaultPod(pod: Obj): void {
  const spec = ensureObj(pod, 'spec');
  defaultPodSpec(spec, true);
  if (typeof spec.enableServiceLinks !== 'boolean') spec.enableServiceLinks = true;
  // v1 conversion: serviceAccount is the deprecated alias; the ServiceAccount admission plugin fills in "default".
  setIfUnset(spec, 'serviceAccountName', asStr(spec.serviceAccount) === '' ? 'default' : spec.serviceAccount);
  spec.serviceAccount = spec.serviceAccountName;
  // The Priority admission plugin, for the classes it can resolve without the API.
  const builtin = BUILTIN_PRIORITIES[asStr(spec.priorityClassName)];
  if (builtin !== undefined) {
    if (asNum(spec.priority) === undefined) spec.priority = builtin;
    setIfUnset(spec, 'preemptionPolicy', 'PreemptLowerPriority');
  }
  defaultTolerations(spec);
  const status = ensureObj(pod, 'status');
  setIfUnset(status, 'phase', 'Pending');
  setIfUnset(status, 'qosClass', podQOSClass(spec));
  nullTimes(status.conditions, ['lastProbeTime', 'lastTransitionTime']);
  for (const list of [status.containerStatuses, status.initContainerStatuses, status.ephemeralContainerStatuses]) {
    for (const cs of objects(list)) {
      for (const state of [asObj(cs.state), asObj(cs.lastState)]) {
        if (state === undefined) continue;
        nullTimes([state.running], ['startedAt']);
        nullTimes([state.terminated], ['startedAt', 'finishedAt']);
      }
    }
  }
}

/**
 * `SetDefaults_Job` (batch/v1) and the pod template's defaults. The Job's labels are its template's when it has none
 * (the server defaults again when it reads the Job back from storage, so after the selector's labels were added).
 */
function defaultJob(job: Obj): void {
  const spec = ensureObj(job, 'spec');
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  if (spec.parallelism === undefined || spec.parallelism === null) spec.parallelism = 1;
  if (spec.backoffLimit === undefined || spec.backoffLimit === null)
    spec.backoffLimit = spec.backoffLimitPerIndex === undefined ? 6 : 2147483647;
  setIfUnset(spec, 'completionMode', 'NonIndexed');
  if (typeof spec.suspend !== 'boolean') spec.suspend = false;
  if (typeof spec.manualSelector !== 'boolean') spec.manualSelector = false;
  setIfUnset(spec, 'podReplacementPolicy', spec.podFailurePolicy === undefined ? 'TerminatingOrFailed' : 'Failed');
  const template = ensureObj(spec, 'template');
  const templateMeta = ensureObj(template, 'metadata');
  // ObjectMeta's creationTimestamp is a struct Go always serialises: null in a template.
  if (templateMeta.creationTimestamp === undefined) templateMeta.creationTimestamp = null;
  defaultPodSpec(ensureObj(template, 'spec'), false);
  defaultJobLabels(job);
}

/** A Job without labels gets its template's (SetDefaults_Job). */
export function defaultJobLabels(job: Obj): void {
  const meta = ensureObj(job, 'metadata');
  const templateLabels = asObj(asObj(asObj(asObj(job.spec)?.template)?.metadata)?.labels);
  if (templateLabels !== undefined && Object.keys(asObj(meta.labels) ?? {}).length === 0)
    meta.labels = structuredClone(templateLabels);
}

function defaultSecret(secret: Obj): void {
  setIfUnset(secret, 'type', 'Opaque');
  const stringData = asObj(secret.stringData);
  if (stringData !== undefined) {
    const entries = Object.entries(stringData);
    if (entries.length > 0) {
      const data = ensureObj(secret, 'data');
      for (const [k, v] of entries) data[k] = Buffer.from(asStr(v), 'utf8').toString('base64');
    }
    delete secret.stringData;
  }
}

function defaultPV(pv: Obj): void {
  const spec = ensureObj(pv, 'spec');
  setIfUnset(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  setIfUnset(spec, 'volumeMode', 'Filesystem');
  const hostPath = asObj(spec.hostPath);
  if (hostPath !== undefined && hostPath.type === undefined) hostPath.type = '';
  setIfUnset(ensureObj(pv, 'status'), 'phase', 'Pending');
}

/**
 * Applies the defaults the server applies to every object it decodes, on create and on update: the scheme
 * defaulters for the kind, the v1 conversion's visible effects, the zero-valued fields Go always serializes, and the
 * pod admission defaults (service account, priority, default tolerations). Status defaults only fill empty fields,
 * so on create (after the status reset) they produce the initial status and on update they leave the stored one.
 */
export function applyDefaults(resource: ResourceType, obj: KubeObject): void {
  const o: Obj = obj;
  switch (resourceKey(resource)) {
    case 'persistentvolumeclaims': {
      const spec = ensureObj(o, 'spec');
      setIfUnset(spec, 'volumeMode', 'Filesystem');
      nullApiGroup(spec.dataSource);
      nullApiGroup(spec.dataSourceRef);
      const status = ensureObj(o, 'status');
      setIfUnset(status, 'phase', 'Pending');
      nullTimes(status.conditions, ['lastProbeTime', 'lastTransitionTime']);
      break;
    }
    case 'persistentvolumes':
      defaultPV(o);
      break;
    case 'storage.k8s.io/storageclasses':
      setIfUnset(o, 'reclaimPolicy', 'Delete');
      setIfUnset(o, 'volumeBindingMode', 'Immediate');
      break;
    case 'pods':
      defaultPod(o);
      break;
    case 'namespaces': {
      const name = asStr(obj.metadata.name);
      if (name !== '') obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': name };
      const status = ensureObj(o, 'status');
      setIfUnset(status, 'phase', 'Active');
      nullTimes(status.conditions, ['lastTransitionTime']);
      break;
    }
    case 'secrets':
      defaultSecret(o);
      break;
    case 'nodes': {
      const status = asObj(o.status);
      if (status !== undefined && asObj(status.allocatable) === undefined && asObj(status.capacity) !== undefined) {
        status.allocatable = structuredClone(status.capacity);
      }
      nullTimes(status?.conditions, ['lastHeartbeatTime', 'lastTransitionTime']);
      break;
    }
    case 'events':
      ensureObj(o, 'involvedObject');
      ensureObj(o, 'source');
      for (const k of ['firstTimestamp', 'lastTimestamp', 'eventTime']) if (o[k] === undefined) o[k] = null;
      for (const k of ['reportingComponent', 'reportingInstance']) if (o[k] === undefined) o[k] = '';
      break;
    case 'events.k8s.io/events':
      ensureObj(o, 'regarding');
      ensureObj(o, 'deprecatedSource');
      for (const k of ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp'])
        if (o[k] === undefined) o[k] = null;
      break;
    case 'coordination.k8s.io/leases':
      ensureObj(o, 'spec');
      break;
    case 'batch/jobs':
      defaultJob(o);
      break;
    default:
  }
}

/**
 * `NormalizeDataSources` on create: a claim that names its source in only one of `dataSource` and `dataSourceRef`
 * gets the same in the other (`dataSourceRef` to `dataSource` only without a namespace).
 */
function normalizeDataSources(spec: Obj): void {
  const source = asObj(spec.dataSource);
  const ref = asObj(spec.dataSourceRef);
  if (source !== undefined && ref === undefined) {
    spec.dataSourceRef = {
      ...(source.apiGroup === undefined ? {} : { apiGroup: source.apiGroup }),
      kind: source.kind,
      name: source.name,
    };
  } else if (ref !== undefined && source === undefined && asStr(ref.namespace) === '') {
    spec.dataSource = {
      ...(ref.apiGroup === undefined ? {} : { apiGroup: ref.apiGroup }),
      kind: ref.kind,
      name: ref.name,
    };
  }
}

function addFinalizer(obj: KubeObject, finalizer: string): void {
  const list = obj.metadata.finalizers ?? [];
  if (!list.includes(finalizer)) obj.metadata.finalizers = [...list, finalizer];
}

function addTokenVolume(spec: Obj, name: string): void {
  if (spec.automountServiceAccountToken === false) return;
  const mountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
  spec.volumes = [
    ...asArr(spec.volumes),
    {
      name,
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
        defaultMode: 420,
      },
    },
  ];
  for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) {
    if (objects(c.volumeMounts).some((m) => m.mountPath === mountPath)) continue;
    c.volumeMounts = [...asArr(c.volumeMounts), { name, readOnly: true, mountPath }];
  }
}

/**
 * Everything the server does to a new object before storing it, for a caller that has already generated the name
 * and reset the status the strategy owns: `applyDefaults`, then what happens only on create: the Namespace
 * `kubernetes` finalizer, the PV `Pending` phase with its transition time, the `kubernetes.io/pv-protection` and
 * `kubernetes.io/pvc-protection` finalizers (unless `storageProtection: false`), the default StorageClass, a gated pod's `PodScheduled` condition and,
 * when asked for, the service-account token volume.
 */
export function defaultsForCreate(resource: ResourceType, obj: KubeObject, options: DefaultsOptions = {}): void {
  const o: Obj = obj;
  switch (resourceKey(resource)) {
    case 'namespaces': {
      const spec = ensureObj(o, 'spec');
      const finalizers = asArr(spec.finalizers);
      if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
      break;
    }
    case 'persistentvolumes': {
      const status = ensureObj(o, 'status');
      setIfUnset(status, 'phase', 'Pending');
      status.lastPhaseTransitionTime = rfc3339(options.now ?? new Date());
      if (options.storageProtection !== false) addFinalizer(obj, 'kubernetes.io/pv-protection');
      break;
    }
    case 'persistentvolumeclaims': {
      const spec = ensureObj(o, 'spec');
      normalizeDataSources(spec);
      const defaultClass = options.defaultStorageClass;
      if (
        (spec.storageClassName === undefined || spec.storageClassName === null) &&
        defaultClass !== undefined &&
        defaultClass !== ''
      ) {
        spec.storageClassName = defaultClass;
      }
      if (options.storageProtection !== false) addFinalizer(obj, 'kubernetes.io/pvc-protection');
      break;
    }
    case 'pods': {
      const spec = ensureObj(o, 'spec');
      if (options.serviceAccountTokenVolume !== undefined) addTokenVolume(spec, options.serviceAccountTokenVolume);
      const status = ensureObj(o, 'status');
      const conditions = objects(status.conditions);
      if (asArr(spec.schedulingGates).length > 0 && !conditions.some((c) => c.type === 'PodScheduled')) {
        status.conditions = [
          ...asArr(status.conditions),
          {
            type: 'PodScheduled',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: null,
            reason: 'SchedulingGated',
            message: 'Scheduling is blocked due to non-empty scheduling gates',
          },
        ];
      }
      break;
    }
    default:
  }
  applyDefaults(resource, obj);
}

/**
 * Everything the server does to an updated object before validating it, for a caller that has already carried over
 * the stored status (main resource) or spec (status subresource) and system metadata: `applyDefaults`, then the
 * update-only rules: a Namespace keeps its stored `spec.finalizers` (only the finalize subresource changes them), a
 * PV status update stamps `lastPhaseTransitionTime` when the phase changes (or keeps the stored one), and a
 * pods/status update without `qosClass` keeps the stored class.
 */
export function defaultsForUpdate(
  resource: ResourceType,
  obj: KubeObject,
  old: KubeObject,
  subresource?: 'status',
  options: DefaultsOptions = {},
): void {
  const o: Obj = obj;
  switch (resourceKey(resource)) {
    case 'namespaces':
      if (subresource === undefined) {
        const oldFinalizers = asObj(old.spec)?.finalizers;
        const spec = ensureObj(o, 'spec');
        if (oldFinalizers === undefined) delete spec.finalizers;
        else spec.finalizers = structuredClone(oldFinalizers);
      }
      break;
    case 'persistentvolumes':
      if (subresource === 'status') {
        const status = ensureObj(o, 'status');
        const oldStatus = asObj(old.status) ?? {};
        const time = status.lastPhaseTransitionTime;
        if (status.phase === oldStatus.phase) {
          if (time === undefined || time === null) status.lastPhaseTransitionTime = oldStatus.lastPhaseTransitionTime;
        } else if (time === undefined || time === null || semanticEqual(time, oldStatus.lastPhaseTransitionTime)) {
          status.lastPhaseTransitionTime = rfc3339(options.now ?? new Date());
        }
      }
      break;
    case 'pods':
      if (subresource === 'status') setIfUnset(ensureObj(o, 'status'), 'qosClass', asObj(old.status)?.qosClass);
      break;
    default:
  }
  applyDefaults(resource, obj);
}
