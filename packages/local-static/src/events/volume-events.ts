/**
 * The Events the provisioner records on its PVs: upstream's reasons, and how discovery and the deleter record them.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { EventRecorder } from '@kprov/provisioner-lib';

/** Event reason: a PV could not be cleaned or deleted. */
export const VOLUME_FAILED_DELETE = 'VolumeFailedDelete';
/** Event reason: a block volume's cleanup started. */
export const VOLUME_DELETE = 'VolumeDelete';
/** Event reason: a released PV has reclaim policy Recycle. */
export const VOLUME_UNSUPPORTED_RECLAIM_POLICY = 'VolumeUnsupportedReclaimPolicy';
/** Event reason: a released PV has a reclaim policy nobody knows. */
export const VOLUME_UNKNOWN_RECLAIM_POLICY = 'VolumeUnknownReclaimPolicy';

/** Records an Event of `type` about `pv`. */
export type VolumeEvents = (
  pv: V1PersistentVolume,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
) => void;

/** {@link VolumeEvents} through the recorder `recorder()` returns when the Event happens; none before there is one. */
export function volumeEvents(recorder: () => EventRecorder | undefined): VolumeEvents {
  return (pv, type, reason, message) =>
    recorder()?.event(
      { kind: 'PersistentVolume', apiVersion: 'v1', name: pv.metadata?.name ?? '', uid: pv.metadata?.uid ?? '' },
      type,
      reason,
      message,
    );
}
