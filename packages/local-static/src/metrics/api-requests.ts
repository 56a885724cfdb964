/**
 * Upstream's count of the PV requests the provisioner sends: each create and delete counted, failures too, and timed.
 *
 * @module
 */
import type { Clock } from '@kprov/provisioner-lib';
import type { LocalStaticMetrics } from './metrics.js';

/** The PV requests counted. */
export type ApiRequestMethod = 'create' | 'delete';

/** Runs `call`, a PV request of `method`, counted and timed in `metrics` on `clock`. */
export async function countedApiRequest<T>(
  metrics: LocalStaticMetrics,
  clock: Clock,
  method: ApiRequestMethod,
  call: () => Promise<T>,
): Promise<T> {
  const started = clock.now();
  metrics.apiRequests.inc({ method });
  try {
    return await call();
  } catch (err) {
    metrics.apiRequestsFailed.inc({ method });
    throw err;
  } finally {
    metrics.apiRequestsDuration.observe({ method }, (clock.now() - started) / 1000);
  }
}
