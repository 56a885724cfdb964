import type { CoreV1Api, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Backoff } from '../backoff/backoff.js';
import { sleep, type Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';
import type { MetricsSink } from '../metrics/sink.js';
import { newRateLimitingQueue, type RateLimiter, type RateLimitingQueue } from '../workqueue/index.js';
import { describeError, isAlreadyExists } from '../client/api-errors.js';
import { claimKey } from './claims.js';
import { runWorker, type WorkerSpec } from './worker.js';
import type { Provisioner } from './provisioner.js';

/** Reports claim events for a volume store. */
export type ClaimEventSink = (
  claim: V1PersistentVolumeClaim,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
) => void;

/** The one call the stores make. */
type VolumeApi = Pick<CoreV1Api, 'createPersistentVolume'>;

/** Saves provisioned PVs (Go `VolumeStore`). */
export interface VolumeStore {
  storeVolume(claim: V1PersistentVolumeClaim, volume: V1PersistentVolume): Promise<void>;
  run(signal: AbortSignal, workers: number): Promise<void>;
}

async function createVolume(api: VolumeApi, volume: V1PersistentVolume, logger: Logger): Promise<void> {
  try {
    await api.createPersistentVolume({ body: volume });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    logger.info({ volume: volume.metadata?.name }, 'PersistentVolume already exists, reusing');
  }
}

/**
 * The default store: a few attempts to create the PV, spaced `intervalMs` apart; when they all fail, the asset
 * is deleted again (same spacing) so nothing is left behind, and the save error is returned so the claim is
 * retried. Blocks the claim worker meanwhile, as in Go.
 */
export class BackoffVolumeStore implements VolumeStore {
  constructor(
    private readonly api: VolumeApi,
    private readonly provisioner: Provisioner,
    private readonly attempts: number,
    private readonly intervalMs: number,
    private readonly emit: ClaimEventSink,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /**
   * `fn` up to `attempts` times (at least once), `intervalMs` apart on the controller's clock: the library's
   * {@link Backoff} with a constant delay (the Go library's `wait.Backoff` with a factor of 1 and no jitter). Any
   * failure is retried; the last one is thrown.
   */
  private async retry<T>(fn: () => Promise<T>): Promise<T> {
    const backoff = new Backoff({ initialMs: this.intervalMs, factor: 0, jitter: 0, maxMs: 0, clock: this.clock });
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= this.attempts) throw err;
      }
      await sleep(this.clock, backoff.next());
    }
  }

  async storeVolume(claim: V1PersistentVolumeClaim, volume: V1PersistentVolume): Promise<void> {
    const name = volume.metadata?.name ?? '';
    let saveError: unknown;
    try {
      await this.retry(() => createVolume(this.api, volume, this.logger));
      this.logger.info({ volume: name, claim: claimKey(claim) }, 'Volume saved');
      this.emit(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
      return;
    } catch (err) {
      saveError = err;
    }
    this.emit(
      claim,
      'Warning',
      'ProvisioningFailed',
      `Error creating provisioned PV object for claim ${claimKey(claim)}: ${describeError(saveError)}. Deleting the volume.`,
    );
    try {
      // Not cancellable, as in Go: the asset must go even when the controller is stopping.
      await this.retry(() => this.provisioner.delete(volume, new AbortController().signal));
    } catch (err) {
      this.emit(
        claim,
        'Warning',
        'ProvisioningCleanupFailed',
        `Error cleaning provisioned volume for claim ${claimKey(claim)}: ${describeError(err)}. Please delete manually.`,
      );
    }
    throw saveError;
  }

  async run(): Promise<void> {
    // Nothing runs in the background.
  }
}

/**
 * The queue store (`createProvisionedPVLimiter`): one attempt inline; a PV that cannot be saved is kept in memory
 * and retried by background workers with the limiter, forever. The claim counts as provisioned at once and the
 * asset is never deleted.
 */
export class QueueVolumeStore implements VolumeStore {
  private readonly unsaved = new Map<string, { claim: V1PersistentVolumeClaim; volume: V1PersistentVolume }>();
  readonly queue: RateLimitingQueue<string>;

  constructor(
    private readonly api: VolumeApi,
    limiter: RateLimiter<string>,
    private readonly emit: ClaimEventSink,
    private readonly logger: Logger,
    private readonly clock: Clock,
    metrics: MetricsSink,
  ) {
    this.queue = newRateLimitingQueue<string>({ name: 'unsavedpvs', rateLimiter: limiter, clock, metrics });
  }

  /** PVs waiting to be saved, by name. */
  pending(): ReadonlyMap<string, V1PersistentVolume> {
    return new Map([...this.unsaved].map(([k, v]) => [k, v.volume]));
  }

  async storeVolume(claim: V1PersistentVolumeClaim, volume: V1PersistentVolume): Promise<void> {
    const name = volume.metadata?.name ?? '';
    try {
      await createVolume(this.api, volume, this.logger);
      this.emit(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
    } catch (err) {
      this.logger.error(
        { volume: name, err: describeError(err) },
        'Failed to save volume, will retry in the background',
      );
      this.unsaved.set(name, { claim, volume });
      this.queue.addRateLimited(name);
    }
  }

  async run(signal: AbortSignal, workers: number): Promise<void> {
    signal.addEventListener('abort', () => this.queue.shutDown(), { once: true });
    const spec: WorkerSpec = {
      queue: this.queue,
      sync: (name) => this.save(name),
      threshold: 0,
      timeoutMs: 0,
      clock: this.clock,
      onSuccess: () => {},
      onError: (name, err) => this.logger.error({ volume: name, err: describeError(err) }, 'Failed to save volume'),
      onGiveUp: () => {},
      busy: () => {},
    };
    // The stop shuts the queue down, and its workers still save the volumes already queued: their signal never aborts.
    const running = new AbortController().signal;
    await Promise.all(Array.from({ length: workers }, () => runWorker(spec, running)));
  }

  /** One background attempt to save the volume named `name`; throwing requeues it with the limiter. */
  private async save(name: string): Promise<void> {
    const entry = this.unsaved.get(name);
    if (entry === undefined) return;
    await createVolume(this.api, entry.volume, this.logger);
    this.unsaved.delete(name);
    this.emit(entry.claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
  }
}
