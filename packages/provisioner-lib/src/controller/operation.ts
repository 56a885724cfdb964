import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EventEmitter } from 'eventemitter3';
import type { EventType } from '../events/types.js';
import type { ProvisionControllerEvents } from './events.js';
import { ProvisioningState } from './provisioner.js';

/**
 * How one pass of a claim (provision) or volume (delete) operation ended:
 *
 * - `succeeded`: the PV was saved, or the volume and its PV were deleted (or the provisioner ignored the deletion);
 * - `stopped`: it ended with nothing to retry (provision: the PV exists already, the provisioner ignored the claim,
 *   block volumes unsupported, another provisioner's class, a claim handed back to the scheduler; delete: not this
 *   provisioner's volume, or not due for deletion);
 * - `failed`: `error` is retried with back-off; `state` says what became of the claim (`InBackground`: the
 *   provisioner is still at work, keep the claim even if it is deleted meanwhile). Volumes fail `Finished`.
 */
export type OperationOutcome =
  | { readonly result: 'succeeded' }
  | { readonly result: 'stopped' }
  | { readonly result: 'failed'; readonly error: unknown; readonly state: ProvisioningState };

export const SUCCEEDED: OperationOutcome = { result: 'succeeded' };
export const STOPPED: OperationOutcome = { result: 'stopped' };

/** A failed pass; `state` defaults to `Finished`. */
export function failed(error: unknown, state: ProvisioningState = ProvisioningState.Finished): OperationOutcome {
  return { result: 'failed', error, state };
}

/**
 * The reason an operation's signal aborts with when the operation's own timeout (`provisionTimeoutMs`,
 * `deletionTimeoutMs`) has passed: a `TimeoutError`, as `AbortSignal.timeout`'s, told apart from the controller
 * stopping by its class.
 */
export class OperationTimeoutError extends DOMException {
  constructor(ms: number) {
    super(`the operation did not finish within its timeout of ${ms} ms`, 'TimeoutError');
  }
}

/**
 * Whether an operation's `signal` aborted because the controller is stopping (shutdown or lost leadership): the
 * interruption is not the claim's or volume's failure, and the next run or the new leader takes the work up. An
 * operation that ran out of its own time ({@link OperationTimeoutError}) failed, like any other error.
 */
export function controllerStopping(signal: AbortSignal): boolean {
  return signal.aborted && !(signal.reason instanceof OperationTimeoutError);
}

/** What an operation reports as it goes, to the Kubernetes API (Events) and to the embedding program. */
export interface OperationReporter {
  /** Records a Kubernetes Event about a claim. Never throws or waits. */
  claimEvent(claim: V1PersistentVolumeClaim, type: EventType, reason: string, message: string): void;
  /** Records a Kubernetes Event about a volume. Never throws or waits. */
  volumeEvent(volume: V1PersistentVolume, type: EventType, reason: string, message: string): void;
  /** Emits one of the controller's typed events to the embedding program. */
  emit: EventEmitter<ProvisionControllerEvents>['emit'];
}
