/**
 * kube-controller-manager's garbage collector (`pkg/controller/garbagecollector`) for the objects a testkit serves, as
 * `ownerReferences` and `DeleteOptions.propagationPolicy` drive it:
 *
 * - an object whose owners are all gone (no object of the owner's kind with that name and uid) is deleted: Background
 *   propagation, and a dependent created with an owner that does not exist;
 * - an object being deleted with the `foregroundDeletion` finalizer (Foreground propagation) has its dependents
 *   deleted, and loses the finalizer (so goes) once no dependent with `blockOwnerDeletion` is left;
 * - an object being deleted with the `orphan` finalizer (Orphan propagation, batch/v1 Jobs' default) has its
 *   references removed from its dependents, then loses the finalizer.
 *
 * An owner of a kind the testkit does not serve is taken as present: such dependents are never collected. A dependent
 * with some owners left keeps its references to the others, which the real collector would remove. Dependents are
 * deleted in the background (the real collector deletes those of a foreground deletion in the foreground, which only
 * matters for dependents that have dependents of their own).
 */
import type { KubeObject, OwnerReference } from '../api/objects.js';
import { findResourceByKind, RESOURCES, resourceKey, type ResourceType } from '../api/resources.js';
import { StatusError } from '../api/status.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type ObjectStore } from '../store/store.js';
import { RESYNC_KEY, WorkQueue, type LoopOptions, type Stoppable } from './queue.js';

/** A stored object, by resource key, namespace and name: the queue's key. */
function keyOf(resource: string, obj: Readonly<KubeObject>): string {
  return JSON.stringify([resource, obj.metadata.namespace ?? '', obj.metadata.name ?? '']);
}

/** The stored object of a key, with its resource type. */
function lookup(store: ObjectStore, key: string): { r: ResourceType; object: Readonly<KubeObject> } | undefined {
  const [resource, namespace, name] = JSON.parse(key) as [string, string, string];
  const r = RESOURCES.find((x) => resourceKey(x) === resource);
  if (r === undefined) return undefined;
  const object = store.peekObject(r, r.namespaced ? namespace : undefined, name);
  return object === undefined ? undefined : { r, object };
}

const deleting = (o: Readonly<KubeObject>): boolean => o.metadata.deletionTimestamp !== undefined;
const hasFinalizer = (o: Readonly<KubeObject>, f: string): boolean => (o.metadata.finalizers ?? []).includes(f);
/** Whether the collector has something to do with the object: owners to check, or a deletion to carry out. */
const concerns = (o: Readonly<KubeObject>): boolean =>
  (o.metadata.ownerReferences ?? []).length > 0 ||
  (deleting(o) && (hasFinalizer(o, FOREGROUND_FINALIZER) || hasFinalizer(o, ORPHAN_FINALIZER)));

/** The dependents of each owner uid, kept current from the store's changes (the collector's dependency graph). */
class OwnerIndex {
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly ownersOf = new Map<string, string[]>();

  set(key: string, obj: Readonly<KubeObject> | undefined): void {
    for (const uid of this.ownersOf.get(key) ?? []) {
      const set = this.byOwner.get(uid);
      set?.delete(key);
      if (set?.size === 0) this.byOwner.delete(uid);
    }
    const uids = (obj?.metadata.ownerReferences ?? []).map((ref) => ref.uid);
    if (uids.length === 0) this.ownersOf.delete(key);
    else this.ownersOf.set(key, uids);
    for (const uid of uids) {
      const set = this.byOwner.get(uid) ?? new Set<string>();
      set.add(key);
      this.byOwner.set(uid, set);
    }
  }

  /** Keys of the objects naming `uid` as an owner. */
  dependents(uid: string | undefined): string[] {
    return [...(this.byOwner.get(uid ?? '') ?? [])];
  }
}

/** Starts the simulated garbage collector; see the module comment. */
export function startGarbageCollector(store: ObjectStore, options: LoopOptions = {}): Stoppable {
  const index = new OwnerIndex();
  for (const r of RESOURCES) for (const o of store.peek(r)) index.set(keyOf(resourceKey(r), o), o);
  const queue: WorkQueue = new WorkQueue((key) => reconcile(store, index, queue, key), options);
  const unsubscribe = store.subscribe((c) => {
    const key = keyOf(c.resource, c.object);
    index.set(key, c.type === 'DELETED' ? undefined : c.object);
    // An owner that went: its dependents may be orphans now.
    if (c.type === 'DELETED') for (const d of index.dependents(c.object.metadata.uid)) queue.add(d);
    else if (concerns(c.object)) queue.add(key);
    // A dependent that changed or went: a foreground owner waiting for it may go now.
    for (const o of [c.object, c.previous])
      for (const ref of o?.metadata.ownerReferences ?? []) {
        const owner = ownerOf(store, c.object, ref);
        if (owner !== undefined) queue.add(owner);
      }
  });
  queue.add(RESYNC_KEY);
  return {
    async stop() {
      unsubscribe();
      await queue.stop();
    },
  };
}

