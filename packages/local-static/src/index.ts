/**
 * @packageDocumentation
 * `@kprov/local-static`: the static local volume provisioner of sig-storage-local-static-provisioner
 * (`local-volume-provisioner`) on kprov's building blocks. One instance per node publishes the disks mounted in its
 * discovery directories as local PersistentVolumes and cleans them when they are released; `node-cleanup`, the same
 * binary's subcommand, deletes the claims and PVs of local volumes whose Node was deleted.
 */
export { main, NODE_NAME_ENV, NAMESPACE_ENV, JOB_IMAGE_ENV, READY_PATH, type MainContext } from './main.js';
export {
  parseCommandLine,
  PROGRAM,
  FLAGS,
  DEFAULT_CONFIG_SYNC_PERIOD_MS,
  type LocalStaticOptions,
} from './cli/options.js';
export { LocalStaticProvisioner, type LocalStaticProvisionerOptions } from './provisioner.js';
export { DEFAULT_DISCOVERY_PERIOD_MS } from './discovery/discoverer.js';
export {
  VOLUME_FAILED_DELETE,
  VOLUME_DELETE,
  VOLUME_UNSUPPORTED_RECLAIM_POLICY,
  VOLUME_UNKNOWN_RECLAIM_POLICY,
} from './events/volume-events.js';
export { BLOCK_DEVICE_ENV } from './deleter/deleter.js';
export {
  buildConfig,
  buildClassConfig,
  emptyConfig,
  DEFAULT_CONFIG_DIR,
  DEFAULT_BLOCK_CLEANER_COMMAND,
  DEFAULT_MIN_RESYNC_PERIOD_MS,
  DEFAULT_CLEANUP_TIMEOUT_MS,
  type VolumeMode,
  type BuiltConfig,
  type ClassConfig,
  type ProvisionerConfig,
} from './config/config.js';
export {
  ConfigDirectory,
  ConfigReadError,
  readConfigTexts,
  parseConfigTexts,
  type ConfigDirectoryOptions,
  type ConfigState,
} from './config/source.js';
export { compileGlob, nameMatcher, BadPatternError } from './config/glob.js';
export {
  createLocalStaticMetrics,
  METRIC_NAMES,
  METRICS_SUBSYSTEM,
  type LocalStaticMetrics,
} from './metrics/metrics.js';
export { CleanupBackoff, DEFAULT_CLEANUP_BACKOFF_MAX_MS } from './deleter/backoff.js';
export { ProcTable, type CleanupEntry, type CleanupState, type ProcTableGauges } from './deleter/proctable.js';
export {
  removeContents,
  runCleanerCommand,
  withTimeout,
  CleanupTimeoutError,
  type CleanerCommandOptions,
  type RemoveContentsOptions,
} from './deleter/cleanup.js';
export {
  cleanupJob,
  jobName,
  JOB_START_TIME_ANNOTATION,
  JOB_DEVICE_ANNOTATION,
  type CleanupJobSpec,
} from './deleter/job.js';
export { volumeName, fnv1a32, PV_NAME_PREFIX } from './discovery/volume-name.js';
export { roundDownCapacity, capacityQuantity, capacityBucket } from './discovery/capacity.js';
export { parseMountInfo, readMountPoints, DEFAULT_MOUNT_INFO } from './discovery/mounts.js';
export { pathMode, filesystemCapacity, blockDeviceCapacity, DEFAULT_SYSFS } from './discovery/probe.js';
export {
  buildVolume,
  volumeLabels,
  provisionerName,
  PROVISIONED_BY_ANNOTATION,
  ALPHA_NODE_AFFINITY_ANNOTATION,
  HOSTNAME_LABEL,
  PROVISIONER_NAME_PREFIX,
  type VolumeSpec,
} from './discovery/volume.js';
export { nodeCleanupMain, type NodeCleanupMainContext } from './node-cleanup/main.js';
export {
  parseNodeCleanupCommandLine,
  NODE_CLEANUP_COMMAND,
  NODE_CLEANUP_PROGRAM,
  NODE_CLEANUP_FLAGS,
  type NodeCleanupCommandOptions,
} from './node-cleanup/options.js';
export {
  NodeCleanup,
  NODE_CLEANUP_COMPONENT,
  DEFAULT_RESYNC_MS,
  DEFAULT_NODE_CLEANUP_WORKERS,
  type NodeCleanupOptions,
} from './node-cleanup/node-cleanup.js';
export {
  CleanupController,
  REFERENCED_NODE_DELETED,
  DEFAULT_PVC_DELETION_DELAY_MS,
  STALE_PV_QUEUE,
  type CleanupControllerOptions,
  type CleanupOutcome,
} from './node-cleanup/controller.js';
export {
  StaleVolumeDeleter,
  DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS,
  type StaleVolumeDeleterOptions,
} from './node-cleanup/deleter.js';
export {
  createNodeCleanupMetrics,
  NODE_CLEANUP_METRIC_NAMES,
  NODE_CLEANUP_METRICS_SUBSYSTEM,
  type NodeCleanupMetrics,
} from './node-cleanup/metrics.js';
export { localVolumeNodeNames, pinnedNodeNames, isLocalVolumeOfClass } from './node-cleanup/node-names.js';
export { anyNodeExists, anyNodeExistsNow, hostnameIndex, HOSTNAME_INDEX } from './node-cleanup/node-exists.js';
export { nodeInformer } from './node-cleanup/node-informer.js';
