/**
 * @packageDocumentation
 * A Kubernetes external storage provisioner controller: implement a {@link Provisioner} and run a
 * {@link ProvisionController}. A port of the Go `sig-storage-lib-external-provisioner` (v13), with its building
 * blocks (work queues, rate limiters, informers, Lease leader election, event recorder, metrics) usable alone.
 */
export { ProvisionController, LeaderElectionLostError } from './controller/controller.js';
export { DEFAULTS, type ProvisionControllerOptions } from './controller/options.js';
export { makeProvisionControllerClient, type ProvisionControllerClient } from './controller/client.js';
export { controllerHealthChecks } from './controller/health.js';
export { defaultIdentity } from './leaderelection/config.js';
export {
  IgnoredError,
  InfeasibleError,
  ProvisioningError,
  ProvisioningState,
  isInfeasible,
  type ProvisionOptions,
  type ProvisionResult,
  type Provisioner,
} from './controller/provisioner.js';
export type { ProvisionControllerEvents } from './controller/events.js';
export * from './controller/annotations.js';
export {
  ApiStatusError,
  apiStatus,
  describeError,
  isAlreadyExists,
  isNotFound,
  toError,
  type ApiStatus,
} from './client/api-errors.js';
export { claimClass, selectedNodeName } from './controller/claims.js';
export { realClock, sleep, type Clock, type TimerHandle } from './clock/clock.js';
export { silentLogger, type Logger } from './logging/logger.js';
export * from './metrics/index.js';
export * from './workqueue/index.js';
export { Backoff, type BackoffOptions } from './backoff/backoff.js';
export {
  makeApiClient,
  sharedAgent,
  closeSharedConnections,
  watchWithAgent,
  withSignal,
  DEFAULT_USER_AGENT,
  type AgentClientOptions,
} from './client/agent.js';
export {
  RestClient,
  JSON_PATCH_TYPES,
  type Query,
  type RestClientOptions,
  type RestRequest,
  type WatchCallback,
  type WatchDone,
} from './client/rest.js';
export type { ListItemOptions } from './client/list-items.js';
export { makeCoreV1Calls, type CoreV1Calls } from './client/calls/core-v1.js';
export {
  makeBatchV1Calls,
  makeCoordinationV1Calls,
  makeStorageV1Calls,
  type BatchV1Calls,
  type CoordinationV1Calls,
  type StorageV1Calls,
} from './client/calls/other-apis.js';
export {
  TokenBucketRateLimiter,
  type RequestPriority,
  type RequestRateLimiter,
  type TokenBucketOptions,
} from './client/rate-limit/token-bucket.js';
export {
  setClientRateLimit,
  clientRateLimiter,
  DEFAULT_CLIENT_QPS,
  DEFAULT_CLIENT_BURST,
  type ClientRateLimitOptions,
} from './client/rate-limit/client-rate-limit.js';
export type { ThrottledRequest, ThrottleHook } from './client/rate-limit/throttle-message.js';
export { logThrottledRequests, type ThrottleLogOptions } from './client/rate-limit/throttle-log.js';
export {
  Informer,
  informerFor,
  type EventHandler,
  type InformerForOptions,
  type InformerOptions,
  type InformerKind,
  type InformerKinds,
} from './cache/informer.js';
export { stripManagedFields } from './cache/managed-fields.js';
export { restListFn, type RestListOptions } from './cache/rest-list.js';
export {
  createStore,
  metaNamespaceKey,
  type IndexFunc,
  type KeyFunc,
  type Store,
  type StoreChange,
  type StoreOptions,
  type StoreWriter,
} from './cache/store.js';
export {
  Watcher,
  DEFAULT_PAGE_SIZE,
  DEFAULT_IDLE_TIMEOUT_MS,
  type ListFn,
  type ListParams,
  type BackoffLike,
  type RestartReason,
  type WatcherEvent,
  type WatchLike,
  type WatcherOptions,
  type WatcherRestart,
} from './watch/watcher.js';
export * from './events/index.js';
export { MinMaxAllocator, AllocatorError } from './allocator/minmax.js';
export { loadKubeConfig } from './client/kubeconfig.js';
