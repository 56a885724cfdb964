/** The options every provisioner binary has, in the sig-storage sidecars' terms, and their defaults. */
import { DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_QPS } from '../client/rate-limit/client-rate-limit.js';
import { DEFAULTS } from '../controller/options.js';

/** Where the metrics and health endpoint listens. */
export interface EndpointAddress {
  /** Address; `0.0.0.0` for every IPv4 address. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
}

/**
 * The options the runtime acts on, as parsed from the command line (by the runtime's flags or by the binary's own
 * parser). Each is optional; the comment names the flag of the runtime's command line and the default.
 */
export interface CommonOptions {
  /**
   * `--kubeconfig`: kubeconfig file, or a list separated by `:`. Default: `$KUBECONFIG` (when not empty), else the
   * in-cluster service account, else `~/.kube/config`.
   */
  kubeconfig?: string | undefined;
  /** `--leader-election`: run only while holding the Lease `<provisioner name with / as ->`. Default true. */
  leaderElection?: boolean | undefined;
  /**
   * `--leader-election-namespace`: namespace of the Lease. Default the library's: `$POD_NAMESPACE`, else the service
   * account's namespace, else `default`.
   */
  leaderElectionNamespace?: string | undefined;
  /** `--leader-election-lease-duration`, in ms. Default 15 000. */
  leaseDurationMs?: number | undefined;
  /** `--leader-election-renew-deadline`, in ms. Default 10 000. */
  renewDeadlineMs?: number | undefined;
  /** `--leader-election-retry-period`, in ms. Default 2 000. */
  retryPeriodMs?: number | undefined;
  /**
   * `--leader-election-release-on-cancel`: on a requested stop, give the Lease up once in-flight operations finished
   * (client-go's `ReleaseOnCancel`). Default true (the library's own default is false, as the Go library's).
   */
  releaseOnCancel?: boolean | undefined;
  /**
   * `--leader-election-labels`: labels put on the Lease while this replica leads (the controller's
   * `leaderElectionLabels`). Default none.
   */
  leaderElectionLabels?: Readonly<Record<string, string>> | undefined;
  /** `--http-endpoint`: serve `/metrics`, `/healthz`, `/readyz` and `/healthz/leader-election` there. Default: not served. */
  httpEndpoint?: EndpointAddress | undefined;
  /**
   * `--metrics-path`: the path of the metrics on the endpoint. Default `/metrics`. A setup's own `metricsPath` wins
   * over it.
   */
  metricsPath?: string | undefined;
  /**
   * `--kube-api-qps`: client-side limit of API requests per second, as client-go's `rest.Config.QPS`: 0 means 5, a
   * negative value (or Infinity) means no limit. Default 5.
   */
  kubeApiQps?: number | undefined;
  /** `--kube-api-burst`: requests that may go at once before the QPS applies; 0 means 10. Default 10. */
  kubeApiBurst?: number | undefined;
  /** `--worker-threads`: claim workers, and as many volume workers (the controller's `threadiness`). Default 4. */
  workerThreads?: number | undefined;
  /** `--logging-format`: `text` (klog's lines) or `json` (Kubernetes' JSON log format). Default `text`. */
  loggingFormat?: 'text' | 'json' | undefined;
  /** `-v`: log verbosity, as klog's: 4 and up logs debug messages, 5 and up trace. Default 0. */
  verbosity?: number | undefined;
}

/** {@link CommonOptions} with every default filled in; those without a default may still be undefined. */
export type ResolvedCommonOptions = Required<
  Omit<CommonOptions, 'kubeconfig' | 'leaderElectionNamespace' | 'leaderElectionLabels' | 'httpEndpoint'>
> &
  Pick<CommonOptions, 'kubeconfig' | 'leaderElectionNamespace' | 'leaderElectionLabels' | 'httpEndpoint'>;

/** The defaults of {@link CommonOptions}. */
export const COMMON_DEFAULTS = {
  leaderElection: DEFAULTS.leaderElection,
  leaseDurationMs: DEFAULTS.leaseDurationMs,
  renewDeadlineMs: DEFAULTS.renewDeadlineMs,
  retryPeriodMs: DEFAULTS.retryPeriodMs,
  releaseOnCancel: true,
  metricsPath: '/metrics',
  kubeApiQps: DEFAULT_CLIENT_QPS,
  kubeApiBurst: DEFAULT_CLIENT_BURST,
  workerThreads: DEFAULTS.threadiness,
  loggingFormat: 'text',
  verbosity: 0,
} as const satisfies Omit<
  ResolvedCommonOptions,
  'kubeconfig' | 'leaderElectionNamespace' | 'leaderElectionLabels' | 'httpEndpoint'
>;

/** `options` over the binary's `defaults` over {@link COMMON_DEFAULTS}; an undefined option takes the default. */
export function resolveCommonOptions(options: CommonOptions, defaults: CommonOptions = {}): ResolvedCommonOptions {
  const resolved: Record<string, unknown> = { ...COMMON_DEFAULTS };
  for (const layer of [defaults, options]) {
    for (const [key, value] of Object.entries(layer)) if (value !== undefined) resolved[key] = value;
  }
  return resolved as ResolvedCommonOptions;
}

/** Every name of {@link CommonOptions} (as a record, so that the compiler says when one is missing). */
const COMMON_OPTION_NAMES: Readonly<Record<keyof CommonOptions, true>> = {
  kubeconfig: true,
  leaderElection: true,
  leaderElectionNamespace: true,
  leaseDurationMs: true,
  renewDeadlineMs: true,
  retryPeriodMs: true,
  releaseOnCancel: true,
  leaderElectionLabels: true,
  httpEndpoint: true,
  metricsPath: true,
  kubeApiQps: true,
  kubeApiBurst: true,
  workerThreads: true,
  loggingFormat: true,
  verbosity: true,
};

/**
 * The {@link CommonOptions} among the options a binary's own parser produced, which name them as
 * {@link CommonOptions} does (`leaderElection`, `httpEndpoint`, …), with `overrides` over them: for an option the
 * binary has no flag for, or words differently (a `--debug` that stands for a verbosity).
 */
export function pickCommonOptions(options: CommonOptions, overrides: CommonOptions = {}): CommonOptions {
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(COMMON_OPTION_NAMES) as (keyof CommonOptions)[])
    if (Object.hasOwn(options, name)) picked[name] = options[name];
  return { ...(picked as CommonOptions), ...overrides };
}
