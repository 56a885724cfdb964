import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';

/** What `provision` reports about a provisioning attempt, as the Go library's `ProvisioningState`. */
export const ProvisioningState = {
  /** Provisioning is definitely not running any more. */
  Finished: 'Finished',
  /** Provisioning may still be running in the background: the claim is kept in progress even if it is deleted. */
  InBackground: 'Background',
  /** Nothing changed (for example the backend was unreachable): in-progress bookkeeping stays as it was. */
  NoChange: 'NoChange',
  /** Stop, and let the scheduler pick another node: the controller removes the claim's selected-node annotation. */
  Reschedule: 'Reschedule',
} as const;
export type ProvisioningState = (typeof ProvisioningState)[keyof typeof ProvisioningState];

/** What the controller passes to {@link Provisioner.provision}. Do not mutate these objects. */
export interface ProvisionOptions {
  /** The claim's StorageClass; read `parameters`, `reclaimPolicy`, `mountOptions`, `allowedTopologies` from it. */
  storageClass: V1StorageClass;
  /** The name the returned PV must have (`pvc-<claim uid>` unless a `volumeName` hook says otherwise). */
  pvName: string;
  /** The claim. */
  pvc: V1PersistentVolumeClaim;
  /** The node the scheduler selected (`volume.kubernetes.io/selected-node`, else the alpha key), or `''`. */
  selectedNodeName: string;
}

/** A successful provisioning: the PV template that the controller completes and saves. */
export interface ProvisionResult {
  volume: V1PersistentVolume;
}

/**
 * A storage provisioner. `provision` creates the storage asset and returns a PV template (the controller writes it
 * to the API server, adding claimRef, the provisioned-by annotation, the class name and the optional finalizer);
 * `delete` removes the asset behind a PV (not the PV object). Both must be idempotent: they may be called again
 * for the same claim or volume after retries and restarts. The signal aborts on the configured timeout or when the
 * controller stops.
 *
 * To fail with a state other than Finished, throw a {@link ProvisioningError}. To leave a claim or volume to
 * another provisioner, throw an {@link IgnoredError}.
 */
export interface Provisioner {
  provision(options: ProvisionOptions, signal: AbortSignal): Promise<ProvisionResult>;
  delete(volume: V1PersistentVolume, signal: AbortSignal): Promise<void>;
  /** Optional qualifier (Go `Qualifier`): `false` skips the claim silently. Checked after the already-bound check. */
  shouldProvision?(claim: V1PersistentVolumeClaim, signal: AbortSignal): boolean | Promise<boolean>;
  /** Optional (Go `BlockProvisioner`): whether Block volume mode is supported. Absent means not supported. */
  supportsBlock?(signal: AbortSignal): boolean | Promise<boolean>;
  /** Optional deletion guard (Go `DeletionGuard`): `false` keeps the volume. */
  shouldDelete?(volume: V1PersistentVolume, signal: AbortSignal): boolean | Promise<boolean>;
}

/**
 * Thrown by `provision` or `delete` when this provisioner is not responsible: no event, no retry, and for delete
 * the PV object is kept. The message is `ignored because <reason>`, as in the Go library.
 */
export class IgnoredError extends Error {
  override readonly name = 'IgnoredError';
  constructor(readonly reason: string) {
    super(`ignored because ${reason}`);
  }
}

/** Thrown by `provision` to fail with a given {@link ProvisioningState} (InBackground, NoChange, Reschedule). */
export class ProvisioningError extends Error {
  override readonly name = 'ProvisioningError';
  readonly state: ProvisioningState;
  constructor(message: string, options: { state: ProvisioningState; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.state = options.state;
  }
}

/**
 * Thrown by `provision` when the request can never succeed as it is (bad parameters): the claim is retried only
 * after a slow-retry window (5 minutes), as the Go library does for gRPC InvalidArgument. An error whose `code`
 * is 3 (gRPC InvalidArgument, as `@grpc/grpc-js` reports it) anywhere in its `cause` chain counts too.
 */
export class InfeasibleError extends Error {
  override readonly name = 'InfeasibleError';
}

/** gRPC status code InvalidArgument. */
const GRPC_INVALID_ARGUMENT = 3;

/** Whether an error means "infeasible": an InfeasibleError or gRPC InvalidArgument, following `cause`. */
export function isInfeasible(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    if (e instanceof InfeasibleError) return true;
    if (typeof e === 'object' && 'code' in e && e.code === GRPC_INVALID_ARGUMENT) return true;
    e = typeof e === 'object' && 'cause' in e ? e.cause : undefined;
  }
  return false;
}

/** The state a thrown error carries: a ProvisioningError's, else Finished. */
export function stateOf(err: unknown): ProvisioningState {
  return err instanceof ProvisioningError ? err.state : ProvisioningState.Finished;
}
