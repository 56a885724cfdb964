// By path: client-node's entry point loads every generated API and model.
import { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
import { realClock, sleep, type Clock } from '../clock/clock.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { createLeaderMetrics, type LeaderMetrics } from '../metrics/leader-metrics.js';
import { noopMetrics, type MetricsSink } from '../metrics/sink.js';
import { holdProcessOpen } from '../process/keep-alive.js';
import { JITTER_FACTOR, LeaderElectionConfigError, resolveTimings, type LeaderElectionTimings } from './config.js';
import { isConflict } from '../client/api-errors.js';
import type { LeaderElectionRecord, ObservedLock, ResourceLock } from './lease-lock.js';

/**
 * Options of {@link LeaderElector}. Timings default to 15 s / 10 s / 2 s (see `DEFAULT_TIMINGS`) and are validated
 * as client-go does. The record's `leaseDurationSeconds` is the lease duration rounded up to whole seconds, at least
 * 1 (the API server's minimum).
 */
export interface LeaderElectorOptions extends Partial<LeaderElectionTimings> {
  /** The lock to compete for, e.g. a `LeaseLock`; its identity is this candidate's. */
  lock: ResourceLock;
  /**
   * Called (asynchronously, not awaited) once leadership is acquired. `signal` is aborted when leadership ends: with
   * a {@link LeadershipLostError} when a renewal failed, with the run signal's reason when `run` was cancelled.
   * Stop all guarded work when it aborts. A rejection is logged. With `releaseOnCancel`, return a promise that
   * settles once the guarded work has stopped: the lease is released only then.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /**
   * Called every time `run` returns, also when this candidate never led (do not assume it follows
   * `onStartedLeading`). The Go provisioner library exits the process here. A throw is logged.
   */
  onStoppedLeading: () => void;
  /**
   * Called (asynchronously) whenever the observed holder differs from the one last reported, including the first
   * observation; `''` when the lease was released. Default none.
   */
  onNewLeader?: ((identity: string) => void) | undefined;
  /**
   * client-go's `ReleaseOnCancel`: give the lease up when leadership ends (empty holder, `leaseDurationSeconds` 1,
   * fresh times, transitions kept), so another candidate can take over at once instead of after the lease duration.
   * The release waits until the promise returned by `onStartedLeading` has settled, so guarded work that stops when
   * its signal aborts has stopped first (client-go leaves that to the caller: it releases as soon as the context is
   * cancelled). Default `false` (as client-go and the Go provisioner library).
   */
  releaseOnCancel?: boolean | undefined;
  /** Name for logs, errors and the metric's `name` label. Default `lock.describe()` (`namespace/name`). */
  name?: string | undefined;
  /** Time source for expiry, deadlines and retries. Default `realClock`. */
  clock?: Clock | undefined;
  /** Default `silentLogger`. */
  logger?: Logger | undefined;
  /** Where the `leader_election_master_status` gauge goes. Default `noopMetrics`. */
  metrics?: MetricsSink | undefined;
  /** Random source in [0, 1) for retry jitter. Default `Math.random`. */
  random?: (() => number) | undefined;
}

/** The reason the leading signal is aborted with when a renewal did not succeed within the renew deadline. */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
}

/** The reason a Lease request is aborted with when its deadline passes (as against the elector's stop). */
class LeaseRequestTimeoutError extends Error {
  override readonly name = 'LeaseRequestTimeoutError';
}

const NO_RECORD: LeaderElectionRecord = Object.freeze({
  holderIdentity: '',
  leaseDurationSeconds: 0,
  leaseTransitions: 0,
});

/**
 * A leader election candidate with client-go's semantics (`tools/leaderelection`).
 *
 * Timestamps inside the record are never compared with the local clock: a candidate notes, on its own clock, when it
 * last saw the record change, and may take the lease from another holder only after the lease duration has passed
 * since then. Any clock skew between nodes is therefore tolerated (but not skew *rate*: tolerance is about
 * leaseDuration / renewDeadline).
 *
 * Expiry is judged, as client-go does, with the `leaseDurationSeconds` the holder wrote into the record, not this
 * candidate's own `leaseDurationMs`: during a rolling update that changes the duration, the new replicas wait as long
 * as the old holder promised, no more and no less. Since the record has whole seconds, a lease of less than a second
 * (tests only) lasts a second for the other candidates.
 *
 * Other differences from client-go: `isLeader()` is false once leadership ended (client-go answers from the last
 * observed record); each renew round's deadline is `last success + retryPeriod + renewDeadline` on the clock, so an
 * event loop stalled past it ends leadership without another attempt, and a renewal that completes after the
 * deadline counts as failed; the leading signal is aborted as soon as leadership is lost, before a release; the
 * raw record keeps the times as received (client-go's has whole seconds), so sub-second renewals count as changes;
 * the first renewal comes one retry period after acquiring (client-go renews again at once).
 */
