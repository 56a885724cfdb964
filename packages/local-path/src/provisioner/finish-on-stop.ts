/**
 * The signal a volume operation runs under. The controller aborts the signal of its operations when it stops,
 * whether the program was asked to stop (SIGTERM, SIGINT: `kubectl delete pod`, a rolling update, a drain) or lost
 * its leadership. An operation cut short that way is thrown away (its helper pod deleted in the middle of its
 * script) and logged as a failed sync, then done again from the start by the next leader. After a requested stop,
 * an operation in flight is finished instead: its signal then aborts only for a lost leadership or an operation
 * timeout. The stop waits for it (the controller gives the Lease up once its operations have returned); the pod's
 * termination grace period and `cmdTimeoutSeconds` bound the wait.
 *
 * @module
 */

/** The signal of one operation, and the release of the listener it keeps on the controller's signal. */
export interface OperationSignal {
  /** Aborts when the controller's signal aborts, unless the program was asked to stop before. */
  readonly signal: AbortSignal;
  /** Stops following the controller's signal; call it once the operation has ended. */
  dispose(): void;
}

/**
 * The signal of an operation that the controller gave `controller`, in a program whose requested stop is `stopping`.
 * Without `stopping`, `controller` itself.
 */
export function finishOnStop(controller: AbortSignal, stopping: AbortSignal | undefined): OperationSignal {
  if (stopping === undefined) return { signal: controller, dispose: () => undefined };
  const operation = new AbortController();
  // The stop aborts `stopping` first, and the controller's signal from a listener of it: a stop is known here.
  const follow = (): void => {
    if (!stopping.aborted) operation.abort(controller.reason);
  };
  if (controller.aborted) follow();
  else controller.addEventListener('abort', follow, { once: true });
  return { signal: operation.signal, dispose: () => controller.removeEventListener('abort', follow) };
}
