/**
 * What makes and removes the volume directories, whichever executor it is: the {@link VolumeExecutor} and
 * {@link VolumeScope} interfaces and the script's inputs. The two executors are in `helper-pod/` and `node/`.
 *
 * @module
 */
export {
  EVERY_NODE,
  type FileSystemSize,
  type OrphanTeardown,
  type VolumeDirectory,
  type VolumeExecutor,
  type VolumeRecord,
  type VolumeScope,
  type VolumeSetup,
} from './executor.js';
export { FAILED_LOG_LINES } from './output.js';
export {
  OrphanReconciler,
  OrphanTeardowns,
  orphanState,
  type OrphanReconcilerOptions,
  type OrphanState,
} from './orphans.js';
export type { ScriptInputs, VolumeAction } from './script.js';
