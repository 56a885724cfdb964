import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createRequire } from 'node:module';

/**
 * How long a lease lasts without renewal, in ms: 15 s (sig-storage-lib-external-provisioner's `DefaultLeaseDuration`,
 * also client-go's recommendation for core components). The holder writes it into the record in whole seconds; the
 * other candidates may take the lease once the record has not changed for that long since they last saw it change.
 */
export const DEFAULT_LEASE_DURATION_MS = 15_000;

/** How long the leader keeps retrying a renewal before it gives up leadership, in ms: 10 s (Go library default). */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;

/** Pause between attempts to acquire or renew, in ms: 2 s (Go library default; the CSI sidecars use 5 s). */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/**
 * client-go's `JitterFactor`: acquire attempts are spaced by `retryPeriod × (1 + random × 1.2)`, and the renew
 * deadline must exceed `1.2 × retryPeriod` so at least one retry fits.
 */
export const JITTER_FACTOR = 1.2;

/**
 * How long past the lease duration a leader that has stopped renewing still reports healthy, in ms: 20 s, the
 * tolerance the CSI sidecars give their `/healthz/leader-election` check.
 */
export const DEFAULT_HEALTH_TOLERANCE_MS = 20_000;

/** The three timings of a leader election, in milliseconds. */
export interface LeaderElectionTimings {
  /** See {@link DEFAULT_LEASE_DURATION_MS}. Must exceed `renewDeadlineMs`. */
  leaseDurationMs: number;
  /** See {@link DEFAULT_RENEW_DEADLINE_MS}. Must exceed `JITTER_FACTOR × retryPeriodMs`. */
  renewDeadlineMs: number;
  /** See {@link DEFAULT_RETRY_PERIOD_MS}. Must be greater than zero. */
  retryPeriodMs: number;
}

/** The Go library's timings: 15 s / 10 s / 2 s. */
export const DEFAULT_TIMINGS: Readonly<LeaderElectionTimings> = Object.freeze({
  leaseDurationMs: DEFAULT_LEASE_DURATION_MS,
  renewDeadlineMs: DEFAULT_RENEW_DEADLINE_MS,
  retryPeriodMs: DEFAULT_RETRY_PERIOD_MS,
});

/** Thrown for an invalid leader election configuration (timings, identity, lease name). */
export class LeaderElectionConfigError extends Error {
  override readonly name = 'LeaderElectionConfigError';
}

function requirePositive(field: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new LeaderElectionConfigError(`${field} must be a finite number greater than zero (got ${String(value)})`);
  }
}

/**
 * Checks timings and identity as client-go's `NewLeaderElector` does: all three durations greater than zero,
 * `leaseDurationMs > renewDeadlineMs`, `renewDeadlineMs > JITTER_FACTOR × retryPeriodMs`, and a non-empty identity.
 *
 * @param config - the timings (no defaults are applied here) and the candidate's identity.
 * @throws LeaderElectionConfigError naming the first rule broken, with the values.
 */
export function validateLeaderElectionConfig(config: LeaderElectionTimings & { identity: string }): void {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs, identity } = config;
  requirePositive('leaseDurationMs', leaseDurationMs);
  requirePositive('renewDeadlineMs', renewDeadlineMs);
  requirePositive('retryPeriodMs', retryPeriodMs);
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new LeaderElectionConfigError(
      `leaseDurationMs must be greater than renewDeadlineMs (got leaseDurationMs ${leaseDurationMs} <= renewDeadlineMs ${renewDeadlineMs})`,
    );
  }
  const minRenew = JITTER_FACTOR * retryPeriodMs;
  if (renewDeadlineMs <= minRenew) {
    throw new LeaderElectionConfigError(
      `renewDeadlineMs must be greater than ${JITTER_FACTOR} × retryPeriodMs (got renewDeadlineMs ${renewDeadlineMs} <= ${minRenew})`,
    );
  }
  if (typeof identity !== 'string' || identity.trim() === '') {
    throw new LeaderElectionConfigError('identity must not be empty');
  }
}

/**
 * Fills in defaults ({@link DEFAULT_TIMINGS}) for the timings not given, then validates them.
 *
 * @param timings - any of the three timings; `undefined` fields take the Go library's defaults.
 * @param identity - the candidate's identity, validated with the timings.
 * @throws LeaderElectionConfigError see {@link validateLeaderElectionConfig}.
 */
export function resolveTimings(timings: Partial<LeaderElectionTimings>, identity: string): LeaderElectionTimings {
  const resolved: LeaderElectionTimings = {
    leaseDurationMs: timings.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: timings.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: timings.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
  };
  validateLeaderElectionConfig({ ...resolved, identity });
  return resolved;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME_LENGTH = 253;

/**
 * The Lease name for a provisioner, as the Go library derives it: the provisioner name with every `/` replaced by
 * `-` (`example.com/hostpath` → `example.com-hostpath`).
 *
 * Fix over Go: the Go library does no other check, so a provisioner name that is not a valid object name (upper
 * case, `_`, too long) only fails later, when creating the Lease. Here it fails at once with a clear message.
 *
 * @throws LeaderElectionConfigError when the result is not a lowercase RFC 1123 subdomain of at most 253 characters.
 */
export function leaseName(provisionerName: string): string {
  const name = provisionerName.replaceAll('/', '-');
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !DNS1123_SUBDOMAIN.test(name)) {
    throw new LeaderElectionConfigError(
      `cannot use provisioner name ${JSON.stringify(provisionerName)} for leader election: the Lease name ` +
        `${JSON.stringify(name)} is not a valid object name (lowercase letters, digits, '-' and '.', starting and ` +
        `ending with a letter or digit, at most ${MAX_NAME_LENGTH} characters)`,
    );
  }
  return name;
}

/**
 * A candidate identity unique per process: host name, `_`, a random UUID (the Go library's `hostname_uuid`).
 * On Kubernetes the host name is the pod name. It is a `ProvisionController`'s `identity` when none is given; a
 * program that makes the controller's `eventRecorder` itself takes one to name both the Lease holder and the Events'
 * source (`<provisionerName>_<identity>`, as the controller's own recorder).
 */
export function defaultIdentity(): string {
  // node:crypto through `require`: an ES module import reads all its exports, and its `webcrypto` getter loads
  // Node.js's Web Crypto modules (about 1.4 MiB of RSS) that nothing here uses.
  const { randomUUID } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return `${hostname()}_${randomUUID()}`;
}

/** Where a pod's service account namespace is mounted. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Inputs of {@link defaultNamespace}, replaceable in tests. */
export interface DefaultNamespaceSources {
  /** Environment to read `POD_NAMESPACE` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** File holding the namespace. Default {@link SERVICE_ACCOUNT_NAMESPACE_FILE}. */
  namespaceFile?: string;
}

/**
 * The namespace for the Lease: `POD_NAMESPACE` when set and non-empty, else the service account's namespace file
 * (in a pod), else `default`.
 *
 * @param sources - see {@link DefaultNamespaceSources}.
 */
export function defaultNamespace(sources: DefaultNamespaceSources = {}): string {
  const fromEnv = (sources.env ?? process.env).POD_NAMESPACE?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    const fromFile = readFileSync(sources.namespaceFile ?? SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim();
    if (fromFile !== '') return fromFile;
  } catch {
    // not in a pod (or unreadable): fall through
  }
  return 'default';
}
