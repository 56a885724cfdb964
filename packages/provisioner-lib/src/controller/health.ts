import type { HttpEndpointOptions } from '../metrics/http.js';
import type { ProvisionController } from './controller.js';

/**
 * The checks a provisioner binary serves for its controller through `startHttpEndpoint`, spread into its options:
 * readiness `informers`, which fails while the leader (or, without leader election, the only instance) has not
 * synced its informers; and, with leader election, the sidecars' `/healthz/leader-election` from `leaderHealth()`.
 *
 * A standby is ready, as in the sig-storage sidecars, whose readiness does not depend on leadership (that is
 * `/healthz/leader-election`'s business): a rolling update waits for the new pod to be ready before it stops the old
 * one, and a PodDisruptionBudget counts ready pods, so a standby reported unready would block both.
 *
 * @param leaderElection - whether the controller runs with leader election; without it there is no leader check.
 */
export function controllerHealthChecks(
  controller: ProvisionController,
  leaderElection: boolean,
): Pick<HttpEndpointOptions, 'readyChecks' | 'leaderCheck'> {
  return {
    readyChecks: {
      informers: () => {
        if (leaderElection && !controller.isLeader()) return;
        if (!controller.hasSynced()) throw new Error('informers not synced');
      },
    },
    ...(leaderElection ? { leaderCheck: () => controller.leaderHealth() } : {}),
  };
}
