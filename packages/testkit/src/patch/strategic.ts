/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) as kube-apiserver applies it with
 * `strategicpatch.StrategicMergeMapPatch`: a merge patch whose lists either replace or, for fields tagged
 * `patchStrategy:"merge"`, merge element by element (by `patchMergeKey`, or by value for lists of scalars), plus the
 * directives `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
 *
 * The patch tags of the fields our resources use are listed below instead of being read from Go structs. Errors
 * keep the apiserver's status: malformed directive keys are 400 BadRequest, lists of lists 422, and the errors the
 * apiserver passes through unconverted (unknown `$patch` value, missing merge key, ...) 500 without a reason.
 */

import { clone, isPlainObject } from '../api/objects.js';
import { StatusError, badRequest } from '../api/status.js';

type Obj = Record<string, unknown>;

/** Patch metadata of a field: its list strategy and the fields of its value (or of its list elements). */
interface FieldSchema {
  /** `patchStrategy:"merge"`; lists without it are replaced as a whole. */
  readonly merge?: boolean;
  /** `patchMergeKey`, for merge lists of objects. */
  readonly mergeKey?: string;
  readonly fields?: Readonly<Record<string, FieldSchema>>;
}

const mergeList = (mergeKey?: string, fields?: Readonly<Record<string, FieldSchema>>): FieldSchema => ({
  merge: true,
  mergeKey,
  fields,
});
const struct = (fields: Readonly<Record<string, FieldSchema>>): FieldSchema => ({ fields });

// Tags from k8s.io/api core/v1 and meta/v1 types.
const METADATA = struct({ finalizers: mergeList(), ownerReferences: mergeList('uid') });
const CONTAINER = {
  ports: mergeList('containerPort'),
  env: mergeList('name'),
  volumeMounts: mergeList('mountPath'),
  volumeDevices: mergeList('devicePath'),
};
const CONDITIONS = mergeList('type');

const POD_SPEC = struct({
  containers: mergeList('name', CONTAINER),
  initContainers: mergeList('name', CONTAINER),
  ephemeralContainers: mergeList('name', CONTAINER),
  volumes: mergeList('name'),
  imagePullSecrets: mergeList('name'),
  hostAliases: mergeList('ip'),
  topologySpreadConstraints: mergeList('topologyKey'),
  resourceClaims: mergeList('name'),
  schedulingGates: mergeList('name'),
});

const SCHEMAS: Readonly<Record<string, FieldSchema>> = {
  pods: struct({
    metadata: METADATA,
    spec: POD_SPEC,
    status: struct({
      conditions: CONDITIONS,
      podIPs: mergeList('ip'),
      hostIPs: mergeList('ip'),
      resourceClaimStatuses: mergeList('name'),
    }),
  }),
  nodes: struct({
    metadata: METADATA,
    spec: struct({ podCIDRs: mergeList() }),
    status: struct({ conditions: CONDITIONS, addresses: mergeList('type') }),
  }),
  persistentvolumeclaims: struct({ metadata: METADATA, status: struct({ conditions: CONDITIONS }) }),
  namespaces: struct({ metadata: METADATA, status: struct({ conditions: CONDITIONS }) }),
  serviceaccounts: struct({ metadata: METADATA, secrets: mergeList('name') }),
  'batch/jobs': struct({
    metadata: METADATA,
    spec: struct({ template: struct({ metadata: METADATA, spec: POD_SPEC }) }),
    status: struct({ conditions: CONDITIONS }),
  }),
};
const DEFAULT_SCHEMA = struct({ metadata: METADATA });

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PREFIX = '$deleteFromPrimitiveList';
const ORDER_PREFIX = '$setElementOrder';

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function put(obj: Obj, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function child(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  return schema?.fields !== undefined && has(schema.fields, key) ? schema.fields[key] : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors, with Go's fmt rendering of the values they quote.

function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  // %v of a float64 is the shortest %g: exponent form below 1e-4 and from 1e6 on.
  const [mantissa = '', exponentText = '0'] = n.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return String(n);
  const sign = exponent < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** Go's `%v` of a decoded JSON value. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isPlainObject(v)) {
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goValue(v[k])}`)
      .join(' ')}]`;
  }
  return typeof v === 'bigint' ? v.toString() : '?';
}

/** `reflect.TypeOf(v)` of a decoded JSON value, as `%s` prints it. */
function goType(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

/** Go's `%s` of a decoded JSON value. */
function goString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (typeof v === 'number' || typeof v === 'boolean') return `%!s(${goType(v)}=${goValue(v)})`;
  return goValue(v);
}

/** An error the apiserver does not convert to a status: answered as 500 with the bare message and no reason. */
const passthrough = (message: string): StatusError => new StatusError(500, '', message);

const badArgType = (expected: string, actual: unknown): StatusError =>
  passthrough(`expected a ${expected}, but received a ${goType(actual)}`);

const noMergeKey = (m: unknown, key: string): StatusError =>
  passthrough(`map: ${goValue(m)} does not contain declared merge key: ${key}`);

const unknownPatchType = (directive: unknown, m: unknown): StatusError =>
  passthrough(`unknown patch type: ${goString(directive)} in map: ${goValue(m)}`);

function listOfLists(): StatusError {
  const err = new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  err.cause = new Error('lists of lists are not supported');
  return err;
}

/** The field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key names. */
function directiveTarget(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw badRequest(
      prefix === DELETE_PREFIX
        ? 'invalid patch format of primitive list'
        : 'invalid patch format of setElementOrder list',
    );
  }
  return key.slice(slash + 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Merging.

type Kind = 'map' | 'list' | 'string' | 'number' | 'bool' | 'null';

function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  if (isPlainObject(v)) return 'map';
  if (typeof v === 'string') return 'string';
  return typeof v === 'number' ? 'number' : 'bool';
}

const isDirectiveKey = (k: string): boolean =>
  k === PATCH || k === RETAIN_KEYS || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX);

/**
 * A patch value the real server takes as it is (a replaced list, a `$patch: replace` map, an element appended to a
 * merge list): directive keys and `null` members are dropped, since the typed decode that follows never keeps them.
 */
function sanitize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sanitize);
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const [k, value] of Object.entries(v)) {
    if (value !== null && !isDirectiveKey(k)) put(out, k, sanitize(value));
  }
  return out;
}

/**
 * A patch value for a field the live object lacks, or whose type changes (`discardNullValuesFromPatch` and
 * `removeDirectives`): `null` members go, and so does every map that carries a `$patch` directive, whatever its
 * value, together with the list element or field holding it. The other directive keys are dropped too, as the
 * typed decode in the real server drops them. `keep` is false when the value itself is to be dropped.
 */
function fresh(v: unknown): { keep: boolean; value: unknown } {
  if (Array.isArray(v)) {
    const items: unknown[] = [];
    for (const item of v) {
      const f = fresh(item);
      if (f.keep) items.push(f.value);
    }
    return { keep: true, value: items };
  }
  if (!isPlainObject(v)) return { keep: true, value: v };
  if (has(v, PATCH)) return { keep: false, value: undefined };
  const out: Obj = {};
  for (const [k, value] of Object.entries(v)) {
    if (value === null || isDirectiveKey(k)) continue;
    const f = fresh(value);
    if (f.keep) put(out, k, f.value);
  }
  return { keep: true, value: out };
}

/** The kind shared by all elements of the lists (`sliceElementType`). */
function elementKind(original: readonly unknown[], patch: readonly unknown[]): Kind {
  let kind: Kind | undefined;
  for (const v of [...original, ...patch]) {
    const k = kindOf(v);
    if (kind === undefined) {
      if (k === 'list') throw listOfLists();
      kind = k;
    } else if (k !== kind) {
      throw passthrough(`list element types are not identical: ${goValue([original, patch])}`);
    }
  }
  return kind ?? 'null';
}

/** Checks that every element is an object carrying the merge key. */
function requireMergeKeys(mergeKey: string, ...lists: (readonly unknown[])[]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isPlainObject(item)) throw badArgType('map[string]interface {}', item);
      if (!has(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
  }
}

/**
 * Orders a merged list as `normalizeElementOrder` does: the patch's items in patch order, the server-only items in
 * their live order, and each server-only item placed before the first patch item that follows it in the live list.
 * New items therefore come before the server-only items that have no patch item ahead of them.
 */
function normalizeOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  mergeKey: string | undefined,
): unknown[] {
  if (mergeKey !== undefined) {
    requireMergeKeys(mergeKey, patchItems, patchOrder);
    requireMergeKeys(mergeKey, serverOnly, serverOrder);
  }
  const id = (x: unknown): unknown => (mergeKey !== undefined && isPlainObject(x) ? x[mergeKey] : x);
  const indexIn = (list: readonly unknown[], x: unknown): number => {
    const wanted = id(x);
    return list.findIndex((y) => id(y) === wanted);
  };
  const sortBy = (items: unknown[], order: readonly unknown[]): unknown[] => {
    const unknown = items.filter((x) => indexIn(order, x) < 0);
    const known = items.filter((x) => indexIn(order, x) >= 0).sort((a, b) => indexIn(order, a) - indexIn(order, b));
    return [...unknown, ...known];
  };
  const left = sortBy(serverOnly, serverOrder);
  const right = sortBy(patchItems, patchOrder);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i]);
      const ri = indexIn(serverOrder, right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** Merges a patch list into a live list of a `patchStrategy:"merge"` field (`mergeSlice`). */
function mergeLists(original: unknown[], patch: unknown[], schema: FieldSchema, deleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  if (kind !== 'map') {
    if (deleteList) return original.filter((v) => !patch.includes(v));
    const merged = [...new Set([...original, ...patch])];
    const patchItems = merged.filter((v) => patch.includes(v));
    const serverOnly = merged.filter((v) => !patch.includes(v));
    return normalizeOrder(patchItems, serverOnly, patch, original, undefined);
  }
  const mergeKey = schema.mergeKey;
  if (mergeKey === undefined) {
    // Go names the kind of the field's element type: a list of structs, or the scalars of a merge list.
    throw passthrough(`cannot merge lists without merge key for ${schema.merge === true ? 'string' : 'struct'}`);
  }

  // Directive elements first: `$patch: delete` removes by merge key, `$patch: replace` drops the live list.
  let base = [...original];
  let replace = false;
  let regular: Obj[] = [];
  for (const item of patch as Obj[]) {
    if (!has(item, PATCH)) {
      regular.push(item);
      continue;
    }
    const directive = item[PATCH];
    if (directive === 'delete') {
      if (!has(item, mergeKey)) throw noMergeKey(item, mergeKey);
      base = base.filter((o) => !(isPlainObject(o) && has(o, mergeKey) && o[mergeKey] === item[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw passthrough('merging lists cannot yet be specified in the patch');
    } else {
      throw unknownPatchType(directive, item);
    }
  }
  if (replace) {
    base = regular.map(sanitize);
    regular = [];
  }

  const merged = [...base];
  for (const item of regular) {
    if (!has(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const at = merged.findIndex((o) => isPlainObject(o) && has(o, mergeKey) && o[mergeKey] === item[mergeKey]);
    if (at >= 0) merged[at] = mergeMaps(merged[at] as Obj, item, schema);
    else merged.push(sanitize(item));
  }
  const inPatch = (o: unknown): boolean =>
    isPlainObject(o) && regular.some((p) => has(p, mergeKey) && p[mergeKey] === o[mergeKey]);
  return normalizeOrder(
    merged.filter(inPatch),
    merged.filter((o) => !inPatch(o)),
    regular,
    base,
    mergeKey,
  );
}

/** `$retainKeys`: keys of the live map not listed are cleared; every set key of the patch must be listed. */
function applyRetainKeys(target: Obj, patch: Obj): void {
  if (!has(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw badRequest('invalid patch format of retainKeys');
  const retained = new Set(list.filter((k): k is string => typeof k === 'string'));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX)) continue;
    if (!retained.has(k)) throw badRequest('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(target)) if (!retained.has(k)) delete target[k];
}

/** `$setElementOrder/<field>`: merges that field now and orders it by the given list (`mergePatchIntoOriginal`). */
function applyElementOrder(target: Obj, patch: Obj, schema: FieldSchema | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(ORDER_PREFIX)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
    const key = directiveTarget(directiveKey, ORDER_PREFIX);
    const inTarget = has(target, key);
    const inPatch = has(patch, key);
    const live = target[key];
    const patched = patch[key];
    if (inTarget && !Array.isArray(live)) throw badArgType('[]interface {}', live);
    if (inPatch && !Array.isArray(patched)) throw badArgType('[]interface {}', patched);
    const liveList = inTarget ? (live as unknown[]) : [];
    const patchList = inPatch ? (patched as unknown[]) : [];
    const field = child(schema, key);
    const mergeKey = field?.mergeKey;
    checkPatchFollowsOrder(patchList, order, mergeKey);
    if (!inTarget && !inPatch) continue;

    let merged: unknown[];
    if (!inPatch) merged = liveList;
    else if (field?.merge === true) merged = mergeLists(liveList, patchList, field, false);
    else merged = sanitize(patchList) as unknown[];
    delete patch[key];

    const kind = elementKind(liveList, patchList);
    if (merged.length > 0 && (kind !== 'map' || mergeKey !== undefined)) {
      const ordered = (x: unknown): boolean =>
        kind === 'map' && mergeKey !== undefined
          ? isPlainObject(x) && order.some((o) => isPlainObject(o) && o[mergeKey] === x[mergeKey])
          : order.includes(x);
      merged = normalizeOrder(
        merged.filter(ordered),
        merged.filter((x) => !ordered(x)),
        order,
        liveList,
        kind === 'map' ? mergeKey : undefined,
      );
    }
    put(target, key, merged);
  }
}

/** The patch list must list its (non-deleted) items in the order of the `$setElementOrder` list. */
function checkPatchFollowsOrder(
  patchList: readonly unknown[],
  order: readonly unknown[],
  mergeKey: string | undefined,
): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== undefined) {
    for (const item of patchList) if (!isPlainObject(item)) throw badArgType('map[string]interface {}', item);
    items = patchList.filter((item) => !(isPlainObject(item) && item[PATCH] === 'delete'));
  }
  const same = (a: unknown, b: unknown): boolean => {
    if (mergeKey === undefined) return a === b;
    if (!isPlainObject(a)) throw badArgType('map[string]interface {}', a);
    if (!isPlainObject(b)) throw badArgType('map[string]interface {}', b);
    if (!has(a, mergeKey)) throw noMergeKey(a, mergeKey);
    if (!has(b, mergeKey)) throw noMergeKey(b, mergeKey);
    return a[mergeKey] === b[mergeKey];
  };
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p];
    if (isPlainObject(item) && has(item, PATCH)) {
      p++;
      continue;
    }
    if (same(item, order[o])) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw passthrough(
      `The order in patch list:\n${goValue(patchList)}\n doesn't match ${ORDER_PREFIX} list:\n${goValue(order)}\n`,
    );
  }
}

