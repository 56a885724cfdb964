/**
 * The local-path provisioner: {@link LocalPathProvisioner} (claim checks, placement, path, PV, then the executor) and
 * the PV it returns.
 *
 * @module
 */
export { LocalPathProvisioner, type LocalPathProvisionerOptions } from './provisioner.js';
export {
  VOLUME_CLEANUP_SKIPPED,
  VOLUME_DELETION_REFUSED,
  VOLUME_NODE_MISMATCH,
  type VolumeWarning,
} from './warnings.js';
export {
  affinityTermOf,
  buildPersistentVolume,
  volumePathOf,
  type AffinityTerm,
  type PersistentVolumeInputs,
} from './persistent-volume.js';