/** The key of owner `ref` of `dependent`, if it exists with that uid. */
function ownerOf(store: ObjectStore, dependent: Readonly<KubeObject>, ref: OwnerReference): string | undefined {
  const r = findResourceByKind(ref.apiVersion, ref.kind);
  if (r === undefined) return undefined;
  const owner = store.peekObject(r, r.namespaced ? dependent.metadata.namespace : undefined, ref.name);
  return owner !== undefined && owner.metadata.uid === ref.uid ? keyOf(resourceKey(r), owner) : undefined;
}

/** Whether owner `ref` of `dependent` is known to be gone (an owner of a kind not served counts as present). */
function ownerGone(store: ObjectStore, dependent: Readonly<KubeObject>, ref: OwnerReference): boolean {
  if (findResourceByKind(ref.apiVersion, ref.kind) === undefined) return false;
  return ownerOf(store, dependent, ref) === undefined;
}

/** The objects naming `owner` (by uid) as an owner. */
function dependentsOf(
  store: ObjectStore,
  index: OwnerIndex,
  owner: Readonly<KubeObject>,
): { r: ResourceType; object: Readonly<KubeObject> }[] {
  const uid = owner.metadata.uid;
  return index.dependents(uid).flatMap((key) => {
    const found = lookup(store, key);
    return found !== undefined && (found.object.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid)
      ? [found]
      : [];
  });
}

/** Deletes an object, taking one that is gone, already going or replaced as done. */
function deleteQuietly(store: ObjectStore, r: ResourceType, o: Readonly<KubeObject>): void {
  if (deleting(o)) return;
  try {
    store.delete(r, o.metadata.namespace, o.metadata.name ?? '', { uid: o.metadata.uid ?? '' });
  } catch (e) {
    if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
  }
}

function removeFinalizer(store: ObjectStore, r: ResourceType, o: Readonly<KubeObject>, finalizer: string): void {
  store.modify(r, o.metadata.namespace, o.metadata.name ?? '', (obj) => {
    if (obj.metadata.uid !== o.metadata.uid || !hasFinalizer(obj, finalizer)) return false;
    obj.metadata.finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  });
}

function reconcile(store: ObjectStore, index: OwnerIndex, queue: WorkQueue, key: string): void {
  if (key === RESYNC_KEY) {
    for (const r of RESOURCES) for (const o of store.peek(r)) if (concerns(o)) queue.add(keyOf(resourceKey(r), o));
    return;
  }
  const found = lookup(store, key);
  if (found === undefined) return;
  const { r, object: obj } = found;
  const uid = obj.metadata.uid;
  if (deleting(obj) && hasFinalizer(obj, ORPHAN_FINALIZER)) {
    // Orphan: the dependents forget this owner, then it goes.
    for (const d of dependentsOf(store, index, obj))
      store.modify(d.r, d.object.metadata.namespace, d.object.metadata.name ?? '', (o) => {
        const refs = o.metadata.ownerReferences ?? [];
        if (!refs.some((ref) => ref.uid === uid)) return false;
        o.metadata.ownerReferences = refs.filter((ref) => ref.uid !== uid);
      });
    removeFinalizer(store, r, obj, ORPHAN_FINALIZER);
    return;
  }
  if (deleting(obj) && hasFinalizer(obj, FOREGROUND_FINALIZER)) {
    // Foreground: the dependents go first; the owner once none that blocks it is left.
    for (const d of dependentsOf(store, index, obj)) deleteQuietly(store, d.r, d.object);
    const blocking = dependentsOf(store, index, obj).some((d) =>
      (d.object.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid && ref.blockOwnerDeletion === true),
    );
    if (!blocking) removeFinalizer(store, r, obj, FOREGROUND_FINALIZER);
    return;
  }
  const refs = obj.metadata.ownerReferences ?? [];
  if (refs.length > 0 && refs.every((ref) => ownerGone(store, obj, ref))) deleteQuietly(store, r, obj);
}