export class LeaderElector {
  /** The resolved timings. */
  readonly timings: Readonly<LeaderElectionTimings>;
  private readonly lock: ResourceLock;
  private readonly options: LeaderElectorOptions;
  private readonly name: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly gauge: LeaderMetrics;
  private readonly random: () => number;
  private readonly leaseDurationSeconds: number;

  private observedRecord: LeaderElectionRecord = NO_RECORD;
  private observedRaw: string | undefined;
  /** Clock time at which the observed record was last seen to change (or written by us). */
  private observedTime = 0;
  private reportedLeader = '';
  private leading = false;
  private running = false;

  /**
   * @param options - see {@link LeaderElectorOptions}.
   * @throws LeaderElectionConfigError for invalid timings, an empty identity or missing callbacks.
   */
  constructor(options: LeaderElectorOptions) {
    const { lock } = options;
    this.timings = Object.freeze(resolveTimings(options, lock.identity));
    if (typeof options.onStartedLeading !== 'function')
      throw new LeaderElectionConfigError('onStartedLeading callback is required');
    if (typeof options.onStoppedLeading !== 'function')
      throw new LeaderElectionConfigError('onStoppedLeading callback is required');
    this.lock = lock;
    this.options = options;
    this.name = options.name ?? lock.describe();
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ lock: lock.describe(), identity: lock.identity });
    this.random = options.random ?? Math.random;
    // Whole seconds as Go writes them; at least 1, which the API server requires (sub-second leases are for tests).
    this.leaseDurationSeconds = Math.max(1, Math.ceil(this.timings.leaseDurationMs / 1000));
    this.gauge = createLeaderMetrics(options.metrics ?? noopMetrics);
    this.gauge.off(this.name);
  }

  /** This candidate's identity (the lock's). */
  get identity(): string {
    return this.lock.identity;
  }

  /** Whether this candidate leads now: from a successful acquire until leadership ends. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder of the last observed record, `''` if none was observed (or the lease was released). */
  getLeader(): string {
    return this.observedRecord.holderIdentity;
  }

  /**
   * Health check (client-go's `Check`, used by `/healthz/leader-election`): an error when the last observed record
   * names this candidate but has not been renewed for longer than the lease duration plus `maxTolerableExpiredMs`,
   * i.e. this process should have stopped leading (and exited) but did not. `undefined` (healthy) otherwise,
   * including for candidates that do not lead.
   *
   * @param maxTolerableExpiredMs - tolerance past the lease duration; the CSI sidecars use 20 s
   *   (`DEFAULT_HEALTH_TOLERANCE_MS`).
   */
  check(maxTolerableExpiredMs: number): Error | undefined {
    if (!this.observedIsUs()) return undefined;
    if (this.clock.now() - this.observedTime > this.timings.leaseDurationMs + maxTolerableExpiredMs) {
      return new Error(`failed election to renew leadership on lease ${this.name}`);
    }
    return undefined;
  }

  /**
   * Runs the election until `signal` aborts or leadership is lost: acquires (retrying every retry period with
   * jitter), calls `onStartedLeading`, renews every retry period, and gives up when a renewal does not succeed within
   * the renew deadline. Then, with `releaseOnCancel`, waits for `onStartedLeading`'s promise and releases the lease;
   * and always calls `onStoppedLeading` before resolving. Never rejects for API errors (they are logged and
   * retried). Keeps the process alive while pending (a candidate between attempts has nothing else holding it), and
   * nothing once settled.
   *
   * @throws Error (as a rejection) when called while a previous `run` has not finished.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`LeaderElector ${this.name}: run is already running`);
    this.running = true;
    const release = holdProcessOpen();
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const forward = (): void => leading.abort(signal.reason);
      signal.addEventListener('abort', forward, { once: true });
      let work: Promise<void> = Promise.resolve();
      try {
        if (!signal.aborted) work = this.startLeading(leading.signal);
        const lost = await this.renew(signal);
        if (lost !== undefined) leading.abort(lost);
      } finally {
        signal.removeEventListener('abort', forward);
        this.leading = false;
        this.gauge.off(this.name);
        leading.abort(signal.aborted ? signal.reason : new LeadershipLostError(`leader election ${this.name} ended`));
      }
      if (this.options.releaseOnCancel === true) {
        // Released while guarded work still ran, the lease would let another candidate start the same work at once.
        await work;
        await this.release();
      }
      this.lock.recordEvent('stopped leading');
    } finally {
      this.running = false;
      try {
        this.options.onStoppedLeading();
      } catch (err) {
        this.logger.error({ err }, 'onStoppedLeading failed');
      }
      release();
    }
  }

  /**
   * One attempt to acquire or renew, exactly as client-go's `tryAcquireOrRenew`: true when this candidate holds the
   * lease afterwards. Used by `run`; public for tests and custom loops. Never rejects; must not run concurrently
   * with itself or with `run`.
   *
   * 1. Fast path: while leading and the lease is valid by our own observation, update from the cached object.
   * 2. Otherwise GET; create the lock when absent (transitions 0).
   * 3. If the raw record differs from the last one observed, store it and stamp the local observation time.
   * 4. Another holder is left alone until the duration in its record has passed since that observation.
   * 5. Write our record: keep acquire time and transitions when we already hold it, else transitions + 1. A
   *    conflict means someone else wrote first: not acquired.
   */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const stamp = new V1MicroTime();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.lock.identity,
      leaseDurationSeconds: this.leaseDurationSeconds,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };

    if (this.observedIsUs() && this.isLeaseValid(now)) {
      const old = this.observedRecord;
      const record = { ...desired, acquireTime: old.acquireTime, leaseTransitions: old.leaseTransitions };
      try {
        await this.lock.update(record, signal);
        this.setObserved(record);
        return true;
      } catch (err) {
        this.logger.warn({ err }, 'Failed to update lease optimistically, falling back to slow path');
      }
    }

    let current: ObservedLock | undefined;
    try {
      current = await this.lock.get(signal);
    } catch (err) {
      this.logRequestError(err, signal, 'Error retrieving lease');
      return false;
    }
    if (current === undefined) {
      try {
        await this.lock.create(desired, signal);
      } catch (err) {
        this.logRequestError(err, signal, 'Error initially creating lease');
        return false;
      }
      this.setObserved(desired);
      return true;
    }

    if (current.raw !== this.observedRaw) {
      this.setObserved(current.record);
      this.observedRaw = current.raw;
    }
    const old = current.record;
    if (old.holderIdentity !== '' && this.isLeaseValid(now) && !this.observedIsUs()) {
      this.logger.debug({ holder: old.holderIdentity }, 'Lease is held by another candidate and has not yet expired');
      return false;
    }

    const record = this.observedIsUs()
      ? { ...desired, acquireTime: old.acquireTime, leaseTransitions: old.leaseTransitions }
      : { ...desired, leaseTransitions: old.leaseTransitions + 1 };
    try {
      await this.lock.update(record, signal);
    } catch (err) {
      if (isConflict(err)) this.logger.debug({ err }, 'Lease was changed by another writer');
      else this.logRequestError(err, signal, 'Failed to update lease');
      return false;
    }
    this.setObserved(record);
    return true;
  }

  /**
   * Logs a failed Lease request: an error, unless the elector's own stop aborted it (a request cut short by `run`'s
   * signal is the stop working, not a failure; one cut short by the renew deadline is still an error).
   */
  private logRequestError(err: unknown, signal: AbortSignal | undefined, message: string): void {
    if (signal?.aborted === true && !(signal.reason instanceof LeaseRequestTimeoutError)) {
      this.logger.debug({ err }, `${message}: the elector is stopping`);
    } else {
      this.logger.error({ err }, message);
    }
  }

  private observedIsUs(): boolean {
    return this.observedRecord.holderIdentity === this.lock.identity;
  }

  /**
   * client-go's `isLeaseValid`: whether the observed record is still valid, judged with the duration written in it
   * (the holder's), not this candidate's own: a candidate configured with a longer (or shorter) lease neither waits
   * longer nor takes over earlier than the holder promised. A record without a duration is expired at once.
   */
  private isLeaseValid(now: number): boolean {
    return this.observedTime + this.observedRecord.leaseDurationSeconds * 1000 > now;
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observedRecord = record;
    this.observedTime = this.clock.now();
  }

  private maybeReportTransition(): void {
    const holder = this.observedRecord.holderIdentity;
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const onNewLeader = this.options.onNewLeader;
    if (onNewLeader === undefined) return;
    queueMicrotask(() => {
      try {
        onNewLeader(holder);
      } catch (err) {
        this.logger.error({ err }, 'onNewLeader failed');
      }
    });
  }

  /** Calls `onStartedLeading` on a later turn; the promise settles (never rejects) when the callback's does. */
  private startLeading(signal: AbortSignal): Promise<void> {
    const { onStartedLeading } = this.options;
    return Promise.resolve()
      .then(() => onStartedLeading(signal))
      .catch((err: unknown) => {
        this.logger.error({ err }, 'onStartedLeading failed');
      });
  }

  /** Runs `fn` with a signal aborted by `parent` or after `ms` on the clock. */
  private async withDeadline<T>(
    ms: number,
    parent: AbortSignal | undefined,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(parent?.reason);
    parent?.addEventListener('abort', onAbort, { once: true });
    if (parent?.aborted === true) onAbort();
    const timer = this.clock.setTimeout(() => {
      controller.abort(new LeaseRequestTimeoutError(`lease request timed out after ${ms} ms`));
    }, ms);
    try {
      return await fn(controller.signal);
    } finally {
      this.clock.clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    }
  }

  /** Tries every retry period (with jitter) until acquired (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    const { retryPeriodMs, renewDeadlineMs } = this.timings;
    this.logger.info({}, 'Attempting to acquire leader lease');
    while (!signal.aborted) {
      const ok = await this.withDeadline(renewDeadlineMs, signal, (s) => this.tryAcquireOrRenew(s));
      this.maybeReportTransition();
      if (ok) {
        this.leading = true;
        this.lock.recordEvent('became leader');
        this.gauge.on(this.name);
        this.logger.info({}, 'Successfully acquired lease');
        return true;
      }
      this.logger.debug({}, 'Failed to acquire lease');
      const jittered = retryPeriodMs * (1 + this.random() * JITTER_FACTOR);
      try {
        await sleep(this.clock, jittered, signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  /**
   * Renews every retry period until `signal` aborts (returns `undefined`) or a renewal does not succeed within the
   * renew deadline (returns the error to abort the leading signal with). The deadline of each round is
   * `last success + retryPeriod + renewDeadline` on the clock, so a stalled event loop counts against it.
   */
  private async renew(signal: AbortSignal): Promise<LeadershipLostError | undefined> {
    const { retryPeriodMs, renewDeadlineMs } = this.timings;
    let renewedAt = this.clock.now();
    for (;;) {
      try {
        await sleep(this.clock, retryPeriodMs, signal);
      } catch {
        return undefined;
      }
      const deadline = renewedAt + retryPeriodMs + renewDeadlineMs;
      let renewed = false;
      for (;;) {
        const remaining = deadline - this.clock.now();
        if (remaining <= 0) break;
        const ok = await this.withDeadline(remaining, signal, (s) => this.tryAcquireOrRenew(s));
        this.maybeReportTransition();
        if (signal.aborted) return undefined;
        if (ok) {
          renewed = this.clock.now() <= deadline;
          break;
        }
        const wait = Math.min(retryPeriodMs, deadline - this.clock.now());
        if (wait <= 0) break;
        try {
          await sleep(this.clock, wait, signal);
        } catch {
          return undefined;
        }
      }
      if (!renewed) {
        const elapsed = this.clock.now() - renewedAt;
        this.logger.info({ elapsedMs: Math.round(elapsed) }, 'Failed to renew lease');
        this.gauge.off(this.name);
        return new LeadershipLostError(
          `leader election ${this.name}: lease not renewed within ${renewDeadlineMs} ms (last renewal ${Math.round(elapsed)} ms ago)`,
        );
      }
      renewedAt = this.clock.now();
      this.logger.debug({}, 'Successfully renewed lease');
    }
  }

  /**
   * Gives the lease up if the last observed record is ours: empty holder, `leaseDurationSeconds` 1, fresh times,
   * transitions kept. On a conflict (an in-flight renewal may have landed) it re-reads and retries while the lease is
   * still ours; other errors are retried every retry period. Bounded by the renew deadline.
   */
  private async release(): Promise<boolean> {
    if (!this.observedIsUs()) return true;
    const { renewDeadlineMs, retryPeriodMs } = this.timings;
    const deadline = this.clock.now() + renewDeadlineMs;
    for (;;) {
      const remaining = deadline - this.clock.now();
      if (remaining <= 0) break;
      const stamp = new V1MicroTime();
      const record: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: this.observedRecord.leaseTransitions,
      };
      try {
        await this.withDeadline(remaining, undefined, (s) => this.lock.update(record, s));
        this.setObserved(record);
        this.logger.info({}, 'Released lease');
        return true;
      } catch (err) {
        if (!isConflict(err)) {
          this.logger.warn({ err }, 'Failed to release lease, retrying');
          const wait = Math.min(retryPeriodMs, deadline - this.clock.now());
          if (wait > 0) await sleep(this.clock, wait);
          continue;
        }
      }
      try {
        const current = await this.withDeadline(deadline - this.clock.now(), undefined, (s) => this.lock.get(s));
        if (current === undefined) return true;
        this.setObserved(current.record);
        this.observedRaw = current.raw;
        if (!this.observedIsUs()) return true;
      } catch (err) {
        this.logger.warn({ err }, 'Failed to read lease while releasing it');
        const wait = Math.min(retryPeriodMs, deadline - this.clock.now());
        if (wait > 0) await sleep(this.clock, wait);
      }
    }
    this.logger.error({}, 'Failed to release lease within the renew deadline');
    return false;
  }
}
