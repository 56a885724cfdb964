import type { ProvisionController } from '../controller/controller.js';

/** Options of {@link settle}. */
export interface SettleOptions {
  /** How many checks in a row must find nothing to do. Default 5. */
  quietChecks?: number;
  /** Pause between checks, in ms. Default 30. */
  intervalMs?: number;
  /** Give up after this many ms. Default 10 000. */
  timeoutMs?: number;
}

/**
 * Resolves once the controller has had nothing to do (`pendingWork` 0: no claim or volume queued or in progress) for
 * `quietChecks` checks in a row, for a test that asserts what did not happen. Real time, on purpose: the controller's
 * watches and writes take real time.
 *
 * @throws Error when the controller is still busy after `timeoutMs`.
 */
export async function settle(controller: ProvisionController, options: SettleOptions = {}): Promise<void> {
  const needed = options.quietChecks ?? 5;
  const intervalMs = options.intervalMs ?? 30;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let quiet = 0;
  while (quiet < needed) {
    if (Date.now() > deadline)
      throw new Error(
        `settle: the controller still has ${controller.pendingWork} pending item(s) after ${options.timeoutMs ?? 10_000} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    quiet = controller.pendingWork === 0 ? quiet + 1 : 0;
  }
}
