import type { KubeConfig, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { Informer } from '../cache/informer.js';
import type { Clock } from '../clock/clock.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Logger } from '../logging/logger.js';
import { labelsError } from '../leaderelection/lease-labels.js';
import type { MetricsSink } from '../metrics/sink.js';
import type { RateLimiter } from '../workqueue/rate-limiters.js';
import type { ProvisionControllerClient } from './client.js';
import type { Provisioner } from './provisioner.js';

/** Defaults of the Go library (v13), by the same names. */
export const DEFAULTS = {
  /** `DefaultResyncPeriod`: 15 minutes. */
  resyncPeriodMs: 15 * 60_000,
  /** `DefaultThreadiness`: 4 claim workers and 4 volume workers. */
  threadiness: 4,
  /** `DefaultExponentialBackOffOnError`. */
  exponentialBackOffOnError: true,
  /** `DefaultCreateProvisionedPVRetryCount`. */
  createProvisionedPVRetryCount: 5,
  /** `DefaultCreateProvisionedPVInterval`: 10 s. */
  createProvisionedPVIntervalMs: 10_000,
  /** `DefaultFailedProvisionThreshold`. */
  failedProvisionThreshold: 15,
  /** `DefaultFailedDeleteThreshold`. */
  failedDeleteThreshold: 15,
  /** `DefaultLeaderElection`. */
  leaderElection: true,
  /** `DefaultLeaseDuration`: 15 s. */
  leaseDurationMs: 15_000,
  /** `DefaultRenewDeadline`: 10 s. */
  renewDeadlineMs: 10_000,
  /** `DefaultRetryPeriod`: 2 s. */
  retryPeriodMs: 2_000,
  /** The Go library does not set client-go's `ReleaseOnCancel`: a stopped leader leaves the Lease to expire. */
  releaseOnCancel: false,
  /** `DefaultRetryIntervalMax`: the slow-retry window after an infeasible error, 5 minutes. */
  retryIntervalMaxMs: 5 * 60_000,
  /** `DefaultAddFinalizer`. */
  addFinalizer: false,
} as const;

/** Options of {@link ProvisionController}. Every option but the first three is optional, with the Go default. */
export interface ProvisionControllerOptions {
  /** How to reach the API server. */
  kubeConfig: KubeConfig;
  /** The provisioner name claims and classes refer to, in `vendor/name` form, e.g. `example.com/hostpath`. */
  provisionerName: string;
  /** The implementation. */
  provisioner: Provisioner;
  /** Informer resync: every claim and volume is looked at again this often. Default 15 min. */
  resyncPeriodMs?: number;
  /** Number of claim workers, and of volume workers. Default 4. */
  threadiness?: number;
  /**
   * Back off exponentially on errors: per item 15 s doubling to 1000 s (else a constant 15 s), combined with a
   * shared 10 per second, burst 100 bucket. Ignored when `rateLimiter` is set. Default true.
   */
  exponentialBackOffOnError?: boolean;
  /**
   * Retry limiter for both the claim and the volume queue (one shared instance, as in Go), for example
   * `backoffRateLimiter({ baseMs: 1_000, maxMs: 300_000 })`. Default: see above.
   */
  rateLimiter?: RateLimiter<string>;
  /** Attempts to save a provisioned PV before the volume is deleted again. Default 5 (0 means the default, as in Go). */
  createProvisionedPVRetryCount?: number;
  /** Interval between those attempts, in ms. Default 10 000. */
  createProvisionedPVIntervalMs?: number;
  /**
   * When set, PVs that cannot be saved are kept in memory and retried in the background with this limiter,
   * forever, and the volume is never deleted (the Go library's queue store). Exclusive with the two above.
   */
  createProvisionedPVLimiter?: RateLimiter<string>;
  /** Retries of a failing claim before giving up until its next change or resync; 0 retries forever. Default 15. */
  failedProvisionThreshold?: number;
  /** Same for deleting volumes. Default 15. */
  failedDeleteThreshold?: number;
  /** Run only while holding a Lease named after the provisioner. Default true. */
  leaderElection?: boolean;
  /** Namespace of the Lease. Default: env `POD_NAMESPACE`, else the service account namespace, else `default`. */
  leaderElectionNamespace?: string;
  /** Lease duration, ms. Default 15 000. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before giving up, ms. Default 10 000. */
  renewDeadlineMs?: number;
  /** How often candidates retry and the leader renews, ms. Default 2 000. */
  retryPeriodMs?: number;
  /**
   * client-go's `ReleaseOnCancel`: when `run`'s signal aborts, the leader gives the Lease up (empty holder,
   * `leaseDurationSeconds` 1, transitions kept) once its in-flight operations have finished, so another replica takes
   * over at once instead of after the lease duration. Also attempted after a lost leadership. Default false, as the
   * Go library; our binaries turn it on.
   */
  releaseOnCancel?: boolean;
  /**
   * Labels put on the Lease, merged into its labels on every create and update while this replica leads (the CSI
   * sidecars' `--leader-election-labels`; the Go library has no such option). Default none.
   */
  leaderElectionLabels?: Readonly<Record<string, string>>;
  /** Leader election identity and event source host suffix. Default `<hostname>_<uuid>`. */
  identity?: string;
  /**
   * How long a claim whose provisioning failed as infeasible waits before the next attempt, ms. Default 5 min.
   * (In the Go library this option has no effect because of an ordering bug; here it does.)
   */
  retryIntervalMaxMs?: number;
  /** More names treated as this provisioner's (for migrated in-tree plugins). Default none. */
  additionalProvisionerNames?: readonly string[];
  /** Manage the `external-provisioner.volume.kubernetes.io/finalizer` finalizer on PVs. Default false. */
  addFinalizer?: boolean;
  /**
   * Timeout of one claim operation (provision and save), ms; 0 = none. Default 0. The operation's signal then aborts
   * with a `TimeoutError`, and what the provisioner throws is a failure as any other (a `ProvisioningFailed` Warning,
   * a retry, a `ProvisioningError`'s state kept); only the controller stopping interrupts without a Warning.
   */
  provisionTimeoutMs?: number;
  /**
   * Timeout of one volume operation, ms; 0 = none. Default 0. As `provisionTimeoutMs`: a timed-out deletion is a
   * `VolumeFailedDelete` Warning and a retry.
   */
  deletionTimeoutMs?: number;
  /** PV name for a claim. Default `pvc-<claim uid>`. */
  volumeName?: (claim: V1PersistentVolumeClaim) => string;
  /** Where metrics go. Default: discarded. */
  metrics?: MetricsSink;
  /** Where logs go. Default: discarded. */
  logger?: Logger;
  /** Time source. Default: the real clock. */
  clock?: Clock;

  /**
   * The client of the controller's PV and claim writes (save a PV, patch its finalizer, delete it, reschedule a
   * claim), e.g. one made with other client options, or one shared with the embedding program. Informers, Events and
   * the Lease have their own options and clients. Default `makeProvisionControllerClient(kubeConfig)`: through the
   * shared keep-alive agent of `kubeConfig` and its client-side rate limit.
   */
  client?: ProvisionControllerClient;
  /**
   * Where the controller records its Events (on claims, volumes and the Lease), e.g. the program's one recorder that
   * its own Events go through too. A recorder given here is the caller's: the controller records to it but never
   * shuts it down or flushes it; do that after `run` settled. Default: the controller's own, with source component
   * `<provisionerName>_<identity>` (as the Go library), writes at low priority under the client-side rate limit,
   * `2 × threadiness` (at least 8) in flight, shut down and flushed when `run` ends.
   */
  eventRecorder?: EventRecorder;
  /**
   * A claim informer to share with the embedding program (the Go library's `ClaimsInformer`): the controller adds its
   * handlers and reads its cache, so the claims are listed and watched once. It must have the `uid` index, as
   * `informerFor(kubeConfig, 'PersistentVolumeClaim')` has (the constructor throws otherwise). As in Go, the caller
   * runs it: the controller neither starts nor stops it, and its workers start once it has synced. Its resync is its
   * own (`resyncPeriodMs` applies to the controller's own informers). Default: the controller's own, run while it
   * leads, with `managedFields` dropped from the cache.
   */
  claimsInformer?: Informer<V1PersistentVolumeClaim>;
  /** A volume informer to share (the Go library's `VolumesInformer`), on the same terms as `claimsInformer`. Default: the controller's own. */
  volumesInformer?: Informer<V1PersistentVolume>;
  /**
   * A StorageClass informer to share (the Go library's `ClassesInformer`), on the same terms as `claimsInformer`;
   * the controller only reads its cache. Default: the controller's own.
   */
  classesInformer?: Informer<V1StorageClass>;

  /** Classic constructor argument: sets both `failedProvisionThreshold` and `failedDeleteThreshold`. */
  failedRetryThreshold?: number;
  /** Classic constructor argument: alias of `leaseDurationMs`. */
  leasePeriodMs?: number;
  /**
   * Classic constructor argument of the per-claim lock design, which is not ported (one Lease per provisioner
   * replaced it upstream). Accepted and ignored.
   */
  termLimitMs?: number;
}

/** The options that stay unset when not given. */
type Unset =
  | 'rateLimiter'
  | 'leaderElectionLabels'
  | 'createProvisionedPVLimiter'
  | 'client'
  | 'eventRecorder'
  | 'claimsInformer'
  | 'volumesInformer'
  | 'classesInformer';

/** Options with every default filled in. */
export type ResolvedOptions = Required<
  Omit<
    ProvisionControllerOptions,
    Unset | 'identity' | 'leaderElectionNamespace' | 'failedRetryThreshold' | 'leasePeriodMs' | 'termLimitMs'
  >
> &
  Pick<ProvisionControllerOptions, Unset> & { identity: string; leaderElectionNamespace: string };

/**
 * A provisioner name: a qualified name with a domain prefix (`vendor.example/name`, the classic form), or a
 * domain name with at least one dot (`hostpath.csi.k8s.io`, the form CSI drivers use).
 */
const PROVISIONER_NAME =
  /^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+)$/;

