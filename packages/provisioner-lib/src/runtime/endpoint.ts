/** The binary's metrics and health endpoint: `/metrics` from its prom-client registry, and the controller's checks. */
import { collectDefaultMetrics, type Registry } from 'prom-client';
import { controllerHealthChecks } from '../controller/health.js';
import type { ProvisionController } from '../controller/controller.js';
import { startHttpEndpoint, type HealthCheck, type HttpEndpoint } from '../metrics/http.js';
import { renderRegistry } from '../prometheus.js';
import type { EndpointAddress } from './common-options.js';

/** What {@link serveEndpoint} serves. */
export interface EndpointOptions {
  address: EndpointAddress;
  registry: Registry;
  controller: ProvisionController;
  /** Whether the controller runs with leader election (then `/healthz/leader-election` is served). */
  leaderElection: boolean;
  /** More liveness checks, beside `leader-election`. */
  healthChecks?: Record<string, HealthCheck> | undefined;
  /** More readiness checks, beside `informers`. */
  readyChecks?: Record<string, HealthCheck> | undefined;
}

/**
 * Starts the endpoint: prom-client's process metrics are added to the registry, which `/metrics` renders;
 * `/readyz` has the `informers` check and `/healthz` the `leader-election` check of `controllerHealthChecks`, plus
 * the binary's own.
 */
export async function serveEndpoint(options: EndpointOptions): Promise<HttpEndpoint> {
  const { registry } = options;
  collectDefaultMetrics({ register: registry });
  const checks = controllerHealthChecks(options.controller, options.leaderElection);
  return startHttpEndpoint({
    ...options.address,
    renderMetrics: () => renderRegistry(registry),
    ...checks,
    ...(options.healthChecks === undefined ? {} : { healthChecks: options.healthChecks }),
    readyChecks: { ...checks.readyChecks, ...options.readyChecks },
  });
}
