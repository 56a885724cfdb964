/** The binary's metrics and health endpoint: `/metrics` from its prom-client registry, and the controller's checks. */
import type { Registry } from 'prom-client';
import { controllerHealthChecks } from '../controller/health.js';
import type { ProvisionController } from '../controller/controller.js';
import { startHttpEndpoint, type HealthCheck, type HttpEndpoint } from '../metrics/http.js';
import { collectDefaultMetrics } from '../metrics/prom-client.js';
import { renderRegistry } from '../prometheus.js';
import type { EndpointAddress } from './common-options.js';

/** What {@link serveEndpoint} serves. */
export interface EndpointOptions {
  address: EndpointAddress;
  registry: Registry;
  /** The controller whose checks are served; undefined for a daemon without one (only the binary's checks then). */
  controller: ProvisionController | undefined;
  /** Whether the controller runs with leader election (then `/healthz/leader-election` is served). */
  leaderElection: boolean;
  /** More liveness checks, beside `leader-election`. */
  healthChecks?: Record<string, HealthCheck> | undefined;
  /** More readiness checks, beside `informers`. */
  readyChecks?: Record<string, HealthCheck> | undefined;
  /** Path of the metrics. Default `/metrics`. */
  metricsPath?: string | undefined;
  /** Path of the readiness checks. Default `/readyz`. */
  readyPath?: string | undefined;
}

/**
 * Starts the endpoint: prom-client's process metrics are added to the registry, which `/metrics` renders;
 * `/readyz` has the `informers` check and `/healthz` the `leader-election` check of `controllerHealthChecks` (when
 * there is a controller), plus the binary's own.
 */
export async function serveEndpoint(options: EndpointOptions): Promise<HttpEndpoint> {
  const { registry } = options;
  // The event loop's lag is sampled every 100 ms, not prom-client's default 10: a timer each 10 ms woke an idle
  // provisioner 100 times a second, most of its CPU at rest (local-static with 50 volumes: 14 ticks in 20 s, 4 with
  // 100 ms). A lag is measured as exactly; it is sampled less often.
  collectDefaultMetrics(registry, { eventLoopMonitoringPrecision: 100 });
  const checks =
    options.controller === undefined
      ? { readyChecks: {} }
      : controllerHealthChecks(options.controller, options.leaderElection);
  return startHttpEndpoint({
    ...options.address,
    renderMetrics: () => renderRegistry(registry),
    ...checks,
    ...(options.healthChecks === undefined ? {} : { healthChecks: options.healthChecks }),
    readyChecks: { ...checks.readyChecks, ...options.readyChecks },
    ...(options.metricsPath === undefined ? {} : { metricsPath: options.metricsPath }),
    ...(options.readyPath === undefined ? {} : { readyPath: options.readyPath }),
  });
}
