/**
 * The PersistentVolume controller of kube-controller-manager (`pkg/controller/volume/persistentvolume`), the part a
 * dynamic provisioner relies on, written anew as a level-based loop over the store:
 *
 * - Unbound claims: a volume pre-bound to the claim (its `claimRef`) or, for claims without delayed binding, the
 *   smallest Available volume of the same class, volume mode, selector, access modes and enough capacity is bound.
 *   Otherwise a claim of a class whose provisioner is not `kubernetes.io/no-provisioner` gets the
 *   `volume.kubernetes.io/storage-provisioner` and `volume.beta.kubernetes.io/storage-provisioner` annotations
 *   (for `WaitForFirstConsumer` classes only once the scheduler set `volume.kubernetes.io/selected-node`), which is
 *   what tells an external provisioner to act. A claim without a class gets the default class, if there is one.
 * - Binding, in the controller's order: PV `claimRef` (plus `pv.kubernetes.io/bound-by-controller` when the
 *   controller chose the volume), PV phase Bound, PVC `spec.volumeName` with `pv.kubernetes.io/bind-completed` (and
 *   `bound-by-controller` when the claim had no `volumeName`), PVC status Bound with the PV's access modes and capacity.
 * - Volumes: no `claimRef` (or one without uid) → Available; claim gone (or recreated with another uid) → Released;
 *   bound claim lost its volume → claim phase Lost. Reclaiming (deleting or recycling) is left to the provisioner.
 *
 * The storage-object-in-use protection controllers run alongside unless `protection: false` (see `protection.ts`).
 */
import type { KubeObject } from '../api/objects.js';
import { timestamp, type ObjectStore } from '../store/store.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  NO_PROVISIONER,
} from './annotations.js';
import { EventRecorder } from './events.js';
import { startExpandController } from './expand.js';
import { startProtection, type ProtectionOptions } from './protection.js';
import {
  bindVolumeToClaim,
  claimClass,
  claimHasClass,
  defaultClass,
  findBestMatchForClaim,
  getClass,
  isDelayBinding,
  isVolumeBoundToClaim,
  podClaimNames,
  volumeClass,
} from './pvutil.js';
import { hasAccessModes, storageOf } from './match.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from './queue.js';
import { view, viewOpt, type PersistentVolume, type PersistentVolumeClaim, type Pod } from './types.js';

/** Options of {@link startPvBinder}. */
export interface PvBinderOptions extends LoopOptions {
  /**
   * Interval of the full resync, in ms; 0 disables it. Default {@link PV_BINDER_RESYNC_MS} (15 s, as
   * kube-controller-manager's `--pvclaimbinder-sync-period`): changes are acted on at once through the store's
   * notifications, the resync only catches up, and each one matches every unbound claim against every PV.
   */
  resyncMs?: number;
  /**
   * Also run the PVC and PV protection controllers (finalizers `kubernetes.io/pvc-protection` and
   * `kubernetes.io/pv-protection`), with these options when an object is given. Default true.
   */
  protection?: boolean | ProtectionOptions;
  /**
   * Also run the expand controller (a Normal `ExternalExpanding` Event on a bound claim whose request grows beyond
   * its capacity; see `startExpandController`), as kube-controller-manager runs it beside the PV controller.
   * Default true.
   */
  expansion?: boolean;
  /**
   * Assign the default StorageClass to an unbound claim that names no class (the PV controller's retroactive
   * default class assignment, GA since 1.28; the API server's admission plugin does the same on create). Default true.
   */
  assignDefaultClass?: boolean;
  /**
   * Record the Events the PV controller records on claims (source `persistentvolume-controller`), with client-go's
   * counting and spam filter: `WaitForFirstConsumer`, `WaitForPodScheduled`, `ExternalProvisioning`,
   * `ProvisioningFailed` (class not found, or an in-tree `kubernetes.io/` provisioner), `FailedBinding`. Default true.
   */
  events?: boolean;
  /**
   * How long after a change the controller acts on it, in ms. kube-controller-manager learns of a change through a
   * watch and writes back over HTTP: against kube-apiserver 1.32 on a 2-core machine, a watcher got a claim's
   * storage-provisioner annotation a median 2–3 ms after the claim (0–10 ms). Acting within the same turn of the event
   * loop handed watchers the claim and its annotation together, in one read, far more often than a cluster does; a
   * provisioner whose work queue gives a key to a waiting worker at once then had the annotation queue the claim
   * again while it was being provisioned, and provisioned it twice. 0 acts at once. Default
   * {@link PV_BINDER_WATCH_DELAY_MS}.
   */
  watchDelayMs?: number;
}

