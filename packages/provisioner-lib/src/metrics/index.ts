/** Metrics: the sink interface, the name of leader election's metric, and the HTTP endpoint. */
export { DEFAULT_BUCKETS, noopMetrics } from './sink.js';
export type { Counter, Gauge, Histogram, HistogramOptions, Labels, MetricOptions, MetricsSink } from './sink.js';
export { LEADER_ELECTION_MASTER_STATUS } from './leader-metrics.js';
export {
  startHttpEndpoint,
  type HealthCheck,
  type HttpEndpoint,
  type HttpEndpointOptions,
  type RenderedMetrics,
} from './http.js';
