/**
 * Command line of `kprov-hostpath`: flags (parsed with `node:util` parseArgs) with environment fallbacks.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PV_DIR } from './provisioner.js';

/** Default provisioner name, as in the Go example. */
export const DEFAULT_PROVISIONER_NAME = 'example.com/hostpath';

/** The parsed configuration of the program. */
export interface CliOptions {
  /** Kubeconfig file; undefined means in-cluster, else `~/.kube/config`. */
  kubeconfig: string | undefined;
  provisionerName: string;
  pvDir: string;
  nodeName: string;
  hostRoot: string;
  leaderElection: boolean;
  /** Undefined: the library's default (`POD_NAMESPACE`, the service account's namespace, `default`). */
  leaderElectionNamespace: string | undefined;
  /** Lease timings, ms (defaults 15 000 / 10 000 / 2 000, the Go library's). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Give the Lease up on a requested stop (client-go's `ReleaseOnCancel`); default true. */
  releaseOnCancel: boolean;
  /** Where to serve metrics and health; undefined: not served. */
  httpEndpoint: { host: string; port: number } | undefined;
  loggingFormat: 'text' | 'json';
  /** klog-style verbosity: 0 logs info, 4 and up debug, 5 and up trace. */
  verbosity: number;
}

/** What {@link parseOptions} found: options to run with, a request for help, or an error to print. */
export type ParseResult =
  | { kind: 'run'; options: CliOptions }
  | { kind: 'help'; text: string }
  | { kind: 'error'; message: string; exitCode: number };

/** An error in the command line; the message names the flag. `exitCode` 2 for syntax (as Go's flag package), else 1. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The help text: every flag with its environment fallback and default. */
export const HELP = `Usage: kprov-hostpath [flags]

A hostPath dynamic provisioner: each claim of a StorageClass naming this provisioner gets a directory
<pv-dir>/<pv name> on this node, served as a hostPath PersistentVolume.

Flags (a flag wins over its environment variable):
  --kubeconfig FILE                  kubeconfig file (env KUBECONFIG); default: in-cluster config, else ~/.kube/config
  --provisioner-name NAME            provisioner name StorageClasses refer to (default "${DEFAULT_PROVISIONER_NAME}")
  --pv-dir DIR                       directory on the node holding the volumes (env PV_DIR, default "${DEFAULT_PV_DIR}")
  --node-name NAME                   this node's name, the provisioner's identity (env NODE_NAME, required;
                                     in a pod, from the downward API field spec.nodeName)
  --host-root DIR                    where this process sees the node's root filesystem (env HOST_ROOT, default "/")
  --leader-election                  run only while holding the Lease "<provisioner name with / as ->" (default true)
  --no-leader-election               do not use leader election
  --leader-election-namespace NS     namespace of the Lease (default: env POD_NAMESPACE, else the service
                                     account's namespace, else "default")
  --leader-election-lease-duration D how long a Lease lasts without renewal (default 15s)
  --leader-election-renew-deadline D how long the leader retries renewing before it gives up (default 10s)
  --leader-election-retry-period D   how often candidates try to acquire and the leader renews (default 2s)
  --leader-election-release-on-cancel
                                     on SIGTERM or SIGINT, give the Lease up once in-flight operations finished,
                                     so another replica takes over at once (default true)
  --no-leader-election-release-on-cancel
                                     leave the Lease to expire on SIGTERM or SIGINT, as the Go library does
  --http-endpoint ADDR:PORT          serve /metrics, /healthz, /readyz and /healthz/leader-election there,
                                     e.g. ":8080" (default: off)
  --logging-format text|json         log format; json is shaped like klog's (default "text")
  -v, --v N                          log verbosity: 4 and up logs debug messages (default 0)
  -h, --help                         print this help and exit
`;

const FLAGS = {
  kubeconfig: { type: 'string' },
  'provisioner-name': { type: 'string' },
  'pv-dir': { type: 'string' },
  'node-name': { type: 'string' },
  'host-root': { type: 'string' },
  'leader-election': { type: 'boolean' },
  'no-leader-election': { type: 'boolean' },
  'leader-election-namespace': { type: 'string' },
  'leader-election-lease-duration': { type: 'string' },
  'leader-election-renew-deadline': { type: 'string' },
  'leader-election-retry-period': { type: 'string' },
  'leader-election-release-on-cancel': { type: 'boolean' },
  'no-leader-election-release-on-cancel': { type: 'boolean' },
  'http-endpoint': { type: 'string' },
  'logging-format': { type: 'string' },
  v: { type: 'string', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Go flag style `--flag=true|false` for booleans, and klog's `-v=N`, rewritten for parseArgs. */
function normalizeArgs(argv: readonly string[]): string[] {
  return argv.map((arg) => {
    const bool = /^--(leader-election|leader-election-release-on-cancel)=(true|false)$/.exec(arg);
    if (bool !== null) return bool[2] === 'true' ? `--${bool[1]}` : `--no-${bool[1]}`;
    if (arg.startsWith('-v=')) return `--v=${arg.slice(3)}`;
    return arg;
  });
}

/** A flag's value, else the environment variable's (an empty value counts as unset), else undefined. */
function pick(flag: string | undefined, env: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  return env === undefined || env === '' ? undefined : env;
}

function absolute(flag: string, value: string): string {
  if (!path.isAbsolute(value)) throw new UsageError(`${flag} must be an absolute path, got "${value}"`);
  return value;
}

/** `ADDR:PORT`, `:PORT` (every address) or `[IPv6]:PORT`. */
export function parseEndpoint(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !Number.isInteger(port) || port > 65_535) {
    throw new UsageError(`--http-endpoint must be ADDR:PORT (e.g. ":8080" or "127.0.0.1:8080"), got "${value}"`);
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`15s`, `500ms`, `1m30s`) in ms, greater than zero. */
export function parseDuration(flag: string, value: string | undefined, defaultMs: number): number {
  if (value === undefined) return defaultMs;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(value)) {
    throw new UsageError(`${flag} must be a duration such as "15s", "500ms" or "1m30s", got "${value}"`);
  }
  let ms = 0;
  for (const [, n, , unit] of value.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g))
    ms += Number(n) * (UNIT_MS[unit ?? 's'] ?? 1000);
  if (ms <= 0) throw new UsageError(`${flag} must be greater than zero, got "${value}"`);
  return ms;
}

