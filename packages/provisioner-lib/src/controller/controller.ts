import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { EventEmitter } from 'eventemitter3';
import { realClock } from '../clock/clock.js';
import { hotPathApi } from '../client/hot-path.js';
import { DEFAULT_EVENT_WRITE_CONCURRENCY, EventRecorder } from '../events/recorder.js';
import { LeaderElector } from '../leaderelection/elector.js';
import { LeaseLock } from '../leaderelection/lease-lock.js';
import { defaultIdentity, defaultNamespace, leaseName } from '../leaderelection/config.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { createControllerMetrics, type ControllerMetrics } from '../metrics/controller-metrics.js';
import { noopMetrics } from '../metrics/sink.js';
import { holdProcessOpen } from '../process/keep-alive.js';
import { keepMemoryReducerWorking } from '../process/memory-reducer.js';
import { newRateLimitingQueue, provisionerRateLimiter, type RateLimitingQueue } from '../workqueue/index.js';
import { describeError, toError } from '../client/api-errors.js';
import { claimClass, claimRefOf, provisionLabels, shouldProvision } from './claims.js';
import { makeProvisionControllerClient, type ProvisionControllerClient } from './client.js';
import type { ProvisionControllerEvents } from './events.js';
import { startInformers, type ControllerInformers } from './informers.js';
import { resolveOptions, type ProvisionControllerOptions, type ResolvedOptions } from './options.js';
import { registerInternals } from './internals.js';
import type { OperationContext } from './context.js';
import type { OperationOutcome } from './operation.js';
import { ProvisioningState } from './provisioner.js';
import { DelayRetryError, SlowSet } from './slow-set.js';
import { runWorker } from './worker.js';
import { BackoffVolumeStore, QueueVolumeStore, type VolumeStore } from './volume-store.js';
import { syncVolume } from './delete-operation.js';
import { provisionClaimOperation } from './provision-operation.js';

/**
 * Events a claim worker records per PV it writes: `Provisioning` before `provision`, `ProvisioningSucceeded` after
 * the save. The recorder keeps this many writes in flight per worker so that it keeps pace with them.
 */
const EVENTS_PER_PV_WRITE = 2;

/**
 * Events the controller's recorder queues before it drops one (client-go's `maxQueuedEvents` is 1,000). The Events
 * of a burst trail its PV writes, so the queue holds the two Events of each of 5,000 claims; a queued Event is a
 * few hundred bytes.
 */
const CONTROLLER_EVENT_QUEUE_SIZE = 10_000;

/** Errors thrown by user code are not always Error objects; the queue and the logs want one. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** A failed pass throws for the worker, which retries it with back-off; the others end the item. */
function throwIfFailed(outcome: OperationOutcome): void {
  if (outcome.result === 'failed') throw asError(outcome.error);
}

/** Rejects {@link ProvisionController.run} when leadership was lost while the caller had not asked to stop. */
export class LeaderElectionLostError extends Error {
  override readonly name = 'LeaderElectionLostError';
  constructor(identity: string) {
    super(`leader election lost: ${identity} is no longer the leader`);
  }
}

/**
 * The external provisioner controller: watches claims and volumes, calls the {@link Provisioner} to provision
 * and delete, saves PVs and reports progress as Events, with the semantics of the Go
 * `sig-storage-lib-external-provisioner` (v13).
 */
export class ProvisionController extends EventEmitter<ProvisionControllerEvents> {
  private readonly options: ResolvedOptions;
  private readonly logger: Logger;
  private readonly knownNames: ReadonlySet<string>;
  private readonly client: ProvisionControllerClient;
  private readonly metrics: ControllerMetrics;
  private readonly recorder: EventRecorder;
  /** Whether the recorder is the controller's own, shut down when `run` ends (an injected one is its owner's). */
  private readonly ownRecorder: boolean;
  private readonly claimQueue: RateLimitingQueue<string>;
  private readonly volumeQueue: RateLimitingQueue<string>;
  private readonly volumeStore: VolumeStore;
  private readonly slowSet: SlowSet;
  /** Claims whose last provision returned InBackground, by UID. */
  private readonly claimsInProgress = new Map<string, V1PersistentVolumeClaim>();
  /** Volumes this run deleted, by UID, until the informer reports them gone (see `OperationContext`). */
  private readonly deletedVolumes = new Set<string>();
  /** What every claim and volume pass works through, made once. */
  private readonly context: OperationContext;
  private informers: ControllerInformers | undefined;
  private running = false;
  private started = false;
  private synced = false;
  private inFlight = 0;
  private elector: LeaderElector | undefined;
  /** Without leader election: whether `run` runs the controller body. */
  private leadingAlone = false;

