/**
 * The storage-object-in-use protection of kube-controller-manager (`pkg/controller/volume/pvcprotection` and
 * `pvprotection`; in a real cluster the `StorageObjectInUseProtection` admission plugin adds the finalizers on
 * create, here the loop adds them right after the object appears):
 *
 * - every PVC not being deleted gets the finalizer `kubernetes.io/pvc-protection`; once it is being deleted, the
 *   finalizer is removed when no pod that is scheduled to a node (and, by default, not terminated) uses the claim;
 * - every PV not being deleted gets `kubernetes.io/pv-protection`; once it is being deleted, the finalizer is
 *   removed when the volume is not Bound.
 */
import type { ObjectStore } from '../store/store.js';
import { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER } from './annotations.js';
import { podClaimNames } from './pvutil.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from './queue.js';
import { view, viewOpt, type PersistentVolume, type Pod } from './types.js';

/** Options of {@link startProtection}. */
export interface ProtectionOptions extends LoopOptions {
  /**
   * Whether a pod that has terminated (phase Succeeded or Failed) but still exists keeps using its claims. The
   * real controller counts every scheduled pod that references the claim, whatever its phase, so a completed
   * pod blocks the claim's deletion until the pod is deleted. Default false: only pods that have not terminated
   * hold a claim.
   */
  terminatedPodsUseClaims?: boolean;
}

const PVCS = 'persistentvolumeclaims';
const PVS = 'persistentvolumes';

/** Starts the PVC and PV protection controllers; see the module comment. Also started by `startPvBinder`. */
export function startProtection(store: ObjectStore, options: ProtectionOptions = {}): Stoppable {
  const queue: WorkQueue = new WorkQueue((key) => reconcile(store, options, queue, key), options);
  const unsubscribe = store.subscribe((c) => {
    if (c.type === 'DELETED' && c.resource !== 'pods') return;
    if (c.resource === PVCS) queue.add(`pvc:${nsKey(c.object.metadata.namespace, c.object.metadata.name)}`);
    else if (c.resource === PVS) queue.add(`pv:${c.object.metadata.name ?? ''}`);
    else if (c.resource === 'pods') {
      for (const o of [c.object, c.previous]) {
        for (const claim of podClaimNames(viewOpt<Pod>(o)?.spec?.volumes))
          queue.add(`pvc:${nsKey(c.object.metadata.namespace, claim)}`);
      }
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

function reconcile(store: ObjectStore, options: ProtectionOptions, queue: WorkQueue, key: string): void {
  if (key === RESYNC_KEY) {
    for (const o of store.peek(PVCS)) queue.add(`pvc:${nsKey(o.metadata.namespace, o.metadata.name)}`);
    for (const o of store.peek(PVS)) queue.add(`pv:${o.metadata.name ?? ''}`);
    return;
  }
  if (key.startsWith('pvc:')) {
    const [ns, name] = splitKey(key.slice('pvc:'.length));
    const pvc = store.peekObject(PVCS, ns, name);
    if (pvc === undefined) return;
    const has = (pvc.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
    if (pvc.metadata.deletionTimestamp === undefined) {
      if (!has) setFinalizer(store, PVCS, ns, name, PVC_PROTECTION_FINALIZER, true);
    } else if (has && !claimInUse(store, ns, name, options.terminatedPodsUseClaims ?? false)) {
      setFinalizer(store, PVCS, ns, name, PVC_PROTECTION_FINALIZER, false);
    }
    return;
  }
  if (key.startsWith('pv:')) {
    const name = key.slice('pv:'.length);
    const pv = viewOpt<PersistentVolume>(store.peekObject(PVS, undefined, name));
    if (pv === undefined) return;
    const has = (pv.metadata.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);
    if (pv.metadata.deletionTimestamp === undefined) {
      if (!has) setFinalizer(store, PVS, undefined, name, PV_PROTECTION_FINALIZER, true);
    } else if (has && pv.status?.phase !== 'Bound') {
      setFinalizer(store, PVS, undefined, name, PV_PROTECTION_FINALIZER, false);
    }
  }
}

/** Whether a pod scheduled to a node references the claim (terminated pods count only when asked to). */
function claimInUse(store: ObjectStore, namespace: string, claim: string, countTerminated: boolean): boolean {
  return store.peek('pods').some((o) => {
    if (o.metadata.namespace !== namespace) return false;
    const pod = view<Pod>(o);
    if ((pod.spec?.nodeName ?? '') === '') return false;
    const phase = pod.status?.phase;
    if (!countTerminated && (phase === 'Succeeded' || phase === 'Failed')) return false;
    return podClaimNames(pod.spec?.volumes).includes(claim);
  });
}

function setFinalizer(
  store: ObjectStore,
  resource: string,
  namespace: string | undefined,
  name: string,
  finalizer: string,
  present: boolean,
): void {
  store.modify(resource, namespace, name, (o) => {
    const finalizers = o.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return false;
    o.metadata.finalizers = present ? [...finalizers, finalizer] : finalizers.filter((f) => f !== finalizer);
  });
}
