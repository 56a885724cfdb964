/** Metrics: the sink interface, the controller's and leader election's metrics, and the HTTP endpoint. */
export { DEFAULT_BUCKETS, noopMetrics } from './sink.js';
export type { Counter, Gauge, Histogram, HistogramOptions, Labels, MetricOptions, MetricsSink } from './sink.js';
export {
  CONTROLLER_SUBSYSTEM,
  createControllerMetrics,
  type ControllerMetrics,
  type DeleteLabels,
  type ProvisionLabels,
} from './controller-metrics.js';
export { LEADER_ELECTION_MASTER_STATUS, createLeaderMetrics, type LeaderMetrics } from './leader-metrics.js';
export {
  startHttpEndpoint,
  type HealthCheck,
  type HttpEndpoint,
  type HttpEndpointOptions,
  type RenderedMetrics,
} from './http.js';
