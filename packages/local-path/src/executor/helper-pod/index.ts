/**
 * The helper pod executor: a provisioner for the whole cluster whose volume directories are made and removed by
 * helper pods, with their template, runner, watch, labels, reconciler and the measuring of `auto` capacities.
 *
 * @module
 */
export { HelperPodExecutor, type HelperPodExecutorOptions } from './executor.js';
export {
  FLAG_ALLOW_UNSAFE_HELPER_POD_TEMPLATE,
  HelperPodTemplateError,
  loadHelperPodTemplate,
  validateHelperPodTemplate,
} from './template.js';
export {
  DEFAULT_POLL_INTERVAL_MS,
  HelperPodFailedError,
  HelperPodRunner,
  HelperPodTimeoutError,
  type HelperPodRun,
  type HelperPodRunnerOptions,
} from './runner.js';
export {
  ANNOTATION_CLAIM,
  ANNOTATION_NODE,
  ANNOTATION_PATH,
  ANNOTATION_PROVISIONER,
  ANNOTATION_STORAGE_CLASS,
  ANNOTATION_VOLUME,
  LABEL_CLAIM_UID,
  LABEL_OPERATION,
} from './labels.js';
export {
  DEFAULT_RECONCILE_INTERVAL_MS,
  HelperPodReconciler,
  type HelperPodReconcilerOptions,
  type ReconcileReport,
} from './reconciler.js';
export {
  HelperPodStatfs,
  parseStatfsOutput,
  STATFS_OPERATION,
  STATFS_SCRIPT,
  type HelperPodStatfsOptions,
} from './statfs.js';
