/**
 * Work queues with client-go semantics: {@link Queue} (dedupe, FIFO, one worker per item), {@link DelayingQueue}
 * (`addAfter`), {@link RateLimitingQueue} (`addRateLimited`, `forget`, `numRequeues`), the client-go rate
 * limiters, and the `workqueue_*` metrics.
 * @packageDocumentation
 */
export type { QueueGetResult, QueueOptions } from './queue.js';
export { Queue } from './queue.js';
export { DelayingQueue } from './delaying.js';
export type { RateLimitingQueueOptions } from './rate-limiting.js';
export { RateLimitingQueue, newRateLimitingQueue } from './rate-limiting.js';
export type { BackoffRateLimiterOptions, RateLimiter } from './rate-limiters.js';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
  backoffRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  provisionerRateLimiter,
} from './rate-limiters.js';
export { WORKQUEUE_METRIC_NAMES, type QueueMetrics } from './metrics.js';
