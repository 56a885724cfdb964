/**
 * Upstream's `DeletePVs`: each pass, every Released PV of this node with reclaim policy `Delete` is cleaned (in the
 * background, by this process or by a Job), then deleted; a failed attempt is reported and the volume backed off.
 *
 * @module
 */
import { relative } from 'node:path';
import { parseQuantity, quantityValue } from '@kprov/quantity';
import type { CoreV1Api, V1PersistentVolume } from '@kubernetes/client-node';
import { describeError, isNotFound, withSignal, type Clock, type Logger } from '@kprov/provisioner-lib';
import { formatGoDuration } from '@kprov/provisioner-lib/runtime';
import type { ClassConfig, ProvisionerConfig, VolumeMode } from '../config/config.js';
import { capacityBucket } from '../discovery/capacity.js';
import type { CleanupStatus } from '../discovery/discoverer.js';
import { readMountPoints } from '../discovery/mounts.js';
import { pathMode } from '../discovery/probe.js';
import type { VolumeCache } from '../discovery/volume-cache.js';
import { volumeName } from '../discovery/volume-name.js';
import {
  VOLUME_DELETE,
  VOLUME_FAILED_DELETE,
  VOLUME_UNKNOWN_RECLAIM_POLICY,
  VOLUME_UNSUPPORTED_RECLAIM_POLICY,
  type VolumeEvents,
} from '../events/volume-events.js';
import { countedApiRequest } from '../metrics/api-requests.js';
import type { LocalStaticMetrics } from '../metrics/metrics.js';
import { CleanupBackoff } from './backoff.js';
import { CleanupTimeoutError, removeContents, runCleanerCommand, withTimeout } from './cleanup.js';
import type { CleanupJobs } from './job-client.js';
import { cleanupJob, jobName, JOB_START_TIME_ANNOTATION } from './job.js';
import { ProcTable } from './proctable.js';

/** Environment variable naming the block device a cleaner wipes. */
export const BLOCK_DEVICE_ENV = 'LOCAL_PV_BLKDEVICE';

/** What a {@link Deleter} works with. */
export interface DeleterOptions {
  /** This node's name. */
  nodeName: string;
  /** Deletes the PVs. */
  core: Pick<CoreV1Api, 'deletePersistentVolume'>;
  /** The cleanup Jobs (`useJobForCleaning`). */
  jobs: CleanupJobs;
  /** Image of cleanup Jobs (`JOB_CONTAINER_IMAGE`); empty: Job cleanup fails with upstream's message. */
  jobImage: string;
  /** This node's PVs. */
  volumes: VolumeCache;
  /** The config in force, asked at every pass. */
  config: () => ProvisionerConfig;
  /** The first wait of a volume whose cleanup failed (the discovery period), doubling up to 5 minutes. */
  backoffBaseMs: number;
  /** Mount table read for the mount point rule. */
  mountInfoPath: string;
  /** Environment of cleaner commands, to which `LOCAL_PV_BLKDEVICE` is added. */
  env: NodeJS.ProcessEnv;
  /** Wall-clock time, for the `start-time` annotation of cleanup Jobs. */
  now: () => Date;
  /** Called when a cleanup succeeded, so that its PV is deleted without waiting a period. */
  onCleaned: () => void;
  metrics: LocalStaticMetrics;
  events: VolumeEvents;
  clock: Clock;
  logger: Logger;
}

/** The API server did not delete a cleaned volume's PV: the attempt failed, though its cleanup did not. */
class VolumeDeleteError extends Error {}

/** The cleanup mode of a volume and how it is cleaned. */
interface CleanupKind {
  mode: VolumeMode;
  type: 'process' | 'job';
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

/** Cleans and deletes the released PVs of this node; also the {@link CleanupStatus} discovery asks. */
export class Deleter implements CleanupStatus {
  private readonly procTable: ProcTable;
  private readonly backoff: CleanupBackoff;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: DeleterOptions) {
    this.procTable = new ProcTable(options.metrics);
    this.backoff = new CleanupBackoff(options.clock, options.backoffBaseMs);
  }

  /** Cleanups running, succeeded and failed since the start. */
  stats(): { running: number; succeeded: number; failed: number } {
    return this.procTable.stats();
  }