/** The binder's default {@link PvBinderOptions.watchDelayMs}. */
export const PV_BINDER_WATCH_DELAY_MS = 2;

/** The component name the PV controller records its Events under. */
export const PV_CONTROLLER = 'persistentvolume-controller';

/** The binder's default resync interval, in ms: kube-controller-manager's `--pvclaimbinder-sync-period` default. */
export const PV_BINDER_RESYNC_MS = 15_000;

const PVCS = 'persistentvolumeclaims';
const PVS = 'persistentvolumes';

/** Starts the simulated PV controller; see the module comment. */
export function startPvBinder(store: ObjectStore, options: PvBinderOptions = {}): Stoppable {
  const binder = new PvBinder(store, options);
  const queue: WorkQueue = new WorkQueue((key) => binder.reconcile(key, queue), {
    ...options,
    resyncMs: options.resyncMs ?? PV_BINDER_RESYNC_MS,
  });
  const delay = options.watchDelayMs ?? PV_BINDER_WATCH_DELAY_MS;
  // What the store tells reaches the controller as a watch event would: a little later.
  const observe = (key: string): void => (delay > 0 ? queue.addAfter(key, delay) : queue.add(key));
  const unsubscribe = store.subscribe((c) => {
    if (c.resource === PVCS) {
      observe(`claim:${nsKey(c.object.metadata.namespace, c.object.metadata.name)}`);
      for (const o of [c.object, c.previous]) {
        const volumeName = viewOpt<PersistentVolumeClaim>(o)?.spec?.volumeName;
        if (volumeName !== undefined && volumeName !== '') observe(`volume:${volumeName}`);
      }
    } else if (c.resource === PVS) {
      observe(`volume:${c.object.metadata.name ?? ''}`);
      for (const o of [c.object, c.previous]) {
        const ref = viewOpt<PersistentVolume>(o)?.spec?.claimRef;
        if (ref?.name !== undefined) observe(`claim:${nsKey(ref.namespace, ref.name)}`);
      }
    } else if (c.resource === 'storage.k8s.io/storageclasses') {
      // The real controller only reads classes; re-looking at the claims that name this one (or none) spares them
      // the wait for the next resync, without counting the others' Events again.
      observe(`class:${c.object.metadata.name ?? ''}`);
    }
  });
  queue.add(RESYNC_KEY);
  const protection = options.protection ?? true;
  const protector =
    protection === false
      ? undefined
      : startProtection(store, { ...options, ...(protection === true ? {} : protection) });
  const expander = options.expansion === false ? undefined : startExpandController(store, options);
  return {
    async stop() {
      unsubscribe();
      await Promise.all([queue.stop(), protector?.stop(), expander?.stop()]);
    },
  };
}

