import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this many ms. Default 30 000. */
  timeoutMs?: number;
  /** Pause between probes, in ms. Default 100. */
  intervalMs?: number;
  /** Stop waiting (rejecting with the signal's reason) when this aborts. Default: none. */
  signal?: AbortSignal;
}

/**
 * Calls `probe` until it returns something other than `undefined` and returns that. A probe that throws counts as
 * "not yet" (an object that does not exist yet is the usual case); its last error is quoted when time runs out.
 *
 * @param what - what is awaited, for the timeout message ("PVC local-path-pvc Bound").
 * @throws Error `timed out after <ms> ms waiting for <what>` (with the probe's last error, if any).
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause =
        lastError === undefined
          ? ''
          : ` (last error: ${lastError instanceof Error ? lastError.message : inspect(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(intervalMs, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch(
      (err: unknown) => {
        // timers/promises rejects with a generic AbortError; the caller wants the reason it aborted with.
        throw options.signal?.aborted === true ? options.signal.reason : err;
      },
    );
  }
}
