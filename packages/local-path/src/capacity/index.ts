/**
 * Capacity of node paths (ours, opt-in): size bounds per class, a budget per node path that placement respects
 * (handing a claim back to the scheduler when its node is full), expansion within the budget, metrics and the
 * `status` report.
 *
 * @module
 */
export { checkSizeBounds, PARAM_MAX_SIZE, PARAM_MIN_SIZE, sizeBoundsOf, type SizeBound } from './bounds.js';
export { allocationOf, Ledger, type Allocated, type Allocation } from './ledger.js';
export { configNodePaths, nodePaths, usesCapacity, type NodePath } from './paths.js';
export {
  checkAnyPathCanHold,
  choosePath,
  fits,
  NOT_ENOUGH_SPACE,
  type Candidate,
  type PlaceRequest,
  type VolumePlacement,
} from './placement.js';
export { usageOf, type PathUsage } from './usage.js';
export { CAPACITY_METRICS_PREFIX, CapacityMetrics } from './metrics.js';
export {
  CapacityTracker,
  DEFAULT_MEASURE_TTL_MS,
  type CapacityTrackerOptions,
  type MeasureFileSystem,
} from './tracker.js';
export {
  VOLUME_RESIZE_FAILED,
  VOLUME_RESIZE_SUCCESSFUL,
  VolumeExpander,
  type VolumeExpanderOptions,
} from './expansion.js';
export { formatUsage, readUsage, usageJson } from './status.js';
export {
  parseStatusOptions,
  runStatus,
  STATUS_COMMAND,
  STATUS_HELP,
  statusArguments,
  type StatusIo,
  type StatusOptions,
} from './status-command.js';
