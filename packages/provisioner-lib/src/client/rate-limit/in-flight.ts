import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestPriority } from './token-bucket.js';

/**
 * The requests of one KubeConfig in flight, by priority: a `low` request (an Event write) starts while no `normal`
 * request is in flight, or while no other `low` one is. So while the workers write PVs, Events go one at a time,
 * as client-go's single event-writing goroutine sends them, and the server spends its time on the writes the Events
 * are about; once the PV writes are through, the Events that trail go at the recorder's full concurrency.
 *
 * The client-side rate limit (the token bucket) orders requests that wait for a token; this orders the ones that
 * would not wait at all, which is every request when there is no client-side limit (the library's default).
 */
export class InFlightRequests {
  #normal = 0;
  #low = 0;
  /** `low` requests waiting to start, first come, first served. */
  readonly #waiting: (() => void)[] = [];

  /** Requests in flight now, by priority. */
  get inFlight(): { normal: number; low: number } {
    return { normal: this.#normal, low: this.#low };
  }

  /**
   * Waits until a request of `priority` may start and counts it in flight; resolves with the function that counts
   * it out (call it once the response is read or the request failed). `normal` requests never wait. Rejects with
   * `signal.reason` when `signal` aborts while a `low` request waits; it is then not counted.
   */
  async start(priority: RequestPriority = 'normal', signal?: AbortSignal): Promise<() => void> {
    if (priority === 'normal') {
      this.#normal += 1;
      return this.#once(() => {
        this.#normal -= 1;
        if (this.#normal === 0) this.#wake();
      });
    }
    while (this.#normal > 0 && this.#low > 0) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          const i = this.#waiting.indexOf(wake);
          if (i !== -1) this.#waiting.splice(i, 1);
          reject(signal?.reason as Error);
        };
        const wake = (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.#waiting.push(wake);
      });
    }
    this.#low += 1;
    return this.#once(() => {
      this.#low -= 1;
      // With `normal` requests in flight only one `low` request may start: wake the oldest, not all of them.
      if (this.#normal > 0) this.#waiting.shift()?.();
      else this.#wake();
    });
  }

  /** Lets the waiting `low` requests check again (each one that may start does; the rest wait on). */
  #wake(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }

  #once(fn: () => void): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      fn();
    };
  }
}

const perConfig = new WeakMap<KubeConfig, InFlightRequests>();

/** The {@link InFlightRequests} of `kc`: one per KubeConfig, shared by every lean client made from it. */
export function inFlightRequests(kc: KubeConfig): InFlightRequests {
  let requests = perConfig.get(kc);
  if (requests === undefined) {
    requests = new InFlightRequests();
    perConfig.set(kc, requests);
  }
  return requests;
}
