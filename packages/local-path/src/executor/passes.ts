import { describeError, realClock, sleep, type Logger } from '@kprov/provisioner-lib';

/**
 * Runs `pass` at once, then again every `intervalMs`, until `signal` aborts: the loop of the reconcilers. A pass
 * that fails is logged as a warning, `failure` with the error, and the next one runs as planned.
 */
export async function runPasses(
  pass: (signal: AbortSignal) => Promise<unknown>,
  intervalMs: number,
  signal: AbortSignal,
  logger: Logger,
  failure: string,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await pass(signal);
    } catch (err) {
      if (signal.aborted) return;
      logger.warn({ err: describeError(err) }, failure);
    }
    try {
      await sleep(realClock, intervalMs, signal);
    } catch {
      return;
    }
  }
}
