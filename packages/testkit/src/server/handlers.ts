import { isPlainObject, type KubeObject } from '../api/objects.js';
import { resourceKey, type ResourceType } from '../api/resources.js';
import {
  badRequest,
  invalid,
  invalidValue,
  methodNotAllowed,
  notFound,
  notSupported,
  StatusError,
} from '../api/status.js';
import { applyJsonPatch } from '../patch/json.js';
import { applyMergePatch, checkMergePatchBody } from '../patch/merge.js';
import { applyStrategicMergePatch } from '../patch/strategic.js';
import type { ObjectStore, PropagationPolicy } from '../store/store.js';
import { parseObjectBody, parsePatchBody, type RequestBody } from './body.js';

/** What a handler returns: a status code and a JSON body (or text for pod logs). */
export interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
  /** Sent as `Warning: 299 - "<text>"` headers, as the registries' warnings are. */
  warnings?: string[];
}

/** Patch content types the server accepts, in the order kube-apiserver lists them. */
export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

/** Resources whose registry answers a delete with the deleted object rather than a Status. */
const RETURNS_DELETED_OBJECT = new Set([
  'pods',
  'persistentvolumes',
  'persistentvolumeclaims',
  'namespaces',
  'serviceaccounts',
  'storage.k8s.io/storageclasses',
]);

