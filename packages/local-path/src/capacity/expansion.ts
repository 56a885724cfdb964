/**
 * Volume expansion within the budget (ours): when a bound claim of a class with `allowVolumeExpansion: true` asks
 * for more than its PV holds, the PV's `spec.capacity` and the claim's `status.capacity` are raised to the request
 * if the node path's budget has room for the difference (a path without capacity always has), else a
 * `VolumeResizeFailed` Warning Event on the claim says how much is free. Nothing on the disk changes: a local-path
 * volume is a directory, its size is the budget's.
 *
 * kube-controller-manager's expand controller finds no in-tree plugin that expands a `hostPath` or `local` PV and
 * leaves the claim to an external controller (a Normal `ExternalExpanding` Event, `waiting for an external
 * controller to expand this PVC`): this is that controller.
 *
 * @module
 */
import {
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubeConfig,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import {
  describeError,
  informerFor,
  isNotFound,
  makeCoreV1Calls,
  makeStorageV1Calls,
  silentLogger,
  stripManagedFields,
  withSignal,
  type CoreV1Calls,
  type EventType,
  type Informer,
  type Logger,
  type ObjectReference,
  type StorageV1Calls,
} from '@kprov/provisioner-lib';
import { formatBytes, quantityToBytes, selectClassConfig, type Config } from '../config/index.js';
import { isBelow } from './ledger.js';
import { nodePaths } from './paths.js';
import { fits } from './placement.js';
import type { CapacityTracker } from './tracker.js';

/** Reason of the Warning Event when the budget has no room for an expansion (the external resizer's reason). */
export const VOLUME_RESIZE_FAILED = 'VolumeResizeFailed';
/** Reason of the Normal Event of a done expansion (the external resizer's reason). */
export const VOLUME_RESIZE_SUCCESSFUL = 'VolumeResizeSuccessful';

/** Options of {@link VolumeExpander}. */
export interface VolumeExpanderOptions {
  /** How to reach the API server (the claim informer, the writes). */
  readonly kubeConfig: KubeConfig;
  /** The budgets (and the PVs it reads). */
  readonly tracker: CapacityTracker;
  /** The current config. */
  readonly config: () => Config | undefined;
  /** Records an Event (e.g. `EventRecorder.event`). */
  readonly event: (ref: ObjectReference, type: EventType, reason: string, message: string) => void;
  /** Node mode: only the volumes of this node. Default: every node. */
  readonly nodeName?: string | undefined;
  /** Where expansions and their failures are logged. Default: nowhere. */
  readonly logger?: Logger | undefined;
}

/** A JSON merge patch that the signal aborts. */
function mergePatch(signal: AbortSignal): ConfigurationOptions {
  const header = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const abort = withSignal(signal);
  return {
    ...header,
    middleware: [...(header.middleware ?? []), ...(abort.middleware ?? [])],
    middlewareMergeStrategy: 'append',
  };
}

function claimRef(claim: V1PersistentVolumeClaim): ObjectReference {
  const m = claim.metadata ?? {};
  return {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    ...(m.uid === undefined ? {} : { uid: m.uid }),
    ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
  };
}

/** Watches claims and expands their volumes within the budget; see the module comment. */
export class VolumeExpander {
  private readonly informer: Informer<V1PersistentVolumeClaim>;
  private readonly core: CoreV1Calls;
  private readonly storage: StorageV1Calls;
  private readonly logger: Logger;
  /** Claims being handled (by uid); an event for one of them is looked at again once it is done. */
  private readonly busy = new Map<string, boolean>();
  /** The last refusal reported per claim uid (`<size>`), so that resyncs do not repeat it. */
  private readonly refused = new Map<string, string>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly options: VolumeExpanderOptions) {
    this.logger = options.logger ?? silentLogger;
    this.core = makeCoreV1Calls(options.kubeConfig);
    this.storage = makeStorageV1Calls(options.kubeConfig);
    this.informer = informerFor(options.kubeConfig, 'PersistentVolumeClaim', {
      logger: this.logger,
      transform: stripManagedFields,
    });
    const look = (claim: V1PersistentVolumeClaim): void => this.enqueue(claim);
    this.informer.addEventHandler({ add: look, update: (_old, claim) => look(claim) });
  }

  /** Watches claims until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    await this.options.tracker.waitForSync(signal);
    await this.informer.run(signal);
  }

  private enqueue(claim: V1PersistentVolumeClaim): void {
    if (!this.wantsMore(claim)) return;
    const uid = claim.metadata?.uid ?? '';
    if (this.busy.has(uid)) {
      this.busy.set(uid, true);
      return;
    }
    this.busy.set(uid, false);
    void this.handle(claim)
      .catch((err: unknown) => {
        if (!this.signal.aborted)
          this.logger.warn({ claim: claimRef(claim).name, err: describeError(err) }, 'Volume expansion failed');
      })
      .finally(() => {
        const again = this.busy.get(uid) === true;
        this.busy.delete(uid);
        const latest = this.informer.store.get(`${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`);
        if (again && latest !== undefined && !this.signal.aborted) this.enqueue(latest);
      });
  }

  /** A bound claim whose request exceeds its status capacity (an expansion not done yet). */
  private wantsMore(claim: V1PersistentVolumeClaim): boolean {
    if (claim.status?.phase !== 'Bound' || (claim.spec?.volumeName ?? '') === '') return false;
    try {
      const request = quantityToBytes(claim.spec?.resources?.requests?.storage);
      return request > quantityToBytes(claim.status.capacity?.storage);
    } catch {
      return false;
    }
  }

  private async handle(claim: V1PersistentVolumeClaim): Promise<void> {
    const { tracker } = this.options;
    const pvName = claim.spec?.volumeName ?? '';
    const pv = tracker.volume(pvName);
    if (pv === undefined) return;
    // Only the PVs this provisioner made are in the ledger.
    const allocation = tracker.ledger.get(pvName);
    if (allocation === undefined) return;
    if (this.options.nodeName !== undefined && allocation.node !== this.options.nodeName) return;
    const className = pv.spec?.storageClassName ?? '';
    const storageClass = await this.readClass(className);
    if (storageClass?.allowVolumeExpansion !== true) return;
    const requestText = claim.spec?.resources?.requests?.storage ?? '';
    const request = quantityToBytes(requestText);
    if (request > allocation.bytes) {
      const room = await this.room(className, allocation.node, allocation.path, request - allocation.bytes);
      if (room !== undefined) {
        const uid = claim.metadata?.uid ?? '';
        if (this.refused.get(uid) === requestText) return;
        this.refused.set(uid, requestText);
        const message = `cannot expand volume ${pvName} from ${formatBytes(allocation.bytes)} to ${formatBytes(request)}: ${room}`;
        this.logger.warn({ pv: pvName }, message);
        this.options.event(claimRef(claim), 'Warning', VOLUME_RESIZE_FAILED, message);
        return;
      }
      // Counted at once, before the writes, so that a provision meanwhile cannot take the same space.
      tracker.ledger.put(pvName, { ...allocation, bytes: request });
      try {
        await this.core.patchPersistentVolume(
          { name: pvName, body: { spec: { capacity: { storage: requestText } } } },
          mergePatch(this.signal),
        );
      } catch (err) {
        tracker.ledger.put(pvName, allocation);
        throw err;
      }
    }
    await this.core.patchNamespacedPersistentVolumeClaimStatus(
      {
        name: claim.metadata?.name ?? '',
        namespace: claim.metadata?.namespace ?? '',
        body: { status: { capacity: { storage: requestText } } },
      },
      mergePatch(this.signal),
    );
    this.refused.delete(claim.metadata?.uid ?? '');
    const message = `resize volume ${pvName} to ${formatBytes(request)} (the budget of its node path; nothing on the disk changes)`;
    this.logger.info({ pv: pvName }, message);
    this.options.event(claimRef(claim), 'Normal', VOLUME_RESIZE_SUCCESSFUL, message);
  }

  /**
   * Why `more` bytes do not fit on the node path holding `volumePath`, or `undefined` when they do (or the path has
   * no capacity).
   */
  private async room(className: string, node: string, volumePath: string, more: bigint): Promise<string | undefined> {
    const classConfig = selectClassConfig(this.options.config(), className);
    const base = (nodePaths(classConfig, node) ?? []).find((p) => isBelow(volumePath, p.path));
    if (base === undefined || base.capacity === undefined) return undefined;
    const capacity = await this.options.tracker.capacityBytes(node, base.path, base.capacity, this.signal);
    const { bytes, volumes } = this.options.tracker.ledger.allocated(node, base.path);
    if (fits({ path: base.path, capacity, allocated: bytes, volumes }, more)) return undefined;
    const free = capacity === undefined ? 0n : capacity - bytes;
    return (
      `not enough space on node ${node}: ${base.path} has ${formatBytes(free > 0n ? free : 0n)} free ` +
      `(capacity ${formatBytes(capacity ?? 0n)}, ${formatBytes(bytes)} allocated to ${volumes} volume${volumes === 1 ? '' : 's'}), ` +
      `the expansion needs ${formatBytes(more)} more`
    );
  }

  private async readClass(name: string) {
    if (name === '') return undefined;
    try {
      return await this.storage.readStorageClass({ name }, withSignal(this.signal));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
