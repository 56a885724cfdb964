/**
 * The loop of the orphan reconcilers: a pass at once, then one every interval, on the reconciler's clock.
 *
 * @module
 */
import { describeError, sleep, type Clock, type Logger } from '@kprov/provisioner-lib';

/**
 * Runs `pass` at once, then again every `intervalMs` on `clock`, until `signal` aborts. A pass that fails is logged
 * as a warning, `failure` with the error, and the next one runs as planned.
 */
export async function runPasses(
  pass: (signal: AbortSignal) => Promise<unknown>,
  intervalMs: number,
  signal: AbortSignal,
  logger: Logger,
  failure: string,
  clock: Clock,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await pass(signal);
    } catch (err) {
      if (signal.aborted) return;
      logger.warn({ err: describeError(err) }, failure);
    }
    try {
      await sleep(clock, intervalMs, signal);
    } catch {
      return;
    }
  }
}
