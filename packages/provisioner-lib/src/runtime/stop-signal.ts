/** When a provisioner binary stops: SIGINT or SIGTERM, or an embedding program's AbortSignal. */

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Options of {@link stopSignal}. */
export interface StopSignalOptions {
  /** Aborting it stops the binary as SIGTERM does. Default none. */
  signal?: AbortSignal | undefined;
  /** Whether SIGINT and SIGTERM stop the binary. Default true. */
  handleSignals?: boolean | undefined;
  /** Told about the first SIGINT or SIGTERM, before the stop signal aborts. */
  onSignal?: (name: NodeJS.Signals) => void;
}

/** The stop signal of one run. */
export interface StopSignal {
  /** Aborts on the first SIGINT or SIGTERM, when `signal` aborts, or on {@link StopSignal.abort}. */
  readonly signal: AbortSignal;
  /** Aborts {@link StopSignal.signal}. */
  abort(): void;
  /** Stops listening to the process's signals and to `signal`. Call it once the run ended. */
  dispose(): void;
}

/**
 * A stop signal for one run. The first SIGINT or SIGTERM aborts it; the handlers of both are removed then, so that
 * a second one gets Node's default action and ends the process at once (as a second signal does in
 * controller-runtime's handler), for an operator who does not want to wait for the graceful stop.
 */
export function stopSignal(options: StopSignalOptions = {}): StopSignal {
  const stop = new AbortController();
  const unlisten = (): void => {
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  };
  function onSignal(name: NodeJS.Signals): void {
    unlisten();
    options.onSignal?.(name);
    stop.abort();
  }
  const onAbort = (): void => stop.abort();
  if (options.handleSignals !== false) for (const name of STOP_SIGNALS) process.on(name, onSignal);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted === true) stop.abort();
  return {
    signal: stop.signal,
    abort: () => stop.abort(),
    dispose: () => {
      unlisten();
      options.signal?.removeEventListener('abort', onAbort);
    },
  };
}
