import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1PersistentVolume, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { EventEmitter } from 'eventemitter3';
import { realClock } from '../clock/clock.js';
import { makeApiClient } from '../client/agent.js';
import { EventRecorder } from '../events/recorder.js';
import { LeaderElector } from '../leaderelection/elector.js';
import { LeaseLock } from '../leaderelection/lease-lock.js';
import { defaultIdentity, defaultNamespace, leaseName } from '../leaderelection/config.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { createControllerMetrics, type ControllerMetrics } from '../metrics/controller-metrics.js';
import { noopMetrics } from '../metrics/sink.js';
import { newRateLimitingQueue, provisionerRateLimiter, type RateLimitingQueue } from '../workqueue/index.js';
import { describeError, isNotFound } from '../client/api-errors.js';
import { ANN_PROVISIONED_BY, ANN_SELECTED_NODE, FINALIZER_PV } from './annotations.js';
import { canProvision, claimClass, claimKey, claimRefOf, provisionLabels, selectedNodeName, shouldProvision } from './claims.js';
import type { ProvisionControllerEvents } from './events.js';
import { startInformers, type ControllerInformers } from './informers.js';
import { resolveOptions, type ProvisionControllerOptions, type ResolvedOptions } from './options.js';
import { IgnoredError, isInfeasible, ProvisioningState, stateOf } from './provisioner.js';
import { DelayRetryError, SlowSet } from './slow-set.js';
import { BackoffVolumeStore, QueueVolumeStore, type VolumeStore } from './volume-store.js';
import { desiredFinalizers, isProvisionerForVolume, removeFinalizer, shouldDelete } from './volumes.js';

/** Internal: ends a claim operation without an error to requeue (PV exists, ignored, block unsupported, ...). */
const STOP = Symbol('stop provisioning');

interface Outcome {
  state: ProvisioningState;
  error?: unknown;
}