  /** Resolves once every cleanup running in the background has ended (the stop's signal ends them). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  /** Starts over the backoff of every volume whose PV UID is not in `live` (its PV is gone). */
  forgetGone(live: ReadonlySet<string | undefined>): void {
    this.backoff.retain(live);
  }

  async isCleaning(name: string, byJob: boolean, signal: AbortSignal): Promise<boolean> {
    return this.procTable.isRunning(name) || (byJob && (await this.options.jobs.running(name, signal)));
  }

  forget(name: string): void {
    this.procTable.remove(name);
  }

  /** One pass over this node's PVs: every Released one with policy `Delete` not waiting out its backoff is cleaned. */
  async deleteVolumes(signal: AbortSignal): Promise<void> {
    const { volumes, events } = this.options;
    for (const pv of volumes.list()) {
      if (signal.aborted) return;
      if (pv.status?.phase !== 'Released' || pv.metadata?.deletionTimestamp !== undefined) continue;
      // Deleted already; the informer has not seen it go yet.
      if (volumes.isDeleted(pv.metadata?.uid ?? '')) continue;
      const policy = pv.spec?.persistentVolumeReclaimPolicy;
      if (policy === 'Retain') continue;
      if (policy === 'Recycle') {
        events(
          pv,
          'Warning',
          VOLUME_UNSUPPORTED_RECLAIM_POLICY,
          'Volume has unsupported PersistentVolumeReclaimPolicy: Recycle',
        );
        continue;
      }
      if (policy !== 'Delete') {
        events(pv, 'Warning', VOLUME_UNKNOWN_RECLAIM_POLICY, 'Volume has unrecognized PersistentVolumeReclaimPolicy');
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
    const { metrics, logger, events } = this.options;
    const message = describeError(err);
    const uid = pv.metadata?.uid ?? '';
    const delay = this.backoff.failed(uid);
    metrics.deleteFailed.inc({ mode, type });
    if (!(err instanceof VolumeDeleteError))
      metrics.cleanup.inc({ mode, type, outcome: err instanceof CleanupTimeoutError ? 'timeout' : 'failed' });
    logger.error(
      { pv: pv.metadata?.name, err: message, failures: this.backoff.failures(uid), retryIn: formatGoDuration(delay) },
      'Error cleaning PV',
    );
    events(pv, 'Warning', VOLUME_FAILED_DELETE, `Error cleaning PV "${pv.metadata?.name ?? ''}": ${message}`);
  }

  /** The volume of `pv` is cleaned and its PV deleted: the volume starts its backoff over. */
  private succeeded(pv: V1PersistentVolume): void {
    this.backoff.reset(pv.metadata?.uid ?? '');
  }

  /**
   * The container path of a PV of class `cls`: the PV's path must be directly inside the class's `hostDir`, and
   * the PV's name the one discovery gives that entry on this node; anything else is refused, never cleaned.
   */
  private containerPath(pv: V1PersistentVolume, className: string, cls: ClassConfig): string {
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
    return `${cls.mountDir.replace(/\/+$/, '')}/${entry}`;
  }

  /** Upstream's state machine for one Released PV with policy Delete; returns how the volume is cleaned. */
  private async deleteVolume(pv: V1PersistentVolume, signal: AbortSignal): Promise<CleanupKind> {
    if (pv.spec?.local === undefined) throw new Error('Unsupported volume type');
    const className = pv.spec.storageClassName ?? '';
    const config = this.options.config();
    const cls = config.storageClassMap[className];
    if (cls === undefined) throw new Error(`Unknown storage class name ${className}`);
    const path = this.containerPath(pv, className, cls);
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
      await countedApiRequest(this.options.metrics, this.options.clock, 'delete', () =>
        this.options.core.deletePersistentVolume({ name }, withSignal(signal)),
      );
    } catch (err) {
      if (!isNotFound(err))
        throw new VolumeDeleteError(`failed to delete PV ${name}: ${describeError(err)}`, { cause: err });
    }
    this.options.volumes.markDeleted(pv);
    this.options.logger.info({ pv: name }, 'Deleted PV');
  }

  private observeDelete(
    pv: V1PersistentVolume,
    kind: CleanupKind,
    cls: ClassConfig,
    startMs: number | undefined,
  ): void {
    const { metrics, clock } = this.options;
    metrics.delete.inc({ mode: kind.mode, type: kind.type });
    if (startMs === undefined) return;
    let bytes: bigint;
    try {
      bytes = quantityValue(parseQuantity(pv.spec?.capacity?.storage ?? '0'));
    } catch {
      bytes = 0n;
    }
    metrics.deleteDuration.observe(
      {
        mode: kind.mode,
        type: kind.type,
        capacity: capacityBucket(bytes),
        cleanup_command: cls.blockCleanerCommand[0] ?? '',
      },
      (clock.now() - startMs) / 1000,
    );
  }

  private async processCleanup(
    pv: V1PersistentVolume,
    path: string,
    cls: ClassConfig,
    kind: CleanupKind,
    signal: AbortSignal,
  ): Promise<void> {
    const { clock, logger, metrics, events } = this.options;
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
      const mounts = await readMountPoints(this.options.mountInfoPath);
      if (!mounts.has(path)) throw new Error(`path "${path}" is not a mount point any more; not cleaning it`);
    }
    this.procTable.markRunning(name, clock.now());
    // A retry is logged at debug level: its failure says when it comes.
    const failures = this.backoff.failures(pv.metadata?.uid ?? '');
    if (failures === 0) logger.info({ pv: name, path, mode: kind.mode }, 'Starting cleanup');
    else logger.debug({ pv: name, path, mode: kind.mode, failures }, 'Starting cleanup again');
    const work = withTimeout(clock, cls.cleanupTimeoutMs, signal, `cleanup of PV ${name}`, async (cleanupSignal) => {
      if (kind.mode === 'Filesystem') {
        await removeContents(path, cleanupSignal, { mountInfoPath: this.options.mountInfoPath, env: this.options.env });
        return;
      }
      events(pv, 'Normal', VOLUME_DELETE, `Starting cleanup of Block PV "${name}", this may take a while`);
      await runCleanerCommand(cls.blockCleanerCommand, {
        env: { ...this.options.env, [BLOCK_DEVICE_ENV]: path },
        signal: cleanupSignal,
        onLine: (line, stream) => logger.info({ pv: name, stream }, line),
      });
    });
    const done = work.then(
      () => {
        this.procTable.markDone(name, true);
        metrics.cleanup.inc({ mode: kind.mode, type: kind.type, outcome: 'succeeded' });
        logger.info({ pv: name }, 'Completed cleanup');
        // Deleted at once rather than a period later. A failure does not wake the loop: the volume waits its backoff.
        this.options.onCleaned();
      },
      (err: unknown) => {
        const message = describeError(err);
        this.procTable.markDone(name, false, message);
        if (signal.aborted && !(err instanceof CleanupTimeoutError)) {
          logger.info({ pv: name }, 'Cleanup interrupted by the stop');
          return;
        }
        this.failed(pv, err, kind.mode, kind.type);
      },
    );
    const tracked = done.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  private async jobCleanup(
    pv: V1PersistentVolume,
    path: string,
    cls: ClassConfig,
    kind: CleanupKind,
    signal: AbortSignal,
  ): Promise<void> {
    const { jobs, clock, logger, metrics } = this.options;
    const name = pv.metadata?.name ?? '';
    const job = await jobs.get(name, signal);
    if (job !== undefined) {
      if ((job.status?.succeeded ?? 0) <= 0) return;
      metrics.cleanup.inc({ mode: kind.mode, type: kind.type, outcome: 'succeeded' });
      await jobs.delete(name, signal);
      await this.deletePVObject(pv, signal);
      const started = Date.parse(job.metadata?.annotations?.[JOB_START_TIME_ANNOTATION] ?? '');
      const now = this.options.now().getTime();
      this.observeDelete(pv, kind, cls, Number.isNaN(started) ? undefined : clock.now() - (now - started));
      this.succeeded(pv);
      return;
    }
    const image = this.options.jobImage;
    if (image === '')
      throw new Error('cannot run cleanup job without specifying job image name in the environment variable');
    const body = cleanupJob({
      pv,
      nodeName: this.options.nodeName,
      namespace: jobs.namespace,
      image,
      command: cls.blockCleanerCommand,
      containerPath: path,
      hostDir: cls.hostDir,
      mountDir: cls.mountDir,
      tolerations: this.options.config().jobTolerations,
      now: this.options.now(),
    });
    await jobs.create(body, signal);
    logger.info({ pv: name, job: jobName(name) }, 'Created cleanup Job');
  }
}
