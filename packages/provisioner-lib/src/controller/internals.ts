import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ResolvedOptions } from './options.js';
import type { VolumeStore } from './volume-store.js';

/**
 * What the library's own tests reach inside a {@link ProvisionController} for (the Go tests' direct calls of
 * `syncClaim`, `enqueueClaim` and their looks at `claimsInProgress`). No entry point of the package exports it.
 */
export interface ControllerInternals {
  /** The options with every default filled in. */
  readonly options: ResolvedOptions;
  /** Claims whose last provision returned InBackground, by UID. */
  readonly claimsInProgress: Map<string, V1PersistentVolumeClaim>;
  /** Where provisioned PVs are saved (the queue store has `pending()`). */
  readonly volumeStore: VolumeStore;
  /** One pass over a claim, as a claim worker makes it; rejects with what the worker would retry. */
  syncClaim(claim: V1PersistentVolumeClaim, signal: AbortSignal): Promise<void>;
  /** One pass over a volume, as a volume worker makes it; rejects with what the worker would retry. */
  syncVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<void>;
  /** Enqueues a claim by UID, as an informer event would. */
  enqueueClaim(claim: V1PersistentVolumeClaim): void;
}

const registry = new WeakMap<object, ControllerInternals>();

/** Called by the controller's constructor. */
export function registerInternals(controller: object, internals: ControllerInternals): void {
  registry.set(controller, internals);
}

/**
 * The internals of `controller`.
 *
 * @throws Error for an object that is not a ProvisionController.
 */
export function internalsOf(controller: object): ControllerInternals {
  const internals = registry.get(controller);
  if (internals === undefined) throw new Error('internalsOf: not a ProvisionController');
  return internals;
}
