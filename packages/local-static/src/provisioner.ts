/**
 * The per-node daemon: one serial loop that cleans and deletes released volumes (the deleter), then publishes new
 * disks of the discovery directories (discovery), then maybe removes the startup taint (taints), then sleeps
 * `--discovery-period`; cleanups run in the background and wake the loop when they finish. This file wires them.
 *
 * @module
 */
import type { KubeConfig, V1Node, V1PersistentVolume } from '@kubernetes/client-node';
import {
  describeError,
  EventRecorder,
  informerFor,
  makeBatchV1Calls,
  makeCoreV1Calls,
  noopMetrics,
  realClock,
  silentLogger,
  sleep,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type Informer,
  type Logger,
  type MetricsSink,
} from '@kprov/provisioner-lib';
import type { V1StorageClass } from '@kubernetes/client-node';
import type { ProvisionerConfig } from './config/config.js';
import type { ConfigState } from './config/source.js';
import { Deleter } from './deleter/deleter.js';
import { CleanupJobs } from './deleter/job-client.js';
import { DEFAULT_DISCOVERY_PERIOD_MS, Discoverer } from './discovery/discoverer.js';
import { DEFAULT_MOUNT_INFO } from './discovery/mounts.js';
import { DEFAULT_SYSFS } from './discovery/probe.js';
import { VolumeCache } from './discovery/volume-cache.js';
import { HOSTNAME_LABEL, provisionerName } from './discovery/volume.js';
import { volumeEvents } from './events/volume-events.js';
import { createLocalStaticMetrics } from './metrics/metrics.js';
import { StartupTaint } from './taints/startup-taint.js';

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

/**
 * The static local volume provisioner of one node. {@link run} fetches the Node, starts the PV and StorageClass
 * informers and runs the loop until the signal aborts; {@link readyError} is the readiness check.
 */
export class LocalStaticProvisioner {
  private readonly core: CoreV1Calls;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sink: MetricsSink;
  private readonly volumes: Informer<V1PersistentVolume>;
  private readonly classes: Informer<V1StorageClass>;
  private readonly deleter: Deleter;
  private readonly discoverer: Discoverer;
  private readonly taint: StartupTaint;
  private readonly cache: VolumeCache;
  private node: V1Node | undefined;
  private recorder: EventRecorder | undefined;
  private passes = 0;
  private lastErrors: string[] = [];
  /** Ends the pause between passes early; a wake during a pass makes the next pause end at once. */
  private wake: (() => void) | undefined;
  private wakeRequested = false;

  constructor(private readonly options: LocalStaticProvisionerOptions) {
    this.core = makeCoreV1Calls(options.kubeConfig);
    const batch = makeBatchV1Calls(options.kubeConfig);
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.sink = options.metrics ?? noopMetrics;
    const metrics = createLocalStaticMetrics(this.sink);
    // Every PV of the cluster is cached on every node: without their managedFields, which nothing here reads (left
    // out as they are read, never parsed).
    const informing = { clock: this.clock, logger: this.logger, stripManagedFields: true };
    this.volumes = informerFor(options.kubeConfig, 'PersistentVolume', informing);
    this.classes = informerFor(options.kubeConfig, 'StorageClass', informing);
    const config = (): ProvisionerConfig => this.config();
    this.cache = new VolumeCache(this.volumes.store, {
      nodeName: options.nodeName,
      provisionerName: () => this.provisionerName(),
      useNodeNameOnly: () => this.config().useNodeNameOnly,
    });
    const events = volumeEvents(() => this.recorder);
    const mountInfoPath = options.mountInfoPath ?? DEFAULT_MOUNT_INFO;
    this.deleter = new Deleter({
      nodeName: options.nodeName,
      core: this.core,
      jobs: new CleanupJobs(batch, options.namespace ?? 'default'),
      jobImage: options.jobImage ?? '',
      volumes: this.cache,
      config,
      backoffBaseMs: options.discoveryPeriodMs ?? DEFAULT_DISCOVERY_PERIOD_MS,
      mountInfoPath,
      env: options.env ?? process.env,
      now: options.now ?? (() => new Date()),
      onCleaned: () => {
        if (this.wake === undefined) this.wakeRequested = true;
        else this.wake();
      },
      metrics,
      events,
      clock: this.clock,
      logger: this.logger,
    });
    this.discoverer = new Discoverer({
      nodeName: options.nodeName,
      core: this.core,
      classes: this.classes.store,
      volumes: this.cache,
      cleanups: this.deleter,
      config,
      provisionerName: () => this.provisionerName(),
      mountInfoPath,
      sysfsPath: options.sysfsPath ?? DEFAULT_SYSFS,
      metrics,
      events,
      clock: this.clock,
      logger: this.logger,
    });
    this.taint = new StartupTaint({
      core: this.core,
      nodeName: options.nodeName,
      clock: this.clock,
      logger: this.logger,
    });
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
    return this.deleter.stats();
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
      await this.deleter.settled();
      recorder.shutDown();
      await recorder.flush();
    }
  }

  /** One pass: delete, discover, maybe remove the startup taint. */
  async pass(signal: AbortSignal): Promise<void> {
    this.deleter.forgetGone(this.cache.prune());
    await this.deleter.deleteVolumes(signal);
    const errors = await this.discoverer.discover(this.node!, signal);
    this.lastErrors = errors;
    this.passes++;
    if (errors.length === 0 && this.options.config().errors.length === 0)
      await this.taint.removeOnce(this.config(), signal);
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
}