/** The three lease timings, checked as client-go checks them, with messages naming the flags. */
function parseTimings(values: Record<string, string | boolean | undefined>): {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
} {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const leaseDurationMs = parseDuration(
    '--leader-election-lease-duration',
    str('leader-election-lease-duration'),
    15_000,
  );
  const renewDeadlineMs = parseDuration(
    '--leader-election-renew-deadline',
    str('leader-election-renew-deadline'),
    10_000,
  );
  const retryPeriodMs = parseDuration('--leader-election-retry-period', str('leader-election-retry-period'), 2_000);
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new UsageError('--leader-election-lease-duration must be longer than --leader-election-renew-deadline');
  }
  if (!(renewDeadlineMs > 1.2 * retryPeriodMs)) {
    throw new UsageError('--leader-election-renew-deadline must be longer than 1.2 × --leader-election-retry-period');
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

function parseVerbosity(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value)) throw new UsageError(`-v must be a non-negative integer, got "${value}"`);
  return Number(value);
}

function parseFormat(value: string | undefined): 'text' | 'json' {
  if (value === undefined || value === 'text' || value === 'json') return value ?? 'text';
  throw new UsageError(`--logging-format must be "text" or "json", got "${value}"`);
}

/**
 * Parses the command line and the environment. Throws a {@link UsageError} naming the flag for anything invalid,
 * including a missing node name.
 */
export function parseOptionsOrThrow(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({ args: normalizeArgs(argv), options: FLAGS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)} (see --help)`, 2);
  }
  if (values.help === true) return 'help';
  if (values['leader-election'] === true && values['no-leader-election'] === true) {
    throw new UsageError('--leader-election and --no-leader-election contradict each other');
  }
  if (values['leader-election-release-on-cancel'] === true && values['no-leader-election-release-on-cancel'] === true) {
    throw new UsageError(
      '--leader-election-release-on-cancel and --no-leader-election-release-on-cancel contradict each other',
    );
  }
  const provisionerName = values['provisioner-name'] ?? DEFAULT_PROVISIONER_NAME;
  if (provisionerName === '') throw new UsageError('--provisioner-name must not be empty');
  const pvDir = absolute('--pv-dir', pick(values['pv-dir'], env.PV_DIR) ?? DEFAULT_PV_DIR);
  if (path.posix.normalize(pvDir) === '/') throw new UsageError('--pv-dir must not be "/"');
  const namespace = values['leader-election-namespace'];
  if (namespace === '') throw new UsageError('--leader-election-namespace must not be empty');
  const options = {
    kubeconfig: pick(values.kubeconfig, env.KUBECONFIG),
    provisionerName,
    pvDir,
    hostRoot: absolute('--host-root', pick(values['host-root'], env.HOST_ROOT) ?? '/'),
    leaderElection: values['no-leader-election'] !== true,
    leaderElectionNamespace: namespace,
    ...parseTimings(values),
    releaseOnCancel: values['no-leader-election-release-on-cancel'] !== true,
    httpEndpoint: values['http-endpoint'] === undefined ? undefined : parseEndpoint(values['http-endpoint']),
    loggingFormat: parseFormat(values['logging-format']),
    verbosity: parseVerbosity(values.v),
  };
  // Checked last, so that a wrong flag is reported even where NODE_NAME is not set yet.
  const nodeName = pick(values['node-name'], env.NODE_NAME);
  if (nodeName === undefined) {
    throw new UsageError(
      'the node name is required: set the NODE_NAME environment variable (in a pod, from the downward API: ' +
        'env NODE_NAME valueFrom.fieldRef.fieldPath spec.nodeName) or pass --node-name',
    );
  }
  return { ...options, nodeName };
}

/** {@link parseOptionsOrThrow} as a result value, for callers that print and exit. */
export function parseOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  try {
    const options = parseOptionsOrThrow(argv, env);
    return options === 'help' ? { kind: 'help', text: HELP } : { kind: 'run', options };
  } catch (err) {
    if (err instanceof UsageError) return { kind: 'error', message: err.message, exitCode: err.exitCode };
    throw err;
  }
}