function nonNegative(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
    throw new RangeError(`ProvisionController: ${name} must be a number >= 0, got ${value}`);
  }
}

/** Checks options and fills in defaults; throws a clear error for anything invalid. */
export function resolveOptions(
  o: ProvisionControllerOptions,
  defaults: { identity: () => string; namespace: () => string },
  silent: { logger: Logger; metrics: MetricsSink; clock: Clock },
): ResolvedOptions {
  if (typeof o.provisionerName !== 'string' || o.provisionerName === '') {
    throw new TypeError('ProvisionController: provisionerName is required, e.g. "example.com/hostpath"');
  }
  if (!PROVISIONER_NAME.test(o.provisionerName)) {
    throw new TypeError(
      `ProvisionController: provisionerName "${o.provisionerName}" must have the form <vendor domain>/<name>, e.g. "example.com/hostpath" (or be a CSI driver name like "hostpath.csi.k8s.io")`,
    );
  }
  for (const extra of o.additionalProvisionerNames ?? []) {
    if (!PROVISIONER_NAME.test(extra)) {
      throw new TypeError(
        `ProvisionController: additional provisioner name "${extra}" must have the form <vendor domain>/<name>`,
      );
    }
  }
  if (
    o.provisioner === undefined ||
    typeof o.provisioner.provision !== 'function' ||
    typeof o.provisioner.delete !== 'function'
  ) {
    throw new TypeError(
      'ProvisionController: provisioner must implement provision(options, signal) and delete(volume, signal)',
    );
  }
  if (o.kubeConfig === undefined) throw new TypeError('ProvisionController: kubeConfig is required');
  for (const k of [
    'resyncPeriodMs',
    'createProvisionedPVRetryCount',
    'createProvisionedPVIntervalMs',
    'failedProvisionThreshold',
    'failedDeleteThreshold',
    'failedRetryThreshold',
    'retryIntervalMaxMs',
    'provisionTimeoutMs',
    'deletionTimeoutMs',
  ] as const) {
    nonNegative(k, o[k]);
  }
  const threadiness = o.threadiness ?? DEFAULTS.threadiness;
  if (!Number.isInteger(threadiness) || threadiness < 1) {
    throw new RangeError(`ProvisionController: threadiness must be a whole number >= 1, got ${threadiness}`);
  }
  if (o.createProvisionedPVLimiter !== undefined) {
    if (o.createProvisionedPVRetryCount !== undefined) {
      throw new TypeError(
        'ProvisionController: createProvisionedPVLimiter cannot be used together with createProvisionedPVRetryCount',
      );
    }
    if (o.createProvisionedPVIntervalMs !== undefined) {
      throw new TypeError(
        'ProvisionController: createProvisionedPVLimiter cannot be used together with createProvisionedPVIntervalMs',
      );
    }
  }
  const leaseDurationMs = o.leaseDurationMs ?? o.leasePeriodMs ?? DEFAULTS.leaseDurationMs;
  const renewDeadlineMs = o.renewDeadlineMs ?? DEFAULTS.renewDeadlineMs;
  const retryPeriodMs = o.retryPeriodMs ?? DEFAULTS.retryPeriodMs;
  const leaderElection = o.leaderElection ?? DEFAULTS.leaderElection;
  if (leaderElection) {
    if (!(leaseDurationMs > renewDeadlineMs)) {
      throw new RangeError(
        `ProvisionController: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`,
      );
    }
    if (!(renewDeadlineMs > 1.2 * retryPeriodMs) || retryPeriodMs <= 0) {
      throw new RangeError(
        `ProvisionController: renewDeadlineMs (${renewDeadlineMs}) must be greater than 1.2 × retryPeriodMs (${retryPeriodMs}), and retryPeriodMs > 0`,
      );
    }
  }
  const labelError = o.leaderElectionLabels === undefined ? undefined : labelsError(o.leaderElectionLabels);
  if (labelError !== undefined) throw new TypeError(`ProvisionController: leaderElectionLabels: ${labelError}`);
  if (o.claimsInformer !== undefined) {
    try {
      o.claimsInformer.store.byIndex('uid', '');
    } catch {
      throw new TypeError(
        'ProvisionController: claimsInformer must have the "uid" index (informerFor(kubeConfig, "PersistentVolumeClaim") has it)',
      );
    }
  }
  const threshold = o.failedRetryThreshold;
  return {
    kubeConfig: o.kubeConfig,
    provisionerName: o.provisionerName,
    provisioner: o.provisioner,
    resyncPeriodMs: o.resyncPeriodMs ?? DEFAULTS.resyncPeriodMs,
    threadiness,
    exponentialBackOffOnError: o.exponentialBackOffOnError ?? DEFAULTS.exponentialBackOffOnError,
    rateLimiter: o.rateLimiter,
    // 0 is the default too, as in Go (which applies it when the count is still 0): no attempt at all is no choice.
    createProvisionedPVRetryCount: o.createProvisionedPVRetryCount || DEFAULTS.createProvisionedPVRetryCount,
    createProvisionedPVIntervalMs: o.createProvisionedPVIntervalMs ?? DEFAULTS.createProvisionedPVIntervalMs,
    createProvisionedPVLimiter: o.createProvisionedPVLimiter,
    failedProvisionThreshold: o.failedProvisionThreshold ?? threshold ?? DEFAULTS.failedProvisionThreshold,
    failedDeleteThreshold: o.failedDeleteThreshold ?? threshold ?? DEFAULTS.failedDeleteThreshold,
    leaderElection,
    leaderElectionNamespace: o.leaderElectionNamespace ?? defaults.namespace(),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    releaseOnCancel: o.releaseOnCancel ?? DEFAULTS.releaseOnCancel,
    leaderElectionLabels: o.leaderElectionLabels,
    identity: o.identity ?? defaults.identity(),
    retryIntervalMaxMs: o.retryIntervalMaxMs ?? DEFAULTS.retryIntervalMaxMs,
    additionalProvisionerNames: o.additionalProvisionerNames ?? [],
    addFinalizer: o.addFinalizer ?? DEFAULTS.addFinalizer,
    provisionTimeoutMs: o.provisionTimeoutMs ?? 0,
    deletionTimeoutMs: o.deletionTimeoutMs ?? 0,
    volumeName: o.volumeName ?? ((claim) => `pvc-${claim.metadata?.uid ?? ''}`),
    metrics: o.metrics ?? silent.metrics,
    logger: o.logger ?? silent.logger,
    clock: o.clock ?? silent.clock,
    client: o.client,
    eventRecorder: o.eventRecorder,
    claimsInformer: o.claimsInformer,
    volumesInformer: o.volumesInformer,
    classesInformer: o.classesInformer,
  };
}
