/**
 * The per-node daemon: one serial loop that cleans and deletes released volumes (`DeletePVs`), then publishes new
 * disks of the discovery directories (`DiscoverLocalVolumes`), then sleeps `--discovery-period`; cleanups run in the
 * background and wake the loop when they finish.
 *
 * @module
 */
import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import { parseQuantity, quantityValue } from '@kprov/quantity';
import {
  BatchV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Job,
  type V1Node,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import {
  describeError,
  EventRecorder,
  informerFor,
  isAlreadyExists,
  isNotFound,
  makeApiClient,
  noopMetrics,
  realClock,
  silentLogger,
  sleep,
  withSignal,
  type Clock,
  type Informer,
  type Logger,
  type MetricsSink,
} from '@kprov/provisioner-lib';
import { formatGoDuration } from '@kprov/provisioner-lib/runtime';
import type { V1StorageClass } from '@kubernetes/client-node';
import type { ClassConfig, ProvisionerConfig } from './config/config.js';
import { nameMatcher } from './config/glob.js';
import type { ConfigState } from './config/source.js';
import { CleanupBackoff } from './deleter/backoff.js';
import { CleanupTimeoutError, removeContents, runCleanerCommand, withTimeout } from './deleter/cleanup.js';
import { cleanupJob, jobName, JOB_START_TIME_ANNOTATION } from './deleter/job.js';
import { ProcTable } from './deleter/proctable.js';
import { capacityBucket, capacityQuantity } from './discovery/capacity.js';
import { DEFAULT_MOUNT_INFO, readMountPoints } from './discovery/mounts.js';
import {
  blockDeviceCapacity,
  DEFAULT_SYSFS,
  filesystemCapacity,
  pathMode,
  type VolumeMode,
} from './discovery/probe.js';
import {
  buildVolume,
  HOSTNAME_LABEL,
  PROVISIONED_BY_ANNOTATION,
  provisionerName,
  volumeLabels,
} from './discovery/volume.js';
import { volumeName } from './discovery/volume-name.js';
import { createLocalStaticMetrics, type LocalStaticMetrics } from './metrics.js';

/** `--discovery-period` default: 10 s. */
export const DEFAULT_DISCOVERY_PERIOD_MS = 10_000;
/** Event reason: a PV could not be cleaned or deleted. */
export const VOLUME_FAILED_DELETE = 'VolumeFailedDelete';
/** Event reason: a block volume's cleanup started. */
export const VOLUME_DELETE = 'VolumeDelete';
/** Event reason: a released PV has reclaim policy Recycle. */
export const VOLUME_UNSUPPORTED_RECLAIM_POLICY = 'VolumeUnsupportedReclaimPolicy';
/** Event reason: a released PV has a reclaim policy nobody knows. */
export const VOLUME_UNKNOWN_RECLAIM_POLICY = 'VolumeUnknownReclaimPolicy';
/** Environment variable naming the block device a cleaner wipes. */
export const BLOCK_DEVICE_ENV = 'LOCAL_PV_BLKDEVICE';

/** Options of {@link LocalStaticProvisioner}. */
export interface LocalStaticProvisionerOptions {
  /** How to reach the API server (all requests go through the library's shared agent and rate limit). */
  kubeConfig: KubeConfig;
  /** This node's name (`MY_NODE_NAME`). */
  nodeName: string;
  /** The config in force, asked at every pass. */
  config: () => ConfigState;
  /** Namespace of cleanup Jobs (`MY_NAMESPACE`). Default `default`. */
  namespace?: string;
  /** Image of cleanup Jobs (`JOB_CONTAINER_IMAGE`). Default none: Job cleanup fails with upstream's message. */
  jobImage?: string | undefined;
  /**
   * Pause between two passes, in ms (`--discovery-period`), and the wait before a volume whose cleanup failed is tried
   * again, which doubles with each failure in a row up to 5 minutes (`DEFAULT_CLEANUP_BACKOFF_MAX_MS`). Default
   * {@link DEFAULT_DISCOVERY_PERIOD_MS}.
   */
  discoveryPeriodMs?: number;
  /** Mount table read for the mount point rule. Default `/proc/self/mountinfo`. */
  mountInfoPath?: string;
  /** Where sysfs is mounted, for block device sizes. Default `/sys`. */
  sysfsPath?: string;
  /** Environment of cleaner commands, to which `LOCAL_PV_BLKDEVICE` is added. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Time source of the loop, the timeouts and the durations. Default the real clock. */
  clock?: Clock;
  /** Wall-clock time, for the `start-time` annotation of cleanup Jobs. Default `new Date()`. */
  now?: () => Date;
  /** Where the metrics go (upstream's twelve and the cleanup attempts). Default discarded. */
  metrics?: MetricsSink;
  /** Default silent. */
  logger?: Logger;
}

/** A PV create or delete that went wrong, with what upstream says. */
class DiscoveryError extends Error {}

/** The API server did not delete a cleaned volume's PV: the attempt failed, though its cleanup did not. */
class VolumeDeleteError extends Error {}

/** The cleanup mode of a volume and how it is cleaned. */
interface CleanupKind {
  mode: VolumeMode;
  type: 'process' | 'job';
}

/**
 * The static local volume provisioner of one node. {@link run} fetches the Node, starts the PV and StorageClass
 * informers and runs the loop until the signal aborts; {@link readyError} is the readiness check.
 */
export class LocalStaticProvisioner {
  private readonly core: CoreV1Api;
  private readonly batch: BatchV1Api;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: LocalStaticMetrics;
  private readonly sink: MetricsSink;
  private readonly procTable: ProcTable;
  private readonly backoff: CleanupBackoff;
  private readonly volumes: Informer<V1PersistentVolume>;
  private readonly classes: Informer<V1StorageClass>;
  private node: V1Node | undefined;
  private recorder: EventRecorder | undefined;
  private passes = 0;
  private lastErrors: string[] = [];
  private taintRemoved = false;
  /** PVs created by this process that the informer may not have yet. */
  private readonly created = new Map<string, V1PersistentVolume>();
  /** UIDs of PVs this process deleted that the informer may still have (the deleter skips them; discovery still sees them). */
  private readonly deleted = new Set<string>();
  /** Ends the pause between passes early; a wake during a pass makes the next pause end at once. */
  private wake: (() => void) | undefined;
  private wakeRequested = false;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: LocalStaticProvisionerOptions) {
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.batch = makeApiClient(options.kubeConfig, BatchV1Api);
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.sink = options.metrics ?? noopMetrics;
    this.metrics = createLocalStaticMetrics(this.sink);
    this.procTable = new ProcTable(this.metrics);
    this.backoff = new CleanupBackoff(this.clock, options.discoveryPeriodMs ?? DEFAULT_DISCOVERY_PERIOD_MS);
    this.volumes = informerFor(options.kubeConfig, 'PersistentVolume', { clock: this.clock, logger: this.logger });
    this.classes = informerFor(options.kubeConfig, 'StorageClass', { clock: this.clock, logger: this.logger });
  }

  /** The name PVs of this node carry in `pv.kubernetes.io/provisioned-by`, for the config in force. @throws Error before the Node was fetched. */
  provisionerName(): string {
    const node = this.node;
    if (node === undefined) throw new Error('the Node has not been fetched yet');
    return provisionerName(this.options.nodeName, node.metadata?.uid ?? '', this.config().useNodeNameOnly);
  }

  /** Why the provisioner is not ready, or `undefined` when it is: a pass must have run without errors, and the config applied whole. */
  readyError(): string | undefined {
    if (this.passes === 0) return 'no discovery pass has completed yet';
    const errors = [...this.options.config().errors, ...this.lastErrors];
    return errors.length === 0 ? undefined : errors.join('; ');
  }

  /** Passes completed since the start. */
  get completedPasses(): number {
    return this.passes;
  }

  /** Cleanups running, succeeded and failed since the start. */
  cleanupStats(): { running: number; succeeded: number; failed: number } {
    return this.procTable.stats();
  }

  private config(): ProvisionerConfig {
    return this.options.config().config;
  }

  /**
   * Fetches the Node (3 tries, 1 s apart), starts the informers and runs the loop until `signal` aborts; then waits
   * for the informers and the running cleanups (which the signal stops) and resolves. `onStarted` is called once the
   * informers have synced, before the first pass.
   *
   * @throws Error (rejects) when the Node cannot be fetched or has no `kubernetes.io/hostname` label.
   */
  async run(signal: AbortSignal, onStarted?: () => void): Promise<void> {
    this.node = await this.fetchNode(signal);
    if (this.node.metadata?.labels?.[HOSTNAME_LABEL] === undefined) {
      throw new Error(
        `Node ${this.options.nodeName} has no ${HOSTNAME_LABEL} label; its PVs could not be pinned to it`,
      );
    }
    const recorder = new EventRecorder({
      kubeConfig: this.options.kubeConfig,
      source: { component: this.provisionerName(), host: this.options.nodeName },
      logger: this.logger,
      metrics: this.sink,
      clock: this.clock,
    });
    this.recorder = recorder;
    const informers = [this.volumes.run(signal), this.classes.run(signal)];
    try {
      await Promise.all([this.volumes.waitForSync(signal), this.classes.waitForSync(signal)]);
      this.logger.info(
        { node: this.options.nodeName, provisioner: this.provisionerName() },
        'Local volume provisioner started',
      );
      onStarted?.();
      while (!signal.aborted) {
        await this.pass(signal);
        await this.pause(signal);
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      await Promise.all(informers);
      await Promise.allSettled([...this.running]);
      recorder.shutDown();
      await recorder.flush();
    }
  }

  /** One pass: delete, discover, maybe remove the startup taint. */
  async pass(signal: AbortSignal): Promise<void> {
    this.pruneBookkeeping();
    await this.deleteVolumes(signal);
    const errors = await this.discover(signal);
    this.lastErrors = errors;
    this.passes++;
    if (errors.length === 0 && this.options.config().errors.length === 0) await this.removeStartupTaint(signal);
  }

  private async pause(signal: AbortSignal): Promise<void> {
    if (this.wakeRequested) {
      this.wakeRequested = false;
      return;
    }
    const woken = new Promise<void>((resolve) => (this.wake = resolve));
    try {
      await Promise.race([
        sleep(this.clock, this.options.discoveryPeriodMs ?? DEFAULT_DISCOVERY_PERIOD_MS, signal),
        woken,
      ]);
    } catch {
      // Stopped.
    } finally {
      this.wake = undefined;
      this.wakeRequested = false;
    }
  }

  private async fetchNode(signal: AbortSignal): Promise<V1Node> {
    let last: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt > 0) await sleep(this.clock, 1000, signal);
      try {
        return await this.core.readNode({ name: this.options.nodeName }, withSignal(signal));
      } catch (err) {
        if (signal.aborted) throw err;
        last = err;
        this.logger.error({ node: this.options.nodeName, err: describeError(err) }, 'Could not get the Node');
      }
    }
    throw new Error(`could not get Node ${this.options.nodeName}: ${describeError(last)}`);
  }

  /** Forgets what the informer has caught up with. */
  private pruneBookkeeping(): void {
    for (const name of this.created.keys()) if (this.volumes.store.get(name) !== undefined) this.created.delete(name);
    const uids = new Set(this.volumes.store.list().map((pv) => pv.metadata?.uid));
    for (const uid of this.deleted) if (!uids.has(uid)) this.deleted.delete(uid);
    this.backoff.retain(uids);
  }

  /** Whether this node's provisioner created `pv` (upstream's populator filter). */
  private isOurs(pv: V1PersistentVolume): boolean {
    const by = pv.metadata?.annotations?.[PROVISIONED_BY_ANNOTATION];
    if (by === undefined) return false;
    const name = this.provisionerName();
    if (by === name) return true;
    // useNodeNameOnly reads PVs named with the UID, when they carry this node's hostname label.
    return (
      this.config().useNodeNameOnly &&
      pv.metadata?.labels?.[HOSTNAME_LABEL] === this.options.nodeName &&
      by.startsWith(`${name}-`)
    );
  }

  /** The PVs of this node: the informer's, plus those just created. */
  private ourVolumes(): V1PersistentVolume[] {
    const list = this.volumes.store.list().filter((pv) => this.isOurs(pv));
    const names = new Set(list.map((pv) => pv.metadata?.name));
    for (const [name, pv] of this.created) if (!names.has(name)) list.push(pv);
    return list;
  }

  private event(pv: V1PersistentVolume, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder?.event(
      { kind: 'PersistentVolume', apiVersion: 'v1', name: pv.metadata?.name ?? '', uid: pv.metadata?.uid ?? '' },
      type,
      reason,
      message,
    );
  }

  private async apiCall<T>(method: 'create' | 'delete', call: () => Promise<T>): Promise<T> {
    const started = this.clock.now();
    this.metrics.apiRequests.inc({ method });
    try {
      return await call();
    } catch (err) {
      this.metrics.apiRequestsFailed.inc({ method });
      throw err;
    } finally {
      this.metrics.apiRequestsDuration.observe({ method }, (this.clock.now() - started) / 1000);
    }
  }

  // ---- deleter -------------------------------------------------------------------------------------------------

  private async deleteVolumes(signal: AbortSignal): Promise<void> {
    for (const pv of this.ourVolumes()) {
      if (signal.aborted) return;
      if (pv.status?.phase !== 'Released' || pv.metadata?.deletionTimestamp !== undefined) continue;
      // Deleted already; the informer has not seen it go yet.
      if (this.deleted.has(pv.metadata?.uid ?? '')) continue;
      const policy = pv.spec?.persistentVolumeReclaimPolicy;
      if (policy === 'Retain') continue;
      if (policy === 'Recycle') {
        this.event(
          pv,
          'Warning',
          VOLUME_UNSUPPORTED_RECLAIM_POLICY,
          'Volume has unsupported PersistentVolumeReclaimPolicy: Recycle',
        );
        continue;
      }
      if (policy !== 'Delete') {
        this.event(
          pv,
          'Warning',
          VOLUME_UNKNOWN_RECLAIM_POLICY,
          'Volume has unrecognized PersistentVolumeReclaimPolicy',
        );
        continue;
      }
      // A volume whose cleanup failed waits out its backoff before it is tried again.
      if (this.backoff.remaining(pv.metadata?.uid ?? '') > 0) continue;
      let kind: CleanupKind | undefined;
      try {
        kind = await this.deleteVolume(pv, signal);
      } catch (err) {
        if (signal.aborted) return;
        this.failed(
          pv,
          err instanceof KindError ? err.error : err,
          kind?.mode ?? (err instanceof KindError ? err.kind.mode : 'unknown'),
          err instanceof KindError ? err.kind.type : 'process',
        );
      }
    }
  }

  /**
   * Reports a failed attempt of cleaning and deleting `pv` and backs the volume off: one log line, one more count of
   * the same Warning Event (the recorder aggregates repeats), the counters; the volume is not tried again before its
   * delay has passed, and the loop is not woken.
   */
  private failed(pv: V1PersistentVolume, err: unknown, mode: string, type: string): void {
    const message = describeError(err);
    const uid = pv.metadata?.uid ?? '';
    const delay = this.backoff.failed(uid);
    this.metrics.deleteFailed.inc({ mode, type });
    if (!(err instanceof VolumeDeleteError))
      this.metrics.cleanup.inc({ mode, type, outcome: err instanceof CleanupTimeoutError ? 'timeout' : 'failed' });
    this.logger.error(
      { pv: pv.metadata?.name, err: message, failures: this.backoff.failures(uid), retryIn: formatGoDuration(delay) },
      'Error cleaning PV',
    );
    this.event(pv, 'Warning', VOLUME_FAILED_DELETE, `Error cleaning PV "${pv.metadata?.name ?? ''}": ${message}`);
  }

  /** The volume of `pv` is cleaned and its PV deleted: the volume starts its backoff over. */
  private succeeded(pv: V1PersistentVolume): void {
    this.backoff.reset(pv.metadata?.uid ?? '');
  }

  /**
   * The container path of a PV of class `cls`: the PV's path must be directly inside the class's `hostDir`, and
   * the PV's name the one discovery gives that entry on this node; anything else is refused, never cleaned.
   */
  private containerPath(pv: V1PersistentVolume, className: string, cls: ClassConfig): { path: string; entry: string } {
    const local = pv.spec?.local?.path ?? '';
    const entry = relative(cls.hostDir, local);
    if (entry === '' || entry === '.' || entry.includes('/') || entry === '..') {
      throw new Error(`path "${local}" is not an entry of the discovery directory ${cls.hostDir}; not cleaning it`);
    }
    const expected = volumeName(entry, this.options.nodeName, className);
    if (pv.metadata?.name !== expected)
      throw new Error(
        `PV name ${pv.metadata?.name ?? ''} is not the one discovery gives ${local} on this node (${expected}); not cleaning it`,
      );
    return { path: `${cls.mountDir.replace(/\/+$/, '')}/${entry}`, entry };
  }

  /** Upstream's state machine for one Released PV with policy Delete; returns how the volume is cleaned. */
  private async deleteVolume(pv: V1PersistentVolume, signal: AbortSignal): Promise<CleanupKind> {
    if (pv.spec?.local === undefined) throw new Error('Unsupported volume type');
    const className = pv.spec.storageClassName ?? '';
    const config = this.config();
    const cls = config.storageClassMap[className];
    if (cls === undefined) throw new Error(`Unknown storage class name ${className}`);
    const { path } = this.containerPath(pv, className, cls);
    let mode: VolumeMode;
    try {
      mode = await pathMode(path);
    } catch (err) {
      throw new Error(`failed to get volume mode of path "${path}": ${describeError(err)}`, { cause: err });
    }
    const kind: CleanupKind = { mode, type: mode === 'Block' && config.useJobForCleaning ? 'job' : 'process' };
    try {
      if (kind.type === 'job') await this.jobCleanup(pv, path, cls, kind, signal);
      else await this.processCleanup(pv, path, cls, kind, signal);
    } catch (err) {
      throw new KindError(err, kind);
    }
    return kind;
  }

  private async deletePVObject(pv: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const name = pv.metadata?.name ?? '';
    try {
      await this.apiCall('delete', () => this.core.deletePersistentVolume({ name }, withSignal(signal)));
    } catch (err) {
      if (!isNotFound(err))
        throw new VolumeDeleteError(`failed to delete PV ${name}: ${describeError(err)}`, { cause: err });
    }
    this.deleted.add(pv.metadata?.uid ?? '');
    this.created.delete(name);
    this.logger.info({ pv: name }, 'Deleted PV');
  }

  private observeDelete(
    pv: V1PersistentVolume,
    kind: CleanupKind,
    cls: ClassConfig,
    startMs: number | undefined,
  ): void {
    this.metrics.delete.inc({ mode: kind.mode, type: kind.type });
    if (startMs === undefined) return;
    let bytes: bigint;
    try {
      bytes = quantityValue(parseQuantity(pv.spec?.capacity?.storage ?? '0'));
    } catch {
      bytes = 0n;
    }
    this.metrics.deleteDuration.observe(
      {
        mode: kind.mode,
        type: kind.type,
        capacity: capacityBucket(bytes),
        cleanup_command: cls.blockCleanerCommand[0] ?? '',
      },
      (this.clock.now() - startMs) / 1000,
    );
  }

  private async processCleanup(
    pv: V1PersistentVolume,
    path: string,
    cls: ClassConfig,
    kind: CleanupKind,
    signal: AbortSignal,
  ): Promise<void> {
    const name = pv.metadata?.name ?? '';
    if (this.procTable.isRunning(name)) return;
    const finished = this.procTable.remove(name);
    if (finished?.state === 'Succeeded') {
      await this.deletePVObject(pv, signal);
      this.observeDelete(pv, kind, cls, finished.startMs);
      this.succeeded(pv);
      return;
    }
    if (kind.mode === 'Filesystem') {
      // The volume must still be the disk that was published: an unmounted disk leaves a plain directory of the
      // host's filesystem at the path, which is not the volume's to empty.
      const mounts = await readMountPoints(this.options.mountInfoPath ?? DEFAULT_MOUNT_INFO);
      if (!mounts.has(path)) throw new Error(`path "${path}" is not a mount point any more; not cleaning it`);
    }
    this.procTable.markRunning(name, this.clock.now());
    // A retry is logged at debug level: its failure says when it comes.
    const failures = this.backoff.failures(pv.metadata?.uid ?? '');
    if (failures === 0) this.logger.info({ pv: name, path, mode: kind.mode }, 'Starting cleanup');
    else this.logger.debug({ pv: name, path, mode: kind.mode, failures }, 'Starting cleanup again');
    const work = withTimeout(
      this.clock,
      cls.cleanupTimeoutMs,
      signal,
      `cleanup of PV ${name}`,
      async (cleanupSignal) => {
        if (kind.mode === 'Filesystem') {
          await removeContents(path, cleanupSignal, {
            mountInfoPath: this.options.mountInfoPath ?? DEFAULT_MOUNT_INFO,
            env: this.options.env ?? process.env,
          });
          return;
        }
        this.event(pv, 'Normal', VOLUME_DELETE, `Starting cleanup of Block PV "${name}", this may take a while`);
        await runCleanerCommand(cls.blockCleanerCommand, {
          env: { ...(this.options.env ?? process.env), [BLOCK_DEVICE_ENV]: path },
          signal: cleanupSignal,
          onLine: (line, stream) => this.logger.info({ pv: name, stream }, line),
        });
      },
    );
    const done = work.then(
      () => {
        this.procTable.markDone(name, true);
        this.metrics.cleanup.inc({ mode: kind.mode, type: kind.type, outcome: 'succeeded' });
        this.logger.info({ pv: name }, 'Completed cleanup');
        // Deleted at once rather than a period later. A failure does not wake the loop: the volume waits its backoff.
        if (this.wake === undefined) this.wakeRequested = true;
        else this.wake();
      },
      (err: unknown) => {
        const message = describeError(err);
        this.procTable.markDone(name, false, message);
        if (signal.aborted && !(err instanceof CleanupTimeoutError)) {
          this.logger.info({ pv: name }, 'Cleanup interrupted by the stop');
          return;
        }
        this.failed(pv, err, kind.mode, kind.type);
      },
    );
    const tracked = done.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  // ---- job cleaning ------------------------------------------------------------------------------------------

  private async readJob(name: string, signal: AbortSignal): Promise<V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob(
        { name, namespace: this.options.namespace ?? 'default' },
        withSignal(signal),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Whether a cleanup Job of `pvName` exists that has not succeeded (a lookup error counts as running). */
  private async jobRunning(pvName: string, signal: AbortSignal): Promise<boolean> {
    try {
      const job = await this.readJob(jobName(pvName), signal);
      return job !== undefined && (job.status?.succeeded ?? 0) <= 0;
    } catch {
      return true;
    }
  }

  private async jobCleanup(
    pv: V1PersistentVolume,
    path: string,
    cls: ClassConfig,
    kind: CleanupKind,
    signal: AbortSignal,
  ): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const namespace = this.options.namespace ?? 'default';
    const job = await this.readJob(jobName(name), signal);
    if (job !== undefined) {
      if ((job.status?.succeeded ?? 0) <= 0) return;
      this.metrics.cleanup.inc({ mode: kind.mode, type: kind.type, outcome: 'succeeded' });
      await this.batch
        .deleteNamespacedJob({ name: jobName(name), namespace, propagationPolicy: 'Foreground' }, withSignal(signal))
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      await this.deletePVObject(pv, signal);
      const started = Date.parse(job.metadata?.annotations?.[JOB_START_TIME_ANNOTATION] ?? '');
      const now = (this.options.now ?? (() => new Date()))().getTime();
      this.observeDelete(pv, kind, cls, Number.isNaN(started) ? undefined : this.clock.now() - (now - started));
      this.succeeded(pv);
      return;
    }
    const image = this.options.jobImage ?? '';
    if (image === '')
      throw new Error('cannot run cleanup job without specifying job image name in the environment variable');
    const body = cleanupJob({
      pv,
      nodeName: this.options.nodeName,
      namespace,
      image,
      command: cls.blockCleanerCommand,
      containerPath: path,
      hostDir: cls.hostDir,
      mountDir: cls.mountDir,
      tolerations: this.config().jobTolerations,
      now: (this.options.now ?? (() => new Date()))(),
    });
    await this.batch.createNamespacedJob({ namespace, body }, withSignal(signal));
    this.logger.info({ pv: name, job: jobName(name) }, 'Created cleanup Job');
  }

  // ---- discovery ---------------------------------------------------------------------------------------------

  /** One discovery pass over every class; returns the errors (an empty list: ready). */
  private async discover(signal: AbortSignal): Promise<string[]> {
    const config = this.config();
    const errors: string[] = [];
    const node = this.node!;
    const labels = volumeLabels(node, config.nodeLabelsForPV, config.labelsForPV);
    for (const [className, cls] of Object.entries(config.storageClassMap)) {
      if (signal.aborted) break;
      try {
        errors.push(...(await this.discoverClass(className, cls, config, labels, signal)));
      } catch (err) {
        if (signal.aborted) break;
        errors.push(`${className}: ${describeError(err)}`);
      }
    }
    for (const error of errors) this.logger.error({ err: error }, 'Discovery error');
    return errors;
  }

  private async discoverClass(
    className: string,
    cls: ClassConfig,
    config: ProvisionerConfig,
    labels: Record<string, string>,
    signal: AbortSignal,
  ): Promise<string[]> {
    const sc = this.classes.store.get(className);
    if (sc === undefined)
      throw new Error(
        `failed to get ReclaimPolicy from storage class "${className}": storageclass.storage.k8s.io "${className}" not found`,
      );
    const reclaimPolicy = sc.reclaimPolicy ?? 'Delete';
    if (reclaimPolicy !== 'Delete' && reclaimPolicy !== 'Retain')
      throw new Error(`unsupported reclaim policy ${reclaimPolicy} of storage class "${className}"`);
    let entries: string[];
    try {
      entries = (await readdir(cls.mountDir)).sort();
    } catch (err) {
      throw new Error(`error reading directory ${cls.mountDir}: ${describeError(err)}`, { cause: err });
    }
    const mounts = await readMountPoints(this.options.mountInfoPath ?? DEFAULT_MOUNT_INFO);
    const matches = nameMatcher(cls.namePattern);
    const ours = this.ourVolumes();
    const byName = new Map(ours.map((pv) => [pv.metadata?.name ?? '', pv]));
    const errors: string[] = [];
    const totals: Record<VolumeMode, bigint> = { Filesystem: 0n, Block: 0n };
    const mountDir = cls.mountDir.replace(/\/+$/, '');
    const hostDir = cls.hostDir.replace(/\/+$/, '');
    for (const entry of entries) {
      if (signal.aborted) break;
      if (!matches(entry)) {
        this.logger.debug({ entry, namePattern: cls.namePattern }, 'Skipping entry not matching namePattern');
        continue;
      }
      const started = this.clock.now();
      const path = `${mountDir}/${entry}`;
      const hostPath = `${hostDir}/${entry}`;
      let detected: VolumeMode;
      try {
        detected = await pathMode(path);
      } catch (err) {
        errors.push(describeError(err));
        continue;
      }
      const name = volumeName(entry, this.options.nodeName, className);
      const existing = byName.get(name);
      if (existing !== undefined) {
        if (existing.spec?.volumeMode === 'Block' && detected === 'Filesystem') {
          const message = `incorrect Volume Mode: PV ${name} requires block mode but path ${path} was in fs mode`;
          errors.push(message);
          this.event(existing, 'Warning', VOLUME_FAILED_DELETE, message);
        }
        continue;
      }
      const sameSpot = ours.find((pv) => pv.spec?.local?.path === hostPath);
      if (sameSpot !== undefined) {
        this.logger.error(
          { path: hostPath, pv: sameSpot.metadata?.name, wanted: name },
          'A PV exists for this path already; not creating another',
        );
        continue;
      }
      if (
        this.procTable.isRunning(name) ||
        (detected === 'Block' && config.useJobForCleaning && (await this.jobRunning(name, signal)))
      ) {
        this.logger.info({ pv: name }, 'PV is still being cleaned, not going to recreate it');
        continue;
      }
      try {
        this.procTable.remove(name);
      } catch (err) {
        this.logger.error({ pv: name, err: describeError(err) }, 'Cannot remove the cleanup status');
        continue;
      }
      const mountOptions = sc.mountOptions ?? [];
      let bytes: bigint;
      try {
        if (detected === 'Block') {
          bytes = await blockDeviceCapacity(path, this.options.sysfsPath ?? DEFAULT_SYSFS);
          if (cls.volumeMode === 'Block' && mountOptions.length > 0)
            this.logger.warn({ path, className }, 'StorageClass mountOptions are ignored for block volumes');
        } else {
          if (cls.volumeMode === 'Block')
            throw new DiscoveryError(`path "${path}" of filesystem mode cannot be used to create block volume`);
          if (!mounts.has(path))
            throw new DiscoveryError(`path "${path}" is not a valid mount point: it is not in the mount table`);
          bytes = await filesystemCapacity(path);
        }
      } catch (err) {
        errors.push(describeError(err));
        continue;
      }
      const body = buildVolume({
        name,
        hostPath,
        className,
        capacity: capacityQuantity(bytes),
        volumeMode: cls.volumeMode,
        accessMode: cls.accessMode,
        fsType: cls.fsType,
        reclaimPolicy,
        mountOptions,
        labels,
        provisionerName: this.provisionerName(),
        hostname: this.node!.metadata!.labels![HOSTNAME_LABEL]!,
        selector: cls.selector,
        useAlphaAPI: config.useAlphaAPI,
        owner: config.setPVOwnerRef ? this.node : undefined,
      });
      try {
        const created = await this.apiCall('create', () =>
          this.core.createPersistentVolume({ body }, withSignal(signal)),
        );
        this.created.set(name, created);
        byName.set(name, created);
        ours.push(created);
      } catch (err) {
        if (signal.aborted) throw err;
        errors.push(
          `error creating PV ${name} for path ${path}: ${isAlreadyExists(err) ? "it exists already and is not one of this node's" : describeError(err)}`,
        );
        continue;
      }
      totals[detected] += bytes;
      this.metrics.discovery.inc({ mode: cls.volumeMode });
      this.metrics.discoveryDuration.observe({ mode: cls.volumeMode }, (this.clock.now() - started) / 1000);
      this.logger.info(
        { pv: name, path: hostPath, capacity: body.spec?.capacity?.storage, mode: cls.volumeMode },
        'Created PV',
      );
    }
    this.metrics.capacity.set({ mode: 'Block' }, Number(totals.Block));
    this.metrics.capacity.set({ mode: 'Filesystem' }, Number(totals.Filesystem));
    return errors.map((e) => `${className}: ${e}`);
  }

  // ---- startup taint ----------------------------------------------------------------------------------------

  /**
   * Removes the taint `provisionerNotReadyNodeTaintKey` from the Node once, after the first pass without errors,
   * when `removeNodeNotReadyTaint` is on (upstream's loop asks the opposite condition and never removes it).
   */
  private async removeStartupTaint(signal: AbortSignal): Promise<void> {
    const config = this.config();
    const key = config.provisionerNotReadyNodeTaintKey;
    if (this.taintRemoved || !config.removeNodeNotReadyTaint || key === '') return;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt > 0) await sleep(this.clock, 1000 * attempt, signal).catch(() => undefined);
      if (signal.aborted) return;
      try {
        const node = await this.core.readNode({ name: this.options.nodeName }, withSignal(signal));
        const taints = node.spec?.taints ?? [];
        const kept = taints.filter((t) => t.key !== key);
        if (kept.length !== taints.length) {
          node.spec = { ...node.spec, taints: kept };
          await this.core.replaceNode({ name: this.options.nodeName, body: node }, withSignal(signal));
          this.logger.info({ node: this.options.nodeName, taint: key }, 'Removed the startup taint from the Node');
        }
        this.taintRemoved = true;
        return;
      } catch (err) {
        if (signal.aborted) return;
        this.logger.error(
          { node: this.options.nodeName, taint: key, err: describeError(err) },
          'Could not remove the startup taint',
        );
      }
    }
  }
}

/** An error of a cleanup whose kind is known. */
class KindError extends Error {
  constructor(
    readonly error: unknown,
    readonly kind: CleanupKind,
  ) {
    super(describeError(error), { cause: error });
  }
}
