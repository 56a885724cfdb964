/**
 * The warnings the provisioner gives about a volume, which the program records as Warning Events on the PV.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** Reason of the warning when the node of a volume is gone and its cleanup is skipped. */
export const VOLUME_CLEANUP_SKIPPED = 'VolumeCleanupSkipped';
/** Reason of the warning when a teardown is refused (a path this provisioner could not have created for the PV). */
export const VOLUME_DELETION_REFUSED = 'VolumeDeletionRefused';
/** Reason of the warning when the PV's selected-node annotation disagrees with its node affinity. */
export const VOLUME_NODE_MISMATCH = 'VolumeNodeMismatch';

/** Receives a warning about a volume, with its reason (one of the above). */
export type VolumeWarning = (volume: V1PersistentVolume, message: string, reason: string) => void;