function apiVersion(r: ResourceType): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** Checks the body's apiVersion, kind and namespace against the URL, as the real handlers do. */
export function checkBody(r: ResourceType, obj: Record<string, unknown>, namespace: string | undefined): KubeObject {
  const av = obj.apiVersion;
  if (typeof av === 'string' && av !== '' && av !== apiVersion(r)) {
    throw badRequest(`the API version in the data (${av}) does not match the expected API version (${apiVersion(r)})`);
  }
  const kind = obj.kind;
  if (typeof kind === 'string' && kind !== '' && kind !== r.kind) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${r.kind}): couldn't get version/kind; json parse error: kind ${kind} is not ${r.kind}`,
    );
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (!isPlainObject(obj.metadata)) {
    throw badRequest(
      `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: json: cannot unmarshal ${typeof obj.metadata} into Go struct field ${r.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  const meta = obj.metadata;
  if (r.namespaced && namespace !== undefined) {
    if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace;
  }
  return obj as KubeObject;
}

export function handleCreate(
  store: ObjectStore,
  r: ResourceType,
  namespace: string | undefined,
  body: RequestBody,
  dryRun = false,
): Reply {
  if (r.namespaced && namespace === undefined) throw methodNotAllowed();
  const obj = checkBody(r, parseObjectBody(body, r.kind), namespace);
  return { status: 201, body: store.create(r, obj, { dryRun }) };
}

export function handleUpdate(
  store: ObjectStore,
  r: ResourceType,
  namespace: string | undefined,
  name: string,
  subresource: 'status' | undefined,
  body: RequestBody,
  dryRun = false,
): Reply {
  const obj = checkBody(r, parseObjectBody(body, r.kind), namespace);
  const bodyName = obj.metadata.name;
  if (bodyName === undefined || bodyName === '') obj.metadata.name = name;
  else if (bodyName !== name) {
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  }
  return { status: 200, body: store.update(r, obj, { ...(subresource === undefined ? {} : { subresource }), dryRun }) };
}

/** Applies a patch of any supported type to the stored object and writes the result with optimistic concurrency. */
export function handlePatch(
  store: ObjectStore,
  r: ResourceType,
  namespace: string | undefined,
  name: string,
  subresource: 'status' | undefined,
  body: RequestBody,
  fieldManager: string | null,
  dryRun = false,
): Reply {
  const type = body.mediaType;
  // The router accepts only these for PATCH; it answers anything else itself, without naming them.
  if (!(PATCH_TYPES as readonly string[]).includes(type))
    throw new StatusError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
  const text = body.bytes.toString('utf8');
  const current = store.get(r, namespace, name);
  const options = { ...(subresource === undefined ? {} : { subresource }), dryRun };
  if (type === 'application/apply-patch+yaml') {
    if (fieldManager === null || fieldManager === '') {
      throw badRequest(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    }
    const applied = checkBody(
      r,
      parseObjectBody({ bytes: body.bytes, mediaType: 'application/yaml' }, r.kind),
      namespace,
    );
    if (current === undefined) {
      if (subresource !== undefined) throw notFound(r, name);
      applied.metadata.name = name;
      return { status: 201, body: store.create(r, applied, { dryRun }) };
    }
    const merged = applyMergePatch(current, applied) as KubeObject;
    return { status: 200, body: store.update(r, merged, options) };
  }
  if (current === undefined) throw notFound(r, name);
  const patch = parsePatchBody(text);
  let patched: unknown;
  if (type === 'application/json-patch+json') patched = applyJsonPatch(current, patch);
  else if (type === 'application/merge-patch+json') {
    checkMergePatchBody(patch);
    patched = applyMergePatch(current, patch);
  } else patched = applyStrategicMergePatch(resourceKey(r), current, patch);
  if (!isPlainObject(patched) || !isPlainObject(patched.metadata)) {
    throw badRequest('the patch produced an object without metadata');
  }
  const next = patched as KubeObject;
  if (next.metadata.name !== name) {
    throw badRequest(
      `the name of the object (${String(next.metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
  return { status: 200, body: store.update(r, next, options) };
}

interface DeleteBody {
  preconditions?: { uid?: string; resourceVersion?: string };
  /** From `propagationPolicy`, or the deprecated `orphanDependents` (true: Orphan; false: the default's opposite). */
  propagationPolicy?: PropagationPolicy;
}

const POLICIES: readonly string[] = ['Foreground', 'Background', 'Orphan'];

/** The warning of a batch/v1 Job deleted without a policy (the Job registry's `deleteOptionWarnings`). */
export const JOB_ORPHAN_WARNING =
  'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning';

/** The propagation of `propagationPolicy` and `orphanDependents`, checked as `ValidateDeleteOptions` checks them. */
function propagationOf(policy: unknown, orphan: unknown): PropagationPolicy | undefined {
  const text =
    policy === undefined || policy === null ? undefined : typeof policy === 'string' ? policy : JSON.stringify(policy);
  const errs = [];
  if (orphan !== undefined && orphan !== null && text !== undefined)
    errs.push(invalidValue('propagationPolicy', text, 'orphanDependents and deletionPropagation cannot be both set'));
  if (text !== undefined && !POLICIES.includes(text))
    errs.push(notSupported('propagationPolicy', text, [...POLICIES, 'nil']));
  if (errs.length > 0) throw invalid('meta.k8s.io', 'DeleteOptions', '', errs);
  if (orphan === true) return 'Orphan';
  if (orphan === false) return 'Background';
  return text as PropagationPolicy | undefined;
}

/** DeleteOptions from the body, or, without a body, from the query parameters (as the real handler reads them). */
function parseDeleteBody(body: RequestBody, query: URLSearchParams): DeleteBody {
  if (body.bytes.toString('utf8').trim() === '') {
    const orphan = query.get('orphanDependents');
    const policy = propagationOf(query.get('propagationPolicy'), orphan === null ? undefined : orphan === 'true');
    return policy === undefined ? {} : { propagationPolicy: policy };
  }
  const parsed = parseObjectBody(body, 'DeleteOptions');
  const out: DeleteBody = {};
  const policy = propagationOf(parsed.propagationPolicy, parsed.orphanDependents);
  if (policy !== undefined) out.propagationPolicy = policy;
  const pre = parsed.preconditions;
  if (pre === undefined || pre === null) return out;
  if (!isPlainObject(pre)) throw badRequest('DeleteOptions.preconditions must be an object');
  out.preconditions = {};
  if (typeof pre.uid === 'string') out.preconditions.uid = pre.uid;
  if (typeof pre.resourceVersion === 'string') out.preconditions.resourceVersion = pre.resourceVersion;
  return out;
}

/**
 * The policy a delete without one gets: batch/v1 Jobs orphan their pods (the Job registry's
 * `DefaultGarbageCollectionPolicy`, kept for backwards compatibility, with a warning); everything else is deleted in
 * the background.
 */
function defaultPolicy(r: ResourceType): { policy: PropagationPolicy; warnings?: string[] } {
  if (resourceKey(r) === 'batch/jobs') return { policy: 'Orphan', warnings: [JOB_ORPHAN_WARNING] };
  return { policy: 'Background' };
}

function successStatus(r: ResourceType, obj: KubeObject): object {
  const details: Record<string, string> = { name: obj.metadata.name ?? '' };
  if (r.group !== '') details.group = r.group;
  details.kind = r.plural;
  details.uid = obj.metadata.uid ?? '';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

export function handleDelete(
  store: ObjectStore,
  r: ResourceType,
  namespace: string | undefined,
  name: string,
  body: RequestBody,
  query: URLSearchParams,
  dryRun = false,
): Reply {
  const options = parseDeleteBody(body, query);
  const fallback = defaultPolicy(r);
  const propagationPolicy = options.propagationPolicy ?? fallback.policy;
  const warnings = options.propagationPolicy === undefined ? fallback.warnings : undefined;
  const result = store.delete(r, namespace, name, options.preconditions ?? {}, { dryRun, propagationPolicy });
  const reply: Reply =
    !result.deleted || RETURNS_DELETED_OBJECT.has(resourceKey(r))
      ? { status: 200, body: result.object }
      : { status: 200, body: successStatus(r, result.object) };
  return warnings === undefined ? reply : { ...reply, warnings };
}

export function handleDeleteCollection(
  store: ObjectStore,
  r: ResourceType,
  items: KubeObject[],
  body: RequestBody,
  query: URLSearchParams,
  dryRun = false,
): Reply {
  const options = parseDeleteBody(body, query);
  const fallback = defaultPolicy(r);
  const propagationPolicy = options.propagationPolicy ?? fallback.policy;
  const deleted: KubeObject[] = [];
  for (const o of items) {
    try {
      deleted.push(
        store.delete(r, o.metadata.namespace, o.metadata.name ?? '', {}, { dryRun, propagationPolicy }).object,
      );
    } catch (e) {
      // Gone meanwhile (a namespace cascade, a finalizer): the real server skips those too.
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
  return {
    status: 200,
    body: {
      kind: `${r.kind}List`,
      apiVersion: apiVersion(r),
      metadata: { resourceVersion: String(store.resourceVersion) },
      items: deleted,
    },
  };
}

/** POST pods/{name}/binding: assigns the pod to the target node. */
export function handleBinding(store: ObjectStore, namespace: string, name: string, body: RequestBody): Reply {
  const target = parseObjectBody(body, 'Binding').target;
  if (!isPlainObject(target) || typeof target.name !== 'string' || target.name === '') {
    throw new StatusError(422, 'Invalid', `Binding.core "${name}" is invalid: target.name: Required value`, {
      name,
      kind: 'Binding',
      causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' }],
    });
  }
  store.bindPod(namespace, name, target.name);
  return { status: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
}
