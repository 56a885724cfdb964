import { isPlainObject, type KubeObject } from './objects.js';
import { resourceKey, type ResourceType } from './resources.js';
import { canonicalQuantity, QuantityError } from '@kprov/quantity';
import { badRequest } from './status.js';

/**
 * Decoding of time fields as kube-apiserver's typed decode does it: `metav1.Time` accepts any RFC 3339 time and is
 * stored and served with whole seconds; `metav1.MicroTime` must carry exactly six fractional digits (a JavaScript
 * `toISOString()` with three is refused with 400, which is why clients must send `V1MicroTime`).
 */

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

type Kind = 'time' | 'micro';

/** Paths of time fields per resource key; `*` walks every element of a list, `**` every value of a map. */
const TIME_FIELDS: Record<string, readonly (readonly [string, Kind])[]> = {
  'coordination.k8s.io/leases': [
    ['spec.acquireTime', 'micro'],
    ['spec.renewTime', 'micro'],
  ],
  events: [
    ['firstTimestamp', 'time'],
    ['lastTimestamp', 'time'],
    ['eventTime', 'micro'],
    ['series.lastObservedTime', 'micro'],
  ],
  'events.k8s.io/events': [
    ['eventTime', 'micro'],
    ['series.lastObservedTime', 'micro'],
    ['deprecatedFirstTimestamp', 'time'],
    ['deprecatedLastTimestamp', 'time'],
  ],
  pods: [
    ['status.startTime', 'time'],
    ['status.conditions.*.lastProbeTime', 'time'],
    ['status.conditions.*.lastTransitionTime', 'time'],
    ['status.containerStatuses.*.state.**.startedAt', 'time'],
    ['status.containerStatuses.*.state.**.finishedAt', 'time'],
    ['status.initContainerStatuses.*.state.**.startedAt', 'time'],
    ['status.initContainerStatuses.*.state.**.finishedAt', 'time'],
  ],
  persistentvolumes: [['status.lastPhaseTransitionTime', 'time']],
  persistentvolumeclaims: [
    ['status.conditions.*.lastProbeTime', 'time'],
    ['status.conditions.*.lastTransitionTime', 'time'],
  ],
  nodes: [
    ['status.conditions.*.lastHeartbeatTime', 'time'],
    ['status.conditions.*.lastTransitionTime', 'time'],
  ],
};

function fail(r: ResourceType, detail: string): never {
  throw badRequest(`${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${detail}`);
}

function normalize(r: ResourceType, value: unknown, kind: Kind): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'string') fail(r, `json: cannot unmarshal ${typeof value} into Go value of type string`);
  if (kind === 'micro') {
    if (!RFC3339_MICRO.test(value)) {
      const dot = value.indexOf('.');
      const rest = dot < 0 ? value.slice(19) : value.slice(dot);
      fail(r, `parsing time "${value}" as "${MICRO_LAYOUT}": cannot parse "${rest}" as ".000000"`);
    }
    const ms = Date.parse(value);
    const micro = value.slice(value.indexOf('.') + 1, value.indexOf('.') + 7);
    return `${new Date(ms).toISOString().slice(0, 19)}.${micro}Z`;
  }
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    fail(r, `parsing time "${value}" as "2006-01-02T15:04:05Z07:00": cannot parse "${value}" as "2006"`);
  }
  return new Date(Date.parse(value)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function walk(r: ResourceType, node: unknown, path: readonly string[], kind: Kind): void {
  if (!isPlainObject(node) && !Array.isArray(node)) return;
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === '*') {
    if (Array.isArray(node)) for (const item of node) walk(r, item, rest, kind);
    return;
  }
  if (head === '**') {
    if (isPlainObject(node)) for (const v of Object.values(node)) walk(r, v, rest, kind);
    return;
  }
  if (!isPlainObject(node) || !(head in node)) return;
  if (rest.length === 0) node[head] = normalize(r, node[head], kind);
  else walk(r, node[head], rest, kind);
}

/** Checks and normalises the time fields of an object in place; throws 400 BadRequest for a malformed one. */
export function decodeTimes(r: ResourceType, obj: KubeObject): void {
  for (const [path, kind] of TIME_FIELDS[resourceKey(r)] ?? []) walk(r, obj, path.split('.'), kind);
  const meta = obj.metadata as Record<string, unknown>;
  for (const f of ['creationTimestamp', 'deletionTimestamp']) {
    if (f in meta) meta[f] = normalize(r, meta[f], 'time');
  }
}

const RESOURCES = (prefix: string): string[] => [`${prefix}.requests.**`, `${prefix}.limits.**`];
const CONTAINER = (list: string): string[] => [
  ...RESOURCES(`spec.${list}.*.resources`),
  `spec.${list}.*.env.*.valueFrom.resourceFieldRef.divisor`,
];
const CONTAINER_STATUS = (list: string): string[] => [
  `status.${list}.*.allocatedResources.**`,
  ...RESOURCES(`status.${list}.*.resources`),
];

/**
 * Paths of `resource.Quantity` fields per resource key; `*` walks every element of a list, and a final `**` takes
 * every value of a map (a `ResourceList`).
 */
const QUANTITY_FIELDS: Record<string, readonly string[]> = {
  persistentvolumeclaims: [...RESOURCES('spec.resources'), 'status.capacity.**', 'status.allocatedResources.**'],
  persistentvolumes: ['spec.capacity.**'],
  pods: [
    ...CONTAINER('containers'),
    ...CONTAINER('initContainers'),
    ...CONTAINER('ephemeralContainers'),
    'spec.overhead.**',
    ...RESOURCES('spec.resources'),
    'spec.volumes.*.emptyDir.sizeLimit',
    ...RESOURCES('spec.volumes.*.ephemeral.volumeClaimTemplate.spec.resources'),
    'spec.volumes.*.downwardAPI.items.*.resourceFieldRef.divisor',
    'spec.volumes.*.projected.sources.*.downwardAPI.items.*.resourceFieldRef.divisor',
    ...CONTAINER_STATUS('containerStatuses'),
    ...CONTAINER_STATUS('initContainerStatuses'),
    ...CONTAINER_STATUS('ephemeralContainerStatuses'),
  ],
  nodes: ['status.capacity.**', 'status.allocatable.**'],
};

function quantity(r: ResourceType, value: unknown): unknown {
  if (value === undefined) return value;
  try {
    return canonicalQuantity(value);
  } catch (e) {
    if (e instanceof QuantityError) fail(r, e.message);
    throw e;
  }
}

function walkQuantities(r: ResourceType, node: unknown, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === '*') {
    if (Array.isArray(node)) for (const item of node) walkQuantities(r, item, rest);
    return;
  }
  if (!isPlainObject(node)) return;
  if (head === '**') {
    for (const k of Object.keys(node)) node[k] = quantity(r, node[k]);
    return;
  }
  if (!(head in node)) return;
  if (rest.length === 0) node[head] = quantity(r, node[head]);
  else walkQuantities(r, node[head], rest);
}

/**
 * Parses the quantity fields of an object in place and leaves them as the server serves them back (canonical, or
 * the client's spelling when that was canonical); throws 400 BadRequest, as the decoder does, for one that does not
 * parse.
 */
export function decodeQuantities(r: ResourceType, obj: KubeObject): void {
  for (const path of QUANTITY_FIELDS[resourceKey(r)] ?? []) walkQuantities(r, obj, path.split('.'));
}