/** Merges a patch map into a live map (`mergeMap`); both belong to this module and may be modified. */
function mergeMaps(target: Obj | undefined, patch: Obj, schema: FieldSchema | undefined): Obj {
  if (has(patch, PATCH)) {
    const directive = patch[PATCH];
    if (directive === 'replace') return sanitize(patch) as Obj;
    if (directive === 'delete') return {};
    throw unknownPatchType(directive, patch);
  }
  const result = target ?? {};
  applyRetainKeys(result, patch);
  applyElementOrder(result, patch, schema);

  for (const [patchKey, value] of Object.entries(patch)) {
    let key = patchKey;
    let deleteList = false;
    if (patchKey.startsWith(DELETE_PREFIX)) {
      key = directiveTarget(patchKey, DELETE_PREFIX);
      deleteList = true;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = has(result, key) ? result[key] : undefined;
    if (current === undefined || kindOf(current) !== kindOf(value)) {
      // A new field, or one whose type changes, takes the patch value; a deletion list then has nothing to do.
      if (!deleteList) {
        const f = fresh(value);
        if (f.keep) put(result, key, f.value);
        else delete result[key];
      }
      continue;
    }
    const field = child(schema, key);
    if (isPlainObject(current)) {
      put(result, key, mergeMaps(current, value as Obj, field));
    } else if (Array.isArray(current)) {
      // Deletion lists apply whatever the field's strategy; other lists merge only with the merge strategy.
      const merges = field?.merge === true || deleteList;
      put(result, key, merges ? mergeLists(current, value as unknown[], field ?? {}, deleteList) : sanitize(value));
    } else {
      put(result, key, value);
    }
  }
  return result;
}

/**
 * Applies a strategic merge patch to an object of the given resource (a key as `resourceKey()` gives it) and
 * returns the result as a new value; neither input is modified.
 *
 * Maps merge as in a JSON merge patch (`null` deletes). Lists replace, except the merge lists of our resources:
 * `metadata.finalizers` (scalars: union without duplicates), `metadata.ownerReferences` by `uid`; for pods
 * `spec.containers`, `spec.initContainers` and `spec.ephemeralContainers` by `name` (and their `env` by `name`,
 * `volumeMounts` by `mountPath`, `volumeDevices` by `devicePath`, `ports` by `containerPort`), `spec.volumes`,
 * `spec.imagePullSecrets`, `spec.resourceClaims` and `spec.schedulingGates` by `name`, `spec.hostAliases` by `ip`,
 * `spec.topologySpreadConstraints` by `topologyKey`, `status.conditions` by `type`, `status.podIPs` and
 * `status.hostIPs` by `ip`; for nodes `spec.podCIDRs`, `status.conditions` and `status.addresses` by `type`;
 * `status.conditions` of PVCs and namespaces by `type`; service accounts' `secrets` by `name`. Without
 * `$setElementOrder`, items the patch adds go before the live items that no patch item precedes, as in the real
 * server.
 *
 * Directives: `$patch: replace` and `$patch: delete` on a map or a merge-list element (`delete` needs the merge
 * key), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`; none of them remains in
 * the result.
 *
 * @throws StatusError 400 BadRequest for a patch that is not a JSON object (`json: cannot unmarshal array into Go
 *   value of type map[string]interface {}`) or a malformed directive (`invalid patch format of retainKeys`,
 *   `invalid patch format of primitive list`, `invalid patch format of setElementOrder list`); 422 Invalid for a
 *   list of lists; 500 with no reason and the strategicpatch message for the errors the apiserver passes through,
 *   e.g. `unknown patch type: foo in map: map[$patch:foo]` or `map: map[$patch:delete] does not contain declared
 *   merge key: name`.
 */
export function applyStrategicMergePatch(resourceKey: string, target: unknown, patch: unknown): unknown {
  if (patch === null) return clone(target);
  if (!isPlainObject(patch)) {
    const kind = Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw badRequest(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`);
  }
  const schema = has(SCHEMAS, resourceKey) ? SCHEMAS[resourceKey] : DEFAULT_SCHEMA;
  const live: Obj = isPlainObject(target) ? clone(target) : {};
  return mergeMaps(live, clone(patch), schema);
}
