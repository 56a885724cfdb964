import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { clone, isPlainObject, type KubeObject } from '../api/objects.js';
import { RESOURCES, resourceByKey, resourceKey, type ResourceType } from '../api/resources.js';
import { decodeQuantities, decodeTimes } from '../api/decode.js';
import { defaultsForCreate, defaultsForUpdate } from '../api/defaults.js';
import { validateCreate, validateUpdate } from '../api/validation.js';
import { alreadyExists, conflict, forbidden, invalid, notFound, OBJECT_MODIFIED, StatusError } from '../api/status.js';
import { ChangeHistory, type Change, type ChangeType } from './history.js';
import { prepareForCreate, prepareForUpdate } from './strategy.js';

/** Options of {@link ObjectStore}. */
export interface StoreOptions {
  /** How many recent changes (across all resources) a watch can resume from. Default 1000. */
  historySize?: number;
  /** Namespaces that exist from the start. Default `default`, `kube-system`, `kube-public`, `kube-node-lease`. */
  namespaces?: readonly string[];
  /**
   * Add `kubernetes.io/pvc-protection` and `kubernetes.io/pv-protection` finalizers on create, as the
   * StorageObjectInUseProtection admission plugin does. Something must then remove them (the PV binder
   * simulation does). Default false.
   */
  storageProtection?: boolean;
}

/** A resource given by its type or by its key (`persistentvolumeclaims`, `storage.k8s.io/storageclasses`). */
export type ResourceRef = ResourceType | string;

/** Options of a write. */
export interface WriteOptions {
  /** Write through the `status` subresource: only `.status` changes. */
  subresource?: 'status';
  /** Server-side dry run (`dryRun=All`): everything but storing the result; the answer is what would be stored. */
  dryRun?: boolean;
}

/** `DeleteOptions.propagationPolicy`: what happens to the object's dependents (those naming it in `ownerReferences`). */
export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

/** Options of a delete. */
export interface DeleteOptions extends Pick<WriteOptions, 'dryRun'> {
  /**
   * When given, the garbage collector's finalizer is set as the registry sets it: `foregroundDeletion` (the object
   * goes once its blocking dependents are gone) for Foreground, `orphan` (its dependents lose their reference to it
   * first) for Orphan, neither for Background. Without it, nothing is added (the in-process callers' deletes).
   */
  propagationPolicy?: PropagationPolicy;
}

/** The garbage collector's finalizers. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** The finalizers after `deletionFinalizersForGarbageCollection` for `policy`; `undefined` when they do not change. */
function gcFinalizers(finalizers: readonly string[], policy: PropagationPolicy | undefined): string[] | undefined {
  if (policy === undefined) return undefined;
  const others = finalizers.filter((f) => f !== FOREGROUND_FINALIZER && f !== ORPHAN_FINALIZER);
  const next =
    policy === 'Foreground'
      ? [...others, FOREGROUND_FINALIZER]
      : policy === 'Orphan'
        ? [...others, ORPHAN_FINALIZER]
        : others;
  return isDeepStrictEqual(next, finalizers) ? undefined : next;
}

/** Preconditions of a delete, as in `DeleteOptions.preconditions`. */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteResult {
  /** The object: its last state when removed, or the state with `deletionTimestamp` while finalizers remain. */
  object: KubeObject;
  /** Whether the object is gone now. */
  deleted: boolean;
}

export type ChangeListener = (change: Change) => void;

/** Removes a listener. */
export type Unsubscribe = () => void;

export const DEFAULT_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const GENERATE_NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

function resolve(ref: ResourceRef): ResourceType {
  return typeof ref === 'string' ? resourceByKey(ref) : ref;
}

function storageKey(r: ResourceType, namespace: string | undefined, name: string): string {
  return r.namespaced ? `${namespace ?? ''}/${name}` : name;
}