  constructor(options: ProvisionControllerOptions) {
    super();
    this.options = resolveOptions(
      options,
      { identity: defaultIdentity, namespace: defaultNamespace },
      {
        logger: silentLogger,
        metrics: noopMetrics,
        clock: realClock,
      },
    );
    const o = this.options;
    // Fails now, not at run, for a name that cannot become a Lease name.
    if (o.leaderElection) leaseName(o.provisionerName);
    this.logger = o.logger.child({ provisioner: o.provisionerName });
    this.knownNames = new Set([o.provisionerName, ...o.additionalProvisionerNames]);
    // The writes of every provision (the PV, its two Events) go through the lean client; Events at low priority
    // (held up to 1 s, then one at a time, while PV writes are in flight; last for rate-limit tokens), as
    // client-go's single event writer never competes with the workers.
    this.client = o.client ?? makeProvisionControllerClient(o.kubeConfig);
    this.metrics = createControllerMetrics(o.metrics);
    this.ownRecorder = o.eventRecorder === undefined;
    this.recorder =
      o.eventRecorder ??
      new EventRecorder({
        client: hotPathApi(o.kubeConfig, {}, 'low'),
        source: { component: `${o.provisionerName}_${o.identity}` },
        clock: o.clock,
        logger: this.logger,
        metrics: o.metrics,
        // Once the PV writes are through, the Events that trailed them go this many at a time.
        concurrency: Math.max(DEFAULT_EVENT_WRITE_CONCURRENCY, EVENTS_PER_PV_WRITE * o.threadiness),
        // While PV writes are in flight, Events wait, then go one at a time (see InFlightRequests) and trail the PVs: the queue
        // holds the Events of a burst of several thousand claims instead of dropping them.
        queueSize: CONTROLLER_EVENT_QUEUE_SIZE,
      });
    const limiter = o.rateLimiter ?? provisionerRateLimiter(o.exponentialBackOffOnError, o.clock);
    this.claimQueue = newRateLimitingQueue<string>({
      name: 'claims',
      rateLimiter: limiter,
      clock: o.clock,
      metrics: o.metrics,
    });
    this.volumeQueue = newRateLimitingQueue<string>({
      name: 'volumes',
      rateLimiter: limiter,
      clock: o.clock,
      metrics: o.metrics,
    });
    const emit = (claim: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void =>
      this.claimEvent(claim, type, reason, message);
    this.volumeStore =
      o.createProvisionedPVLimiter === undefined
        ? new BackoffVolumeStore(
            this.client,
            o.provisioner,
            o.createProvisionedPVRetryCount,
            o.createProvisionedPVIntervalMs,
            emit,
            this.logger,
            o.clock,
          )
        : new QueueVolumeStore(this.client, o.createProvisionedPVLimiter, emit, this.logger, o.clock, o.metrics);
    this.slowSet = new SlowSet(o.clock, o.retryIntervalMaxMs);
    this.context = {
      options: o,
      provisioner: o.provisioner,
      knownNames: this.knownNames,
      client: this.client,
      logger: this.logger,
      metrics: this.metrics,
      volumeStore: this.volumeStore,
      slowSet: this.slowSet,
      deletedVolumes: this.deletedVolumes,
      getVolume: (name) => this.informers?.volumeByName(name),
      getClass: (name) => this.informers?.classByName(name),
      reporter: {
        claimEvent: (claim, type, reason, message) => this.claimEvent(claim, type, reason, message),
        volumeEvent: (pv, type, reason, message) => this.volumeEvent(pv, type, reason, message),
        emit: (event, ...args) => this.emit(event, ...args),
      },
    };
    registerInternals(this, {
      options: o,
      claimsInProgress: this.claimsInProgress,
      volumeStore: this.volumeStore,
      syncClaim: (claim, signal) => this.syncClaim(claim, signal),
      syncVolume: (volume, signal) => this.syncVolume(volume, signal),
      enqueueClaim: (claim) => this.enqueueClaim(claim),
    });
  }

  /**
   * Work waiting or under way: queued claims and volumes (not counting delayed retries) plus operations running.
   * A diagnostic, for tests that wait for the controller to settle.
   */
  get pendingWork(): number {
    return this.claimQueue.len() + this.volumeQueue.len() + this.inFlight;
  }

  /** Whether the informers have listed and the workers run (false on a waiting candidate). */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Whether this instance leads now. With leader election: from acquiring the Lease until leadership ends (false on
   * a standby, and once a requested stop or a failed renewal ended it). Without: while `run` runs.
   */
  isLeader(): boolean {
    return this.options.leaderElection ? (this.elector?.isLeader() ?? false) : this.leadingAlone;
  }

  /**
   * For `/healthz/leader-election`: an error when this instance believes it leads but has not renewed the Lease
   * for the lease duration plus `toleranceMs` (default 20 s, as the CSI sidecars); undefined when healthy.
   */
  leaderHealth(toleranceMs = 20_000): Error | undefined {
    return this.elector?.check(toleranceMs);
  }

  /** Whether `run` has started the controller body (informers and workers). */
  hasRun(): boolean {
    return this.running;
  }

  /**
   * Runs until `signal` aborts: with leader election, only while holding the Lease. Resolves after a requested
   * stop once in-flight operations have finished; rejects with {@link LeaderElectionLostError} when leadership is
   * lost otherwise (the Go library exits the process then; here the host decides). While it is pending it keeps the
   * process alive, also when nothing else would (a standby between attempts, back-offs while the API server is
   * unreachable), so a program can be just `await controller.run(signal)`; once it settled it holds nothing.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started)
      throw new Error('ProvisionController.run can be called only once; create a new controller to run again');
    this.started = true;
    const release = holdProcessOpen();
    // Without it, Node.js 24 keeps the memory of a burst of provisions for as long as the controller then idles.
    const releaseReducer = keepMemoryReducerWorking();
    try {
      await this.runHeld(signal);
    } finally {
      releaseReducer();
      release();
    }
  }

  /** {@link ProvisionController.run} while it holds the process open. */
  private async runHeld(signal: AbortSignal): Promise<void> {
    const o = this.options;
    // The background PV store lives as long as this run, whichever way it ends.
    const storeAbort = new AbortController();
    const stopStore = (): void => storeAbort.abort();
    signal.addEventListener('abort', stopStore, { once: true });
    const storeRun = this.volumeStore.run(storeAbort.signal, 4);
    try {
      if (!o.leaderElection) {
        this.leadingAlone = true;
        this.emit('startedLeading');
        try {
          await this.runBody(signal);
        } finally {
          this.leadingAlone = false;
        }
        return;
      }
      let lost = false;
      // The elector does not wait for onStartedLeading; keep its promise to wait for the workers on the way out.
      let body: Promise<void> | undefined;
      const lock = new LeaseLock({
        kubeConfig: o.kubeConfig,
        namespace: o.leaderElectionNamespace,
        name: leaseName(o.provisionerName),
        identity: o.identity,
        ...(o.leaderElectionLabels === undefined ? {} : { labels: o.leaderElectionLabels }),
        recordEvent: (reason: string, message: string) => this.leaseEvent(reason, message),
      });
      const elector = new LeaderElector({
        lock,
        leaseDurationMs: o.leaseDurationMs,
        renewDeadlineMs: o.renewDeadlineMs,
        retryPeriodMs: o.retryPeriodMs,
        // The elector releases only after onStartedLeading settled, i.e. after the workers finished their items.
        releaseOnCancel: o.releaseOnCancel,
        clock: o.clock,
        logger: this.logger,
        metrics: o.metrics,
        name: leaseName(o.provisionerName),
        onStartedLeading: async (leading: AbortSignal) => {
          this.emit('startedLeading');
          body = this.runBody(leading);
          await body;
        },
        onStoppedLeading: () => {
          this.emit('stoppedLeading');
          if (!signal.aborted) lost = true;
        },
        onNewLeader: (identity: string) => this.emit('newLeader', identity),
      });
      this.elector = elector;
      try {
        await elector.run(signal);
        await body;
      } finally {
        await lock.close();
      }
      if (lost) throw new LeaderElectionLostError(o.identity);
    } finally {
      signal.removeEventListener('abort', stopStore);
      storeAbort.abort();
      await storeRun;
      // Queued events get one more try each; waiting out the recorder's retry sleeps (10 s, 12 tries per event)
      // would keep a stopping controller alive for minutes while the API server fails requests. An injected
      // recorder is left to its owner.
      if (this.ownRecorder) {
        this.recorder.shutDown();
        await this.recorder.flush();
      }
    }
  }

  /** Informers, then workers; returns when `signal` aborts and every worker has finished its item. */
  private async runBody(signal: AbortSignal): Promise<void> {
    const o = this.options;
    this.running = true;
    // The informers list afresh: no copy older than a deletion of an earlier run can come from them.
    this.deletedVolumes.clear();
    const injected = { claims: o.claimsInformer, volumes: o.volumesInformer, classes: o.classesInformer };
    const informers = startInformers(
      o.kubeConfig,
      signal,
      {
        resyncPeriodMs: o.resyncPeriodMs,
        clock: o.clock,
        logger: this.logger,
        onClaim: (claim) => {
          const uid = claim.metadata?.uid;
          if (uid !== undefined) this.claimQueue.add(uid);
        },
        onVolume: (pv) => {
          const name = pv.metadata?.name;
          if (name !== undefined) this.volumeQueue.add(name);
        },
        onVolumeDeleted: (pv) => {
          const name = pv.metadata?.name;
          if (name !== undefined) this.volumeQueue.forget(name);
          const uid = pv.metadata?.uid;
          if (uid !== undefined) this.deletedVolumes.delete(uid);
        },
      },
      injected,
    );
    this.informers = informers;
    const stop = (): void => {
      this.claimQueue.shutDown();
      this.volumeQueue.shutDown();
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await informers.waitForSync(signal);
    } catch {
      stop();
      await informers.done;
      return;
    }
    this.synced = true;
    this.logger.info({ threadiness: o.threadiness }, 'Started provisioner controller');
    this.emit('started');
    const workers: Promise<void>[] = [];
    for (let i = 0; i < o.threadiness; i++) {
      workers.push(this.claimWorker(signal), this.volumeWorker(signal));
    }
    await Promise.all(workers);
    this.synced = false;
    await informers.done;
  }

  /** Enqueues a claim by UID, as an informer event would (the Go tests' `enqueueClaim`). */
  private enqueueClaim(claim: V1PersistentVolumeClaim): void {
    const uid = claim.metadata?.uid;
    if (uid !== undefined) this.claimQueue.add(uid);
  }

  private claimWorker(signal: AbortSignal): Promise<void> {
    return runWorker(
      {
        queue: this.claimQueue,
        sync: (key, s) => this.syncClaimHandler(key, s),
        threshold: this.options.failedProvisionThreshold,
        timeoutMs: this.options.provisionTimeoutMs,
        clock: this.options.clock,
        onSuccess: (key) => this.claimsInProgress.delete(key),
        onError: (key, err) => this.logger.error({ claim: key, err: describeError(err) }, 'Error syncing claim'),
        onGiveUp: (key, err) => {
          // A volume still being provisioned in the background may leak (as in Go).
          this.claimsInProgress.delete(key);
          this.logger.error(
            { claim: key, threshold: this.options.failedProvisionThreshold },
            'Exceeded the failed provision threshold, giving up on the claim',
          );
          this.emit('gaveUp', 'claim', key, toError(err));
        },
        busy: (d) => (this.inFlight += d),
      },
      signal,
    );
  }

  private volumeWorker(signal: AbortSignal): Promise<void> {
    return runWorker(
      {
        queue: this.volumeQueue,
        sync: (key, s) => this.syncVolumeHandler(key, s),
        threshold: this.options.failedDeleteThreshold,
        timeoutMs: this.options.deletionTimeoutMs,
        clock: this.options.clock,
        onSuccess: () => undefined,
        onError: (key, err) => this.logger.error({ volume: key, err: describeError(err) }, 'Error syncing volume'),
        onGiveUp: (key, err) => {
          this.logger.error(
            { volume: key, threshold: this.options.failedDeleteThreshold },
            'Exceeded the failed delete threshold, giving up on the volume',
          );
          this.emit('gaveUp', 'volume', key, toError(err));
        },
        busy: (d) => (this.inFlight += d),
      },
      signal,
    );
  }

  private async syncClaimHandler(uid: string, signal: AbortSignal): Promise<void> {
    const claim = this.informers?.claimByUid(uid) ?? this.claimsInProgress.get(uid);
    if (claim === undefined) {
      this.logger.debug({ claim: uid }, 'Claim in work queue no longer exists');
      return;
    }
    await this.syncClaim(claim, signal);
  }

  /** One pass over a claim: the slow-retry gate, shouldProvision, provisioning and the state bookkeeping. */
  private async syncClaim(claim: V1PersistentVolumeClaim, signal: AbortSignal): Promise<void> {
    const uid = claim.metadata?.uid ?? '';
    const cls = this.informers?.classByName(claimClass(claim));
    if (this.slowSet.remaining(uid, cls?.metadata?.uid) > 0) {
      throw new DelayRetryError(
        `skipping volume provisioning for pvc ${uid}, because provisioning previously failed with infeasible error`,
      );
    }
    const labels = provisionLabels(claim);
    let should: boolean;
    try {
      should = await shouldProvision(this.context, claim, signal);
    } catch (err) {
      this.metrics.provisionFailed(labels);
      throw err;
    }
    if (!should) return;
    const started = this.options.clock.now();
    const outcome = await provisionClaimOperation(this.context, claim, signal);
    // As in Go, a pass that stopped without provisioning counts as a failed provision.
    if (outcome.result === 'succeeded')
      this.metrics.provisionSucceeded(labels, (this.options.clock.now() - started) / 1000);
    else this.metrics.provisionFailed(labels);
    if (outcome.result !== 'failed' || outcome.state === ProvisioningState.Finished) this.claimsInProgress.delete(uid);
    else if (outcome.state === ProvisioningState.InBackground) this.claimsInProgress.set(uid, claim);
    throwIfFailed(outcome);
  }

  private async syncVolumeHandler(name: string, signal: AbortSignal): Promise<void> {
    const pv = this.informers?.volumeByName(name);
    if (pv === undefined) return;
    await this.syncVolume(pv, signal);
  }

  /** One pass over a volume: ownership, the protection finalizer, and deletion when it is due. */
  private async syncVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const outcome = await syncVolume(this.context, volume, signal);
    throwIfFailed(outcome);
  }

  private claimEvent(
    claim: V1PersistentVolumeClaim,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): void {
    const ref = claimRefOf(claim);
    this.recorder.event({ ...ref, kind: 'PersistentVolumeClaim', name: ref.name ?? '' }, type, reason, message);
  }

  private volumeEvent(pv: V1PersistentVolume, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(
      {
        kind: 'PersistentVolume',
        apiVersion: 'v1',
        name: pv.metadata?.name ?? '',
        ...(pv.metadata?.uid ? { uid: pv.metadata.uid } : {}),
      },
      type,
      reason,
      message,
    );
  }

  private leaseEvent(reason: string, message: string): void {
    this.recorder.event(
      {
        kind: 'Lease',
        apiVersion: 'coordination.k8s.io/v1',
        namespace: this.options.leaderElectionNamespace,
        name: leaseName(this.options.provisionerName),
      },
      'Normal',
      reason,
      message,
    );
  }
}
