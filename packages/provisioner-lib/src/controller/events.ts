import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';

/**
 * Events a {@link ProvisionController} emits for the embedding application (eventemitter3). Listeners run
 * synchronously inside the controller: keep them short, and do not throw.
 *
 * Errors are given as the Kubernetes Events describe them: an API server's refusal is an `ApiStatusError` with the
 * status `code`, `reason` and the server's `message` (client-node's `ApiException` is its `cause`); errors thrown by
 * the provisioner are passed as thrown (a value that is not an Error is wrapped in one).
 */
export interface ProvisionControllerEvents {
  /** A claim's PV was saved. */
  provisioned: [claim: V1PersistentVolumeClaim, volume: V1PersistentVolume];
  /** A provisioning attempt failed (it will be retried unless the threshold was reached). */
  provisionFailed: [claim: V1PersistentVolumeClaim, error: Error];
  /** The provisioner ignored a claim (IgnoredError). */
  provisionIgnored: [claim: V1PersistentVolumeClaim, error: Error];
  /** A claim was handed back to the scheduler (Reschedule). */
  rescheduled: [claim: V1PersistentVolumeClaim];
  /** A volume and its PV object were deleted. */
  deleted: [volume: V1PersistentVolume];
  /** Deleting a volume failed (it will be retried unless the threshold was reached). */
  deleteFailed: [volume: V1PersistentVolume, error: Error];
  /** A claim or volume exceeded its failure threshold: no more retries until it changes or the next resync. */
  gaveUp: [kind: 'claim' | 'volume', key: string, error: Error];
  /** This instance became the leader (or leader election is off and the controller started). */
  startedLeading: [];
  /** This instance stopped leading; the controller stops all work. */
  stoppedLeading: [];
  /** Another instance (or this one) is now the observed leader. */
  newLeader: [identity: string];
  /** The informers have synced and the workers have started. */
  started: [];
}