/** RFC 3339 with whole seconds, as metav1.Time serialises. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Empty lists and maps of metadata are left out, as Go's `omitempty` leaves them out of what is stored and served. */
function dropEmptyMetadata(obj: KubeObject): void {
  const meta = obj.metadata as Record<string, unknown>;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
    const v = meta[k];
    if (v === null || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0))
      delete meta[k];
  }
}

function sameExceptResourceVersion(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): unknown => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return isDeepStrictEqual(strip(a), strip(b));
}

/**
 * The API server's storage: objects per resource, one global resourceVersion, a change history for watches,
 * and the write semantics of kube-apiserver's generic registry (defaulting, validation, optimistic concurrency,
 * status subresource, finalizers, namespace lifecycle). Synchronous: every call commits at once, in order.
 */
export class ObjectStore {
  readonly history: ChangeHistory;
  private rv = 1;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly storageProtection: boolean;

  constructor(options: StoreOptions = {}) {
    this.storageProtection = options.storageProtection ?? false;
    this.history = new ChangeHistory(options.historySize ?? 1000, this.rv);
    for (const r of RESOURCES) this.objects.set(resourceKey(r), new Map());
    for (const ns of options.namespaces ?? DEFAULT_NAMESPACES) {
      this.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
  }

  /** The newest resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Calls `listener` synchronously after every committed change. */
  subscribe(listener: ChangeListener): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private table(r: ResourceType): Map<string, KubeObject> {
    const t = this.objects.get(resourceKey(r));
    if (t === undefined) throw new Error(`no table for ${resourceKey(r)}`);
    return t;
  }

  /** A copy of the object, or `undefined`. */
  get(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject | undefined {
    const r = resolve(ref);
    const o = this.table(r).get(storageKey(r, namespace, name));
    return o === undefined ? undefined : clone(o);
  }

  /** Like {@link get}, but throws 404 NotFound. */
  mustGet(ref: ResourceRef, namespace: string | undefined, name: string): KubeObject {
    const r = resolve(ref);
    const o = this.get(r, namespace, name);
    if (o === undefined) throw notFound(r, name);
    return o;
  }

  /**
   * The stored objects themselves, in no particular order, without copying: for in-process readers (the
   * simulations) that scan many objects often. Never mutate them; write through {@link update} or {@link modify}.
   */
  peek(ref: ResourceRef): readonly Readonly<KubeObject>[] {
    return [...this.table(resolve(ref)).values()];
  }

  /**
   * The stored object itself, or `undefined`, without copying: for in-process readers (the simulations) on hot
   * paths. Never mutate it; a write replaces the stored object, so a reference keeps showing the version it was.
   */
  peekObject(ref: ResourceRef, namespace: string | undefined, name: string): Readonly<KubeObject> | undefined {
    const r = resolve(ref);
    return this.table(r).get(storageKey(r, namespace, name));
  }

  /** Copies of the objects, in storage key order (namespace, then name), optionally of one namespace. */
  list(ref: ResourceRef, namespace?: string): KubeObject[] {
    const r = resolve(ref);
    const t = this.table(r);
    const keys = [...t.keys()].sort();
    const out: KubeObject[] = [];
    for (const k of keys) {
      const o = t.get(k);
      if (o === undefined) continue;
      if (namespace !== undefined && r.namespaced && o.metadata.namespace !== namespace) continue;
      out.push(clone(o));
    }
    return out;
  }

  private commit(r: ResourceType, type: ChangeType, object: KubeObject, previous?: KubeObject): KubeObject {
    this.rv += 1;
    object.metadata.resourceVersion = String(this.rv);
    const key = storageKey(r, object.metadata.namespace, object.metadata.name ?? '');
    if (type === 'DELETED') this.table(r).delete(key);
    else this.table(r).set(key, object);
    const change: Change = { resource: resourceKey(r), type, object, resourceVersion: this.rv };
    if (previous !== undefined) change.previous = previous;
    this.history.append(change);
    for (const l of [...this.listeners]) l(change);
    return clone(object);
  }

  private checkNamespace(r: ResourceType, namespace: string | undefined, name: string): void {
    if (!r.namespaced) return;
    const ns = this.table(resourceByKey('namespaces')).get(namespace ?? '');
    if (ns === undefined) throw notFound({ group: '', plural: 'namespaces' }, namespace ?? '');
    if (ns.metadata.deletionTimestamp !== undefined) {
      throw new StatusError(
        403,
        'Forbidden',
        `${r.group === '' ? r.plural : `${r.plural}.${r.group}`} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          name,
          ...(r.group === '' ? {} : { group: r.group }),
          kind: r.plural,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
    }
  }

  /** Creates an object; fills in name (from generateName), uid, creationTimestamp and defaults. */
  create(ref: ResourceRef, input: KubeObject, options: Pick<WriteOptions, 'dryRun'> = {}): KubeObject {
    const r = resolve(ref);
    const obj = clone(input);
    if (!isPlainObject(obj.metadata)) obj.metadata = {};
    const meta = obj.metadata;
    obj.apiVersion = r.group === '' ? r.version : `${r.group}/${r.version}`;
    obj.kind = r.kind;
    if (!r.namespaced) delete meta.namespace;
    if (
      (meta.name === undefined || meta.name === '') &&
      typeof meta.generateName === 'string' &&
      meta.generateName !== ''
    ) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += GENERATE_NAME_CHARS[Math.floor(Math.random() * GENERATE_NAME_CHARS.length)];
      meta.name = `${meta.generateName}${suffix}`;
    }
    for (const system of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'managedFields',
      'selfLink',
    ]) {
      delete meta[system];
    }
    decodeTimes(r, obj);
    decodeQuantities(r, obj);
    dropEmptyMetadata(obj);
    // Before the strategy, as rest.BeforeCreate fills the system fields first (a Job's selector names its uid).
    meta.uid = randomUUID();
    prepareForCreate(r, obj);
    const defaultClass = r.plural === 'persistentvolumeclaims' ? this.defaultStorageClass() : undefined;
    defaultsForCreate(r, obj, {
      storageProtection: this.storageProtection,
      ...(defaultClass === undefined ? {} : { defaultStorageClass: defaultClass }),
    });
    const errors = validateCreate(r, obj);
    const name = meta.name ?? '';
    if (errors.length > 0) throw invalid(r.group, r.kind, name, errors);
    this.checkNamespace(r, meta.namespace, name);
    if (this.table(r).has(storageKey(r, meta.namespace, name))) throw alreadyExists(r, name);
    meta.creationTimestamp = timestamp();
    // A dry run answers what would be stored, without a resourceVersion: nothing was written.
    if (options.dryRun === true) return obj;
    return this.commit(r, 'ADDED', obj);
  }

  /**
   * Replaces an object (PUT). A `metadata.resourceVersion` in the input must match the stored one (409 Conflict
   * otherwise); without one the update is unconditional, as the real server allows for these resources.
   */
  update(ref: ResourceRef, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const r = resolve(ref);
    const obj = clone(input);
    if (!isPlainObject(obj.metadata)) obj.metadata = {};
    const name = obj.metadata.name ?? '';
    if (!r.namespaced) delete obj.metadata.namespace;
    const stored = this.table(r).get(storageKey(r, obj.metadata.namespace, name));
    if (stored === undefined) throw notFound(r, name);
    const old = clone(stored);
    decodeTimes(r, obj);
    decodeQuantities(r, obj);
    const wanted = obj.metadata.resourceVersion;
    if (wanted !== undefined && wanted !== '' && wanted !== old.metadata.resourceVersion) {
      throw conflict(r, name, OBJECT_MODIFIED);
    }
    obj.apiVersion = old.apiVersion;
    obj.kind = old.kind;
    let next: KubeObject;
    if (options.subresource === 'status') {
      next = clone(old);
      next.status = obj.status;
    } else {
      next = obj;
      if (r.subresources.includes('status')) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
      this.keepSystemFields(next, old);
    }
    const oldFinalizers = new Set(old.metadata.finalizers ?? []);
    const added = (next.metadata.finalizers ?? []).filter((f) => !oldFinalizers.has(f));
    if (old.metadata.deletionTimestamp !== undefined && added.length > 0) {
      throw invalid(r.group, r.kind, name, [
        forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      ]);
    }
    defaultsForUpdate(r, next, old, options.subresource);
    if (options.subresource === undefined) prepareForUpdate(r, next, old);
    const errors = validateUpdate(r, next, old, options.subresource);
    if (errors.length > 0) throw invalid(r.group, r.kind, name, errors);
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    dropEmptyMetadata(next);
    if (sameExceptResourceVersion(next, old)) return old;
    if (options.dryRun === true) return next;
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) {
      // As etcd reports a delete: watchers get the last stored state at the deletion's revision, while the writer
      // gets the object it sent, never stored, with the resourceVersion it had.
      const gone = this.commit(r, 'DELETED', clone(old), old);
      this.afterDelete(r, gone);
      return next;
    }
    return this.commit(r, 'MODIFIED', next, old);
  }

  /** What `rest.BeforeUpdate` keeps from the stored object whatever the client sent. */
  private keepSystemFields(next: KubeObject, old: KubeObject): void {
    const m = next.metadata;
    const o = old.metadata;
    if (m.uid === undefined || m.uid === '') m.uid = o.uid;
    m.creationTimestamp = o.creationTimestamp;
    if (o.deletionTimestamp !== undefined) {
      m.deletionTimestamp = o.deletionTimestamp;
      m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    } else {
      delete m.deletionTimestamp;
      delete m.deletionGracePeriodSeconds;
    }
    if (o.generation !== undefined) m.generation = o.generation;
    delete m.managedFields;
  }

  /**
   * Read-modify-write for in-process callers (the simulated controllers): `mutate` edits a copy, returning
   * `false` to skip the write. Returns the stored result, or `undefined` when the object does not exist.
   */
  modify(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    mutate: (obj: KubeObject) => boolean | void,
    options: WriteOptions = {},
  ): KubeObject | undefined {
    const current = this.get(ref, namespace, name);
    if (current === undefined) return undefined;
    if (mutate(current) === false) return current;
    return this.update(ref, current, options);
  }

  /**
   * Binds a pod to a node, as the `pods/binding` subresource does: sets `spec.nodeName` on a pod that has none
   * (409 Conflict when it is already bound elsewhere, as the real registry answers).
   */
  bindPod(namespace: string, name: string, nodeName: string): KubeObject {
    const r = resourceByKey('pods');
    const stored = this.table(r).get(storageKey(r, namespace, name));
    if (stored === undefined) throw notFound(r, name);
    const old = clone(stored);
    const spec = isPlainObject(old.spec) ? old.spec : {};
    const current = typeof spec.nodeName === 'string' ? spec.nodeName : '';
    if (old.metadata.deletionTimestamp !== undefined) {
      throw conflict(r, name, 'pod is being deleted, cannot be assigned to a host');
    }
    if (current !== '') {
      if (current === nodeName) return old;
      throw conflict(r, name, `pod ${name} is already assigned to node "${current}"`);
    }
    const next = clone(old);
    next.spec = { ...spec, nodeName };
    const status = isPlainObject(next.status) ? next.status : {};
    const conditions = Array.isArray(status.conditions)
      ? status.conditions.filter((c) => !(isPlainObject(c) && c.type === 'PodScheduled'))
      : [];
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: timestamp() });
    next.status = { ...status, conditions };
    return this.commit(r, 'MODIFIED', next, old);
  }

  /** Deletes an object, honouring preconditions, finalizers and the propagation policy. */
  delete(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    preconditions: Preconditions = {},
    options: DeleteOptions = {},
  ): DeleteResult {
    const r = resolve(ref);
    const key = storageKey(r, namespace, name);
    const stored = this.table(r).get(key);
    if (stored === undefined) throw notFound(r, name);
    const old = clone(stored);
    // The registry checks them before deleting, naming the kind rather than the resource (rest.BeforeDelete).
    const kind = { group: r.group, plural: r.kind };
    if (preconditions.uid !== undefined && preconditions.uid !== old.metadata.uid) {
      throw conflict(
        kind,
        name,
        `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${old.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
      );
    }
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        kind,
        name,
        `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${old.metadata.resourceVersion ?? ''}). The object might have been modified`,
      );
    }
    const gc =
      r.plural === 'namespaces' ? undefined : gcFinalizers(old.metadata.finalizers ?? [], options.propagationPolicy);
    const pending = (gc ?? old.metadata.finalizers ?? []).length > 0 || r.plural === 'namespaces';
    if (pending) {
      if (old.metadata.deletionTimestamp !== undefined) {
        if (gc === undefined) return { object: old, deleted: false };
        const next = clone(old);
        next.metadata.finalizers = gc;
        if (options.dryRun === true) return { object: next, deleted: false };
        return { object: this.commit(r, 'MODIFIED', next, old), deleted: false };
      }
      const next = clone(old);
      if (gc !== undefined) next.metadata.finalizers = gc;
      next.metadata.deletionTimestamp = timestamp();
      next.metadata.deletionGracePeriodSeconds = 0;
      // rest.BeforeDelete: an object that keeps a generation counts its deletion as a change of it.
      if ((next.metadata.generation ?? 0) > 0) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
      if (r.plural === 'namespaces') next.status = { phase: 'Terminating' };
      if (options.dryRun === true) return { object: next, deleted: false };
      const object = this.commit(r, 'MODIFIED', next, old);
      if (r.plural === 'namespaces') return this.terminateNamespace(name) ?? { object, deleted: false };
      return { object, deleted: false };
    }
    if (options.dryRun === true) return { object: old, deleted: true };
    const object = this.commit(r, 'DELETED', clone(old), old);
    this.afterDelete(r, object);
    return { object, deleted: true };
  }

  /** Deletes every object of a namespace, then the namespace itself once nothing is left in it. */
  private terminateNamespace(namespace: string): DeleteResult | undefined {
    for (const r of RESOURCES) {
      if (!r.namespaced) continue;
      for (const o of this.list(r, namespace)) {
        if (o.metadata.deletionTimestamp === undefined) this.delete(r, namespace, o.metadata.name ?? '');
      }
    }
    return this.finishNamespace(namespace);
  }

  private finishNamespace(namespace: string): DeleteResult | undefined {
    const nsType = resourceByKey('namespaces');
    const ns = this.table(nsType).get(namespace);
    if (ns?.metadata.deletionTimestamp === undefined) return undefined;
    for (const r of RESOURCES) {
      if (r.namespaced && this.list(r, namespace).length > 0) return undefined;
    }
    const object = this.commit(nsType, 'DELETED', clone(ns), clone(ns));
    return { object, deleted: true };
  }

  private afterDelete(r: ResourceType, object: KubeObject): void {
    if (r.namespaced && object.metadata.namespace !== undefined) this.finishNamespace(object.metadata.namespace);
  }

  /**
   * The default StorageClass, as the DefaultStorageClass admission plugin picks it: among classes annotated
   * `storageclass.kubernetes.io/is-default-class: "true"`, the newest (then the first by name).
   */
  private defaultStorageClass(): string | undefined {
    const defaults = this.list('storage.k8s.io/storageclasses').filter(
      (sc) => sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    );
    defaults.sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''));
    return defaults[0]?.metadata.name;
  }

  /** Forgets the change history up to now, so that any watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.history.compact(this.rv);
  }

  /** Every object of every resource, for snapshots and debugging. */
  dump(): Record<string, KubeObject[]> {
    const out: Record<string, KubeObject[]> = {};
    for (const r of RESOURCES) out[resourceKey(r)] = this.list(r);
    return out;
  }
}