class PvBinder {
  private readonly recorder: EventRecorder | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly options: PvBinderOptions,
  ) {
    this.recorder = options.events === false ? undefined : new EventRecorder(store, PV_CONTROLLER);
  }

  reconcile(key: string, queue: WorkQueue): void {
    if (key === RESYNC_KEY) {
      // Only the keys are needed: read without copying.
      for (const o of this.store.peek(PVCS)) queue.add(`claim:${nsKey(o.metadata.namespace, o.metadata.name)}`);
      for (const o of this.store.peek(PVS)) queue.add(`volume:${o.metadata.name ?? ''}`);
      return;
    }
    if (key.startsWith('class:')) {
      const name = key.slice('class:'.length);
      for (const o of this.store.peek(PVCS)) {
        const c = view<PersistentVolumeClaim>(o);
        if (claimClass(c) === name || !claimHasClass(c))
          queue.add(`claim:${nsKey(o.metadata.namespace, o.metadata.name)}`);
      }
      return;
    }
    if (key.startsWith('claim:')) {
      const [ns, name] = splitKey(key.slice('claim:'.length));
      const claim = viewOpt<PersistentVolumeClaim>(this.store.get(PVCS, ns, name));
      if (claim === undefined) {
        // Volumes bound to a deleted claim must get Released.
        for (const pv of this.volumes()) {
          const ref = pv.spec?.claimRef;
          if (ref?.name === name && (ref.namespace ?? '') === ns) queue.add(`volume:${pv.metadata.name ?? ''}`);
        }
        return;
      }
      if (claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) this.syncUnboundClaim(claim);
      else this.syncBoundClaim(claim);
      return;
    }
    if (key.startsWith('volume:')) {
      const pv = viewOpt<PersistentVolume>(this.store.get(PVS, undefined, key.slice('volume:'.length)));
      if (pv !== undefined) this.syncVolume(pv, queue);
    }
  }

  private volumes(): PersistentVolume[] {
    // Read without copying: this runs for every unbound claim change, over every PV.
    return this.store.peek(PVS).map((o) => view<PersistentVolume>(o as KubeObject));
  }

  private getVolume(name: string): PersistentVolume | undefined {
    return viewOpt<PersistentVolume>(this.store.get(PVS, undefined, name));
  }

  private syncUnboundClaim(claim: PersistentVolumeClaim): void {
    const volumeName = claim.spec?.volumeName ?? '';
    if (volumeName !== '') {
      // The user asked for a specific volume.
      const pv = this.getVolume(volumeName);
      if (pv === undefined) return this.setClaimPhase(claim, 'Pending');
      if (pv.spec?.claimRef === undefined || pv.spec.claimRef === null) {
        if (!this.satisfies(pv, claim)) return this.setClaimPhase(claim, 'Pending');
        return this.bind(pv, claim);
      }
      if (isVolumeBoundToClaim(pv, claim)) return this.bind(pv, claim);
      return this.setClaimPhase(claim, 'Pending');
    }
    const delayBinding = isDelayBinding(this.store, claim);
    const pv = findBestMatchForClaim(claim, this.volumes(), delayBinding);
    if (pv !== undefined) return this.bind(pv, claim);
    if ((this.options.assignDefaultClass ?? true) && !claimHasClass(claim)) {
      const sc = defaultClass(this.store);
      if (sc !== undefined) {
        this.modifyClaim(claim, (c) => {
          c.spec = { ...c.spec, storageClassName: sc.metadata.name ?? '' };
        });
        return; // The update re-queues the claim.
      }
    }
    const className = claimClass(claim);
    if (delayBinding && claim.metadata.annotations?.[ANN_SELECTED_NODE] === undefined) {
      // No pod has been scheduled with this claim yet.
      this.waitingForConsumer(claim);
    } else if (className !== '') {
      // The controller returns here, leaving the claim's status alone.
      this.provisionClaim(claim, className);
      return;
    } else {
      this.recorder?.event(
        claim,
        'Normal',
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      );
    }
    this.setClaimPhase(claim, 'Pending');
  }

  /** `emitEventForUnboundDelayBindingClaim`: waiting for a pod, or for the pods that use the claim to be scheduled. */
  private waitingForConsumer(claim: PersistentVolumeClaim): void {
    const ns = claim.metadata.namespace;
    const name = claim.metadata.name ?? '';
    const pods = this.store
      .peek('pods')
      .map((o) => view<Pod>(o as KubeObject))
      .filter((p) => {
        if (p.metadata.namespace !== ns || (p.spec?.nodeName ?? '') !== '') return false;
        if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return false;
        const claims = podClaimNames(p.spec?.volumes);
        for (const v of p.spec?.volumes ?? [])
          if (v.ephemeral !== undefined) claims.push(`${p.metadata.name ?? ''}-${v.name}`);
        return claims.includes(name);
      })
      .map((p) => p.metadata.name ?? '')
      .sort();
    if (pods.length === 0)
      this.recorder?.event(
        claim,
        'Normal',
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
      );
    else if (pods.length === 1)
      this.recorder?.event(claim, 'Normal', 'WaitForPodScheduled', `waiting for pod ${pods[0]} to be scheduled`);
    else
      this.recorder?.event(
        claim,
        'Normal',
        'WaitForPodScheduled',
        `waiting for pods ${pods.join(',')} to be scheduled`,
      );
  }

  /**
   * `provisionClaim` for a claim with a class: an external provisioner is told through the storage-provisioner
   * annotations (then `ExternalProvisioning`); a missing class or an in-tree provisioner (none is left in 1.32; the
   * CSI-migrated ones are not modelled) fails with `ProvisioningFailed`.
   */
  private provisionClaim(claim: PersistentVolumeClaim, className: string): void {
    const sc = getClass(this.store, className);
    if (sc === undefined) {
      this.recorder?.event(
        claim,
        'Warning',
        'ProvisioningFailed',
        `storageclass.storage.k8s.io "${className}" not found`,
      );
      return;
    }
    const provisioner = sc.provisioner ?? '';
    if (provisioner === NO_PROVISIONER || provisioner.startsWith('kubernetes.io/')) {
      this.recorder?.event(claim, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${provisioner}`);
      return;
    }
    let current: PersistentVolumeClaim | undefined = claim;
    if (claim.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== provisioner) {
      current = viewOpt<PersistentVolumeClaim>(
        this.store.modify(PVCS, claim.metadata.namespace, claim.metadata.name ?? '', (o) => {
          o.metadata.annotations = {
            ...o.metadata.annotations,
            [ANN_BETA_STORAGE_PROVISIONER]: provisioner,
            [ANN_STORAGE_PROVISIONER]: provisioner,
          };
        }),
      );
    }
    if (current === undefined) return;
    this.recorder?.event(
      current,
      'Normal',
      'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
  }

  private syncBoundClaim(claim: PersistentVolumeClaim): void {
    const volumeName = claim.spec?.volumeName ?? '';
    const pv = volumeName === '' ? undefined : this.getVolume(volumeName);
    if (pv === undefined) return this.setClaimPhase(claim, 'Lost');
    const ref = pv.spec?.claimRef;
    if (ref === undefined || ref === null || ref.uid === claim.metadata.uid) return this.bind(pv, claim);
    this.setClaimPhase(claim, 'Lost');
  }

  private syncVolume(pv: PersistentVolume, queue: WorkQueue): void {
    const ref = pv.spec?.claimRef;
    if (ref === undefined || ref === null || ref.uid === undefined || ref.uid === '') {
      this.setVolumePhase(pv, 'Available');
      return;
    }
    let claim = viewOpt<PersistentVolumeClaim>(this.store.get(PVCS, ref.namespace ?? '', ref.name ?? ''));
    if (claim !== undefined && claim.metadata.uid !== ref.uid) claim = undefined;
    if (claim === undefined) {
      if (pv.status?.phase !== 'Released' && pv.status?.phase !== 'Failed') this.setVolumePhase(pv, 'Released');
      return;
    }
    const claimVolume = claim.spec?.volumeName ?? '';
    if (claimVolume === '') {
      queue.add(`claim:${nsKey(claim.metadata.namespace, claim.metadata.name)}`);
      return;
    }
    if (claimVolume === pv.metadata.name) {
      this.setVolumePhase(pv, 'Bound');
      return;
    }
    // The claim got bound to another volume.
    const annotations = pv.metadata.annotations ?? {};
    if (annotations[ANN_DYNAMICALLY_PROVISIONED] !== undefined && pv.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      if (pv.status?.phase !== 'Released' && pv.status?.phase !== 'Failed') this.setVolumePhase(pv, 'Released');
      return;
    }
    this.store.modify(PVS, undefined, pv.metadata.name ?? '', (o) => {
      const v = view<PersistentVolume>(o);
      if (v.metadata.annotations?.[ANN_BOUND_BY_CONTROLLER] !== undefined) {
        if (v.spec !== undefined) delete v.spec.claimRef;
        delete v.metadata.annotations[ANN_BOUND_BY_CONTROLLER];
      } else if (v.spec?.claimRef !== undefined && v.spec.claimRef !== null) {
        delete v.spec.claimRef.uid;
      }
    });
    const updated = this.getVolume(pv.metadata.name ?? '');
    if (updated !== undefined) this.setVolumePhase(updated, 'Available');
  }

  /** `checkVolumeSatisfyClaim`: size, class, volume mode and access modes of a volume the claim asked for by name. */
  private satisfies(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
    return (
      pv.metadata.deletionTimestamp === undefined &&
      storageOf(pv.spec?.capacity) >= storageOf(claim.spec?.resources?.requests) &&
      volumeClass(pv) === claimClass(claim) &&
      (pv.spec?.volumeMode ?? 'Filesystem') === (claim.spec?.volumeMode ?? 'Filesystem') &&
      hasAccessModes(pv.spec?.accessModes, claim.spec?.accessModes)
    );
  }

  /** `bind`: volume spec, volume phase, claim spec, claim status, each written only when it changes. */
  private bind(pv: PersistentVolume, claim: PersistentVolumeClaim): void {
    const pvName = pv.metadata.name ?? '';
    this.store.modify(PVS, undefined, pvName, (o) => bindVolumeToClaim(view<PersistentVolume>(o), claim));
    const bound = this.getVolume(pvName);
    if (bound === undefined) return;
    this.setVolumePhase(bound, 'Bound');
    this.modifyClaim(claim, (c) => {
      const annotations = { ...c.metadata.annotations };
      let dirty = false;
      if (c.spec?.volumeName !== pvName) {
        c.spec = { ...c.spec, volumeName: pvName };
        if (annotations[ANN_BOUND_BY_CONTROLLER] === undefined) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
        dirty = true;
      }
      if (annotations[ANN_BIND_COMPLETED] === undefined) {
        annotations[ANN_BIND_COMPLETED] = 'yes';
        dirty = true;
      }
      c.metadata.annotations = annotations;
      return dirty;
    });
    const current = viewOpt<PersistentVolumeClaim>(
      this.store.get(PVCS, claim.metadata.namespace, claim.metadata.name ?? ''),
    );
    if (current !== undefined) this.setClaimPhase(current, 'Bound', bound);
  }

  private modifyClaim(claim: PersistentVolumeClaim, mutate: (c: PersistentVolumeClaim) => boolean | void): void {
    this.store.modify(PVCS, claim.metadata.namespace, claim.metadata.name ?? '', (o) =>
      mutate(view<PersistentVolumeClaim>(o)),
    );
  }

  /** `updateClaimStatus`: the phase, and the volume's access modes and capacity (cleared without a volume). */
  private setClaimPhase(claim: PersistentVolumeClaim, phase: string, pv?: PersistentVolume): void {
    this.store.modify(
      PVCS,
      claim.metadata.namespace,
      claim.metadata.name ?? '',
      (o) => {
        const c = view<PersistentVolumeClaim>(o);
        const status = { ...c.status, phase };
        if (pv === undefined) {
          delete status.accessModes;
          delete status.capacity;
        } else {
          if (pv.spec?.accessModes !== undefined) status.accessModes = [...pv.spec.accessModes];
          if (pv.spec?.capacity !== undefined) status.capacity = { ...pv.spec.capacity };
        }
        if (JSON.stringify(status) === JSON.stringify(c.status ?? {})) return false;
        c.status = status;
      },
      { subresource: 'status' },
    );
  }

  /** `updateVolumePhase`, stamping `lastPhaseTransitionTime` on a change. */
  private setVolumePhase(pv: PersistentVolume, phase: string): void {
    this.store.modify(
      PVS,
      undefined,
      pv.metadata.name ?? '',
      (o) => {
        const v = view<PersistentVolume>(o);
        if (v.status?.phase === phase) return false;
        const status = { ...v.status, phase, lastPhaseTransitionTime: timestamp() };
        delete status.message;
        v.status = status;
      },
      { subresource: 'status' },
    );
  }
}
