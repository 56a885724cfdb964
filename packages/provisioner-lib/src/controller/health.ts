import type { HttpEndpointOptions } from '../metrics/http.js';
import type { ProvisionController } from './controller.js';

/**
 * The checks a provisioner binary serves for its controller through `startHttpEndpoint`, spread into its options:
 * readiness `informers` (fails until the informers synced, so also while waiting for the lease) and, with leader
 * election, the sidecars' `/healthz/leader-election` from `leaderHealth()`.
 *
 * @param leaderElection - whether the controller runs with leader election; without it there is no leader check.
 */
export function controllerHealthChecks(controller: ProvisionController, leaderElection: boolean): Pick<HttpEndpointOptions, 'readyChecks' | 'leaderCheck'> {
  return {
    readyChecks: {
      informers: () => {
        if (!controller.hasSynced()) throw new Error('informers not synced (or not the leader yet)');
      },
    },
    ...(leaderElection ? { leaderCheck: () => controller.leaderHealth() } : {}),
  };
}
