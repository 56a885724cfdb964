/**
 * The node executor (node mode): one provisioner per node that makes and removes its node's volume directories
 * itself, with the checks, scripts, owner patterns, pending records, orphan reconciler and measuring of that, its
 * scope (the claims and PVs of its node), and what it reads of kuttiproject/provisioner-localvolume.
 *
 * @module
 */
export {
  checkVolumeDirCreate,
  checkVolumeDirRemove,
  createVolumeDir,
  onHost,
  removeVolumeDir,
  VolumeDirRefusedError,
} from './node-dirs.js';
export { CommandFailedError, CommandTimeoutError, runCommand, type CommandRun } from './command-runner.js';
export {
  isStockScript,
  normaliseScript,
  planScript,
  scriptCall,
  type NodeScripts,
  type ScriptCallInputs,
  type ScriptPlan,
} from './scripts.js';
export { applyFileMode, FileModeError } from './file-mode.js';
export { applyOwner, type OwnerValues } from './owner.js';
export { listPending, PENDING_DIR, removePending, writePending, type PendingRecord } from './pending.js';
export { NodeExecutor, type NodeExecutorOptions, type NodeModeOptions } from './executor.js';
export { NODE_MODE_NEEDS_SELECTED_NODE, NodeScope } from './scope.js';
export { measureFileSystem } from './statfs.js';
export {
  basePathsOf,
  NodeOrphanReconciler,
  type NodeOrphanReconcilerOptions,
  type NodeReconcileReport,
} from './orphan-reconciler.js';
export {
  KUTTI_PROVISIONED_BY_ANNOTATION,
  KUTTI_PROVISIONED_ON_ANNOTATION,
  KUTTI_PROVISIONER_NAME,
  kuttiNodeOf,
  kuttiVolumeType,
} from './kutti.js';