/** Errors thrown by user code are not always Error objects; the queue and the logs want one. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
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
  readonly options: ResolvedOptions;
  private readonly logger: Logger;
  private readonly knownNames: ReadonlySet<string>;
  private readonly core: CoreV1Api;
  private readonly metrics: ControllerMetrics;
  private readonly recorder: EventRecorder;
  private readonly claimQueue: RateLimitingQueue<string>;
  private readonly volumeQueue: RateLimitingQueue<string>;
  private readonly volumeStore: VolumeStore;
  private readonly slowSet: SlowSet;
  /** Claims whose last provision returned InBackground, by UID. */
  readonly claimsInProgress = new Map<string, V1PersistentVolumeClaim>();
  private informers: ControllerInformers | undefined;
  private running = false;
  private synced = false;
  private inFlight = 0;
  private elector: LeaderElector | undefined;

  constructor(options: ProvisionControllerOptions) {
    super();
    this.options = resolveOptions(options, { identity: defaultIdentity, namespace: defaultNamespace }, {
      logger: silentLogger,
      metrics: noopMetrics,
      clock: realClock,
    });
    const o = this.options;
    // Fails now, not at run, for a name that cannot become a Lease name.
    if (o.leaderElection) leaseName(o.provisionerName);
    this.logger = o.logger.child({ provisioner: o.provisionerName });
    this.knownNames = new Set([o.provisionerName, ...o.additionalProvisionerNames]);
    this.core = makeApiClient(o.kubeConfig, CoreV1Api);
    this.metrics = createControllerMetrics(o.metrics);
    this.recorder = new EventRecorder({
      client: this.core,
      source: { component: `${o.provisionerName}_${o.identity}` },
      clock: o.clock,
      logger: this.logger,
    });
    const limiter = o.rateLimiter ?? provisionerRateLimiter(o.exponentialBackOffOnError, o.clock);
    this.claimQueue = newRateLimitingQueue<string>({ name: 'claims', rateLimiter: limiter, clock: o.clock, metrics: o.metrics });
    this.volumeQueue = newRateLimitingQueue<string>({ name: 'volumes', rateLimiter: limiter, clock: o.clock, metrics: o.metrics });
    const emit = (claim: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void =>
      this.claimEvent(claim, type, reason, message);
    this.volumeStore =
      o.createProvisionedPVLimiter === undefined
        ? new BackoffVolumeStore(this.core, o.provisioner, o.createProvisionedPVRetryCount, o.createProvisionedPVIntervalMs, emit, this.logger)
        : new QueueVolumeStore(this.core, o.createProvisionedPVLimiter, emit, this.logger, o.clock, o.metrics);
    this.slowSet = new SlowSet(o.clock, o.retryIntervalMaxMs);
  }

  /**
   * Work waiting or under way: queued claims and volumes (not counting delayed retries) plus operations running.
   * A diagnostic, for tests that wait for the controller to settle.
   */
  get pendingWork(): number {
    return this.claimQueue.len() + this.volumeQueue.len() + this.inFlight;
  }

  /** For `/readyz`: whether the informers have listed and the workers run (false on a waiting candidate). */
  hasSynced(): boolean {
    return this.synced;
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

  /** The volume store, for inspection in tests (the queue store exposes `pending()`). */
  get store(): VolumeStore {
    return this.volumeStore;
  }

  /**
   * Runs until `signal` aborts: with leader election, only while holding the Lease. Resolves after a requested
   * stop once in-flight operations have finished; rejects with {@link LeaderElectionLostError} when leadership is
   * lost otherwise (the Go library exits the process then; here the host decides).
   */
  async run(signal: AbortSignal): Promise<void> {
    const o = this.options;
    // The background PV store lives as long as this run, whichever way it ends.
    const storeAbort = new AbortController();
    const stopStore = (): void => storeAbort.abort();
    signal.addEventListener('abort', stopStore, { once: true });
    const storeRun = this.volumeStore.run(storeAbort.signal, 4);
    try {
      if (!o.leaderElection) {
        this.emit('startedLeading');
        await this.runBody(signal);
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
        recordEvent: (reason: string, message: string) => this.leaseEvent(reason, message),
      });
      const elector = new LeaderElector({
        lock,
        leaseDurationMs: o.leaseDurationMs,
        renewDeadlineMs: o.renewDeadlineMs,
        retryPeriodMs: o.retryPeriodMs,
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
      // would keep a stopping controller alive for minutes while the API server fails requests.
      this.recorder.shutDown();
      await this.recorder.flush();
    }
  }

  /** Informers, then workers; returns when `signal` aborts and every worker has finished its item. */
  private async runBody(signal: AbortSignal): Promise<void> {
    const o = this.options;
    this.running = true;
    const informers = startInformers(o.kubeConfig, signal, {
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
      },
    });
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
  enqueueClaim(claim: V1PersistentVolumeClaim): void {
    const uid = claim.metadata?.uid;
    if (uid !== undefined) this.claimQueue.add(uid);
  }

  private opSignal(signal: AbortSignal, timeoutMs: number): AbortSignal {
    return timeoutMs > 0 ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : signal;
  }

  private async claimWorker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = await this.claimQueue.get();
      if (next.shutdown) return;
      const key = next.item;
      if (signal.aborted) {
        // Stopped or no longer leading: the queue still hands out what was queued (client-go semantics), but no
        // new operation may start now.
        this.claimQueue.done(key);
        return;
      }
      this.inFlight += 1;
      try {
        await this.syncClaimHandler(key, this.opSignal(signal, this.options.provisionTimeoutMs));
        this.claimQueue.forget(key);
        this.claimsInProgress.delete(key);
      } catch (err) {
        this.logger.error({ claim: key, err: describeError(err) }, 'Error syncing claim');
        const threshold = this.options.failedProvisionThreshold;
        if (threshold === 0 || this.claimQueue.numRequeues(key) < threshold) this.claimQueue.addRateLimited(key);
        else {
          // Giving up; a volume still being provisioned in the background may leak (as in Go).
          this.claimsInProgress.delete(key);
          this.logger.error({ claim: key, threshold }, 'Exceeded the failed provision threshold, giving up on the claim');
          this.emit('gaveUp', 'claim', key, err);
        }
      } finally {
        this.inFlight -= 1;
        this.claimQueue.done(key);
      }
    }
  }

  private async volumeWorker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = await this.volumeQueue.get();
      if (next.shutdown) return;
      const key = next.item;
      if (signal.aborted) {
        // Stopped or no longer leading: the queue still hands out what was queued (client-go semantics), but no
        // new operation may start now.
        this.volumeQueue.done(key);
        return;
      }
      this.inFlight += 1;
      try {
        await this.syncVolumeHandler(key, this.opSignal(signal, this.options.deletionTimeoutMs));
        this.volumeQueue.forget(key);
      } catch (err) {
        this.logger.error({ volume: key, err: describeError(err) }, 'Error syncing volume');
        const threshold = this.options.failedDeleteThreshold;
        if (threshold === 0 || this.volumeQueue.numRequeues(key) < threshold) this.volumeQueue.addRateLimited(key);
        else {
          this.logger.error({ volume: key, threshold }, 'Exceeded the failed delete threshold, giving up on the volume');
          this.emit('gaveUp', 'volume', key, err);
        }
      } finally {
        this.inFlight -= 1;
        this.volumeQueue.done(key);
      }
    }
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
  async syncClaim(claim: V1PersistentVolumeClaim, signal: AbortSignal): Promise<void> {
    const uid = claim.metadata?.uid ?? '';
    const cls = this.informers?.classByName(claimClass(claim));
    if (this.slowSet.remaining(uid, cls?.metadata?.uid) > 0) {
      throw new DelayRetryError(`skipping volume provisioning for pvc ${uid}, because provisioning previously failed with infeasible error`);
    }
    const labels = provisionLabels(claim);
    let should: boolean;
    try {
      should = await shouldProvision(
        { provisioner: this.options.provisioner, knownNames: this.knownNames, getClass: (n) => this.informers?.classByName(n) },
        claim,
        signal,
      );
    } catch (err) {
      this.metrics.provisionFailed(labels);
      throw err;
    }
    if (!should) return;
    const started = this.options.clock.now();
    const outcome = await this.provisionClaimOperation(claim, signal);
    if (outcome.error === undefined) this.metrics.provisionSucceeded(labels, (this.options.clock.now() - started) / 1000);
    else this.metrics.provisionFailed(labels);
    if (outcome.error === undefined || outcome.state === ProvisioningState.Finished) {
      this.claimsInProgress.delete(uid);
      if (outcome.error === undefined || outcome.error === STOP) return;
      throw asError(outcome.error);
    }
    if (outcome.state === ProvisioningState.InBackground) this.claimsInProgress.set(uid, claim);
    throw asError(outcome.error);
  }

  private async provisionClaimOperation(claim: V1PersistentVolumeClaim, signal: AbortSignal): Promise<Outcome> {
    const o = this.options;
    const className = claimClass(claim);
    const log = this.logger.child({ claim: claimKey(claim), class: className });
    log.debug({}, 'Started');
    const pvName = o.volumeName(claim);
    if (this.informers?.volumeByName(pvName) !== undefined) {
      log.debug({ volume: pvName }, 'PersistentVolume already exists, skipping');
      return { state: ProvisioningState.Finished, error: STOP };
    }
    const claimRef = claimRefOf(claim);
    const blocked = await canProvision(o.provisioner, o.provisionerName, claim, signal);
    if (blocked !== undefined) {
      this.claimEvent(claim, 'Warning', 'ProvisioningFailed', blocked);
      return { state: ProvisioningState.Finished, error: STOP };
    }
    const cls = this.informers?.classByName(className);
    if (cls === undefined) return { state: ProvisioningState.Finished, error: new Error(`storageClass "${className}" not found`) };
    if (!this.knownNames.has(cls.provisioner)) {
      log.info({ classProvisioner: cls.provisioner }, "Unknown provisioner requested in claim's StorageClass");
      return { state: ProvisioningState.Finished, error: STOP };
    }
    this.claimEvent(claim, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${claimKey(claim)}"`);
    let volume: V1PersistentVolume;
    try {
      ({ volume } = await o.provisioner.provision({ storageClass: cls, pvName, pvc: claim, selectedNodeName: selectedNodeName(claim) }, signal));
    } catch (err) {
      return this.provisionFailed(claim, cls.metadata?.uid ?? '', err, log);
    }
    log.info({ volume: pvName }, 'Volume provisioned');
    const pv: V1PersistentVolume = { ...volume, metadata: { ...volume.metadata }, spec: { ...volume.spec } };
    pv.spec = { ...pv.spec, claimRef, storageClassName: className };
    const meta = pv.metadata ?? {};
    if (o.addFinalizer && !(meta.finalizers ?? []).includes(FINALIZER_PV)) meta.finalizers = [...(meta.finalizers ?? []), FINALIZER_PV];
    meta.annotations = { ...meta.annotations, [ANN_PROVISIONED_BY]: cls.provisioner };
    pv.metadata = meta;
    try {
      await this.volumeStore.storeVolume(claim, pv);
    } catch (err) {
      this.emit('provisionFailed', claim, err);
      return { state: ProvisioningState.Finished, error: err };
    }
    this.emit('provisioned', claim, pv);
    return { state: ProvisioningState.Finished };
  }

  private async provisionFailed(claim: V1PersistentVolumeClaim, classUid: string, err: unknown, log: Logger): Promise<Outcome> {
    if (err instanceof IgnoredError) {
      log.debug({ reason: err.reason }, 'Volume provision ignored');
      this.emit('provisionIgnored', claim, err);
      return { state: ProvisioningState.Finished, error: STOP };
    }
    this.emit('provisionFailed', claim, err);
    if (isInfeasible(err)) {
      this.slowSet.add(claim.metadata?.uid ?? '', classUid);
      this.claimEvent(
        claim,
        'Warning',
        'ProvisioningFailed',
        `Volume provisioning failed with infeasible error. Retries will be delayed. ${describeError(err)}`,
      );
      return { state: ProvisioningState.Finished, error: err };
    }
    this.claimEvent(claim, 'Warning', 'ProvisioningFailed', describeError(err));
    const state = stateOf(err);
    if (state === ProvisioningState.Reschedule) {
      if (claim.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined) return { state: ProvisioningState.Finished, error: err };
      const updated: V1PersistentVolumeClaim = {
        ...claim,
        metadata: { ...claim.metadata, annotations: { ...claim.metadata?.annotations } },
      };
      delete updated.metadata?.annotations?.[ANN_SELECTED_NODE];
      try {
        await this.core.replaceNamespacedPersistentVolumeClaim({
          name: claim.metadata?.name ?? '',
          namespace: claim.metadata?.namespace ?? '',
          body: updated,
        });
      } catch (updateErr) {
        log.error({ err: describeError(updateErr) }, 'Volume rescheduling failed');
        return { state: ProvisioningState.Finished, error: err };
      }
      log.info({}, 'Volume rescheduled');
      this.emit('rescheduled', claim);
      return { state: ProvisioningState.Finished, error: STOP };
    }
    return { state, error: err };
  }

  private async syncVolumeHandler(name: string, signal: AbortSignal): Promise<void> {
    const pv = this.informers?.volumeByName(name);
    if (pv === undefined) return;
    await this.syncVolume(pv, signal);
  }

  /** One pass over a volume: ownership, the protection finalizer, and deletion when it is due. */
  async syncVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    if (!isProvisionerForVolume(this.knownNames, volume)) return;
    const pv = await this.handleProtectionFinalizer(volume);
    if (!(await shouldDelete(this.options.provisioner, this.options.addFinalizer, pv, signal))) return;
    const labels = { class: pv.spec?.storageClassName ?? '' };
    const started = this.options.clock.now();
    try {
      await this.deleteVolumeOperation(pv, signal);
    } catch (err) {
      this.metrics.deleteFailed(labels);
      this.emit('deleteFailed', pv, err);
      throw err;
    }
    this.metrics.deleteSucceeded(labels, (this.options.clock.now() - started) / 1000);
  }

  private async patchFinalizers(pv: V1PersistentVolume, finalizers: string[] | undefined): Promise<V1PersistentVolume> {
    // A merge patch of the whole list, guarded by resourceVersion: a concurrent change is a conflict, not a loss.
    return this.core.patchPersistentVolume(
      {
        name: pv.metadata?.name ?? '',
        body: { metadata: { finalizers: finalizers ?? null, resourceVersion: pv.metadata?.resourceVersion } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  private async handleProtectionFinalizer(pv: V1PersistentVolume): Promise<V1PersistentVolume> {
    const [finalizers, modified] = desiredFinalizers(this.options.addFinalizer, pv);
    if (!modified) return pv;
    try {
      return await this.patchFinalizers(pv, finalizers);
    } catch (err) {
      throw new Error(`failed to modify finalizers to ${JSON.stringify(finalizers ?? [])} on volume ${pv.metadata?.name ?? ''} err: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  private async deleteVolumeOperation(pv: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const log = this.logger.child({ volume: name });
    try {
      await this.options.provisioner.delete(pv, signal);
    } catch (err) {
      if (err instanceof IgnoredError) {
        log.debug({ reason: err.reason }, 'Volume deletion ignored');
        return;
      }
      this.volumeEvent(pv, 'Warning', 'VolumeFailedDelete', describeError(err));
      throw err;
    }
    log.info({}, 'Volume deleted');
    try {
      await this.core.deletePersistentVolume({ name });
    } catch (err) {
      log.error({ err: describeError(err) }, 'Failed to delete persistentvolume');
      throw err;
    }
    log.info({}, 'Persistentvolume deleted');
    this.emit('deleted', pv);
    if (this.options.addFinalizer && (pv.metadata?.finalizers ?? []).length > 0) {
      const cached = this.informers?.volumeByName(name);
      if (cached === undefined) return;
      const [finalizers, modified] = removeFinalizer(cached.metadata?.finalizers);
      if (!modified) return;
      try {
        await this.patchFinalizers(cached, finalizers);
      } catch (err) {
        if (isNotFound(err)) return;
        log.error({ err: describeError(err) }, 'Failed to remove finalizer for persistentvolume');
        throw err;
      }
    }
  }

  private claimEvent(claim: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const ref = claimRefOf(claim);
    this.recorder.event({ ...ref, kind: 'PersistentVolumeClaim', name: ref.name ?? '' }, type, reason, message);
  }

  private volumeEvent(pv: V1PersistentVolume, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(
      { kind: 'PersistentVolume', apiVersion: 'v1', name: pv.metadata?.name ?? '', ...(pv.metadata?.uid ? { uid: pv.metadata.uid } : {}) },
      type,
      reason,
      message,
    );
  }

  private leaseEvent(reason: string, message: string): void {
    this.recorder.event(
      { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespace: this.options.leaderElectionNamespace, name: leaseName(this.options.provisionerName) },
      'Normal',
      reason,
      message,
    );
  }
}

