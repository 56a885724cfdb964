/**
 * The runtime's common flags, named and defaulted as the sig-storage sidecars (external-provisioner and its
 * siblings) name them, and their reading into {@link CommonOptions}.
 */
import { labelsError } from '../leaderelection/lease-labels.js';
import { COMMON_DEFAULTS, type CommonOptions, type EndpointAddress } from './common-options.js';
import type { FlagTable } from './flag-table.js';
import { CommandLineError, type ParsedValue } from './go-flags.js';
import { leaseTimingProblem, longerThan, type LeaseTimings } from './lease-timing.js';

function positive(value: number): void {
  if (!(value > 0)) throw new Error('must be greater than zero');
}

/** `ADDR:PORT`, `:PORT` (every IPv4 address) or `[IPv6]:PORT`, port 0 to 65535; undefined when it is not one. */
export function parseEndpointAddress(text: string): EndpointAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65_535) return undefined;
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/**
 * The labels of `--leader-election-labels`, as the sidecars read them: `key:value` items separated by commas (an
 * empty text: none).
 *
 * @throws Error for an item that is not `key:value` (the sidecars' message), or a key or value the API server would
 *   refuse.
 */
export function parseLeaseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text === '') return labels;
  for (const item of text.split(',')) {
    const parts = item.split(':');
    if (parts.length !== 2) throw new Error(`malformed item in list of labels: ${item} (want key:value)`);
    labels[parts[0]!] = parts[1]!;
  }
  const error = labelsError(labels);
  if (error !== undefined) throw new Error(error);
  return labels;
}

function endpointCheck(text: string): void {
  if (text !== '' && parseEndpointAddress(text) === undefined)
    throw new Error('want ADDR:PORT, such as ":8080" or "127.0.0.1:8080"');
}

/** The flags of {@link CommonOptions}, by the sidecars' names, with the runtime's defaults. */
export const COMMON_FLAGS = {
  kubeconfig: {
    type: 'string',
    usage:
      'Path to the kubeconfig `file`; empty: $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.',
  },
  'leader-election': {
    type: 'boolean',
    default: COMMON_DEFAULTS.leaderElection,
    usage: 'Run only while holding the Lease named after the provisioner (its name with / as -).',
  },
  'leader-election-namespace': {
    type: 'string',
    usage: 'Namespace of the Lease; empty: $POD_NAMESPACE, else the service account\'s namespace, else "default".',
  },
  'leader-election-lease-duration': {
    type: 'duration',
    default: COMMON_DEFAULTS.leaseDurationMs,
    check: (value: number) => positive(value),
    usage: 'How long a Lease lasts without renewal.',
  },
  'leader-election-renew-deadline': {
    type: 'duration',
    default: COMMON_DEFAULTS.renewDeadlineMs,
    check: (value: number) => positive(value),
    usage: 'How long the leader retries renewing the Lease before it gives up.',
  },
  'leader-election-retry-period': {
    type: 'duration',
    default: COMMON_DEFAULTS.retryPeriodMs,
    check: (value: number) => positive(value),
    usage: 'How often candidates try to acquire the Lease and the leader renews it.',
  },
  'leader-election-release-on-cancel': {
    type: 'boolean',
    default: COMMON_DEFAULTS.releaseOnCancel,
    usage:
      'On SIGINT or SIGTERM, give the Lease up once in-flight operations finished, so that another replica takes over at once.',
  },
  'leader-election-labels': {
    type: 'string',
    check: (text: string) => {
      parseLeaseLabels(text);
    },
    usage:
      "The `labels` put on the Lease while this replica leads, as key:value items separated by commas, e.g. 'my-label:my-value,my-second-label:my-second-value'.",
  },
  'http-endpoint': {
    type: 'string',
    check: (text: string) => endpointCheck(text),
    usage:
      'The TCP network `address` of the HTTP server for metrics (/metrics) and health checks (/healthz, /readyz, /healthz/leader-election), e.g. ":8080"; empty: off. Only one of -metrics-address and -http-endpoint can be set.',
  },
  'metrics-address': {
    type: 'string',
    check: (text: string) => endpointCheck(text),
    usage:
      '(deprecated) The TCP network `address` of the HTTP server for metrics, the older name of -http-endpoint (it serves the same). Only one of -metrics-address and -http-endpoint can be set.',
  },
  'metrics-path': {
    type: 'string',
    default: COMMON_DEFAULTS.metricsPath,
    check: (text: string) => {
      if (!text.startsWith('/')) throw new Error('must start with "/"');
    },
    usage: 'The HTTP `path` where Prometheus metrics are served.',
  },
  'kube-api-qps': {
    type: 'float',
    default: COMMON_DEFAULTS.kubeApiQps,
    usage: 'Client-side limit of requests per second to the API server; 0: the default, negative: no limit.',
  },
  'kube-api-burst': {
    type: 'int',
    default: COMMON_DEFAULTS.kubeApiBurst,
    check: (n: number) => {
      if (n < 0) throw new Error('must not be negative');
    },
    usage: 'Requests to the API server that may go at once before the QPS limit applies; 0: the default.',
  },
  'worker-threads': {
    type: 'int',
    default: COMMON_DEFAULTS.workerThreads,
    check: (value: number) => positive(value),
    usage: 'Number of claim workers, and of volume workers.',
  },
  'logging-format': {
    type: 'string',
    default: COMMON_DEFAULTS.loggingFormat,
    check: (text: string) => {
      if (text !== 'text' && text !== 'json') throw new Error('want "text" or "json"');
    },
    usage: 'Log format: "text" (klog\'s lines) or "json" (one JSON object per line).',
  },
  v: {
    type: 'int',
    default: COMMON_DEFAULTS.verbosity,
    check: (n: number) => {
      if (n < 0) throw new Error('must not be negative');
    },
    usage: 'Log verbosity: 4 and up logs debug messages, 5 and up trace messages.',
  },
  version: {
    type: 'boolean',
    usage: 'Print the version and exit.',
  },
} as const satisfies FlagTable;

/** The flag of each common option that has one. */
const FLAG_OF: Readonly<Record<keyof CommonOptions, keyof typeof COMMON_FLAGS>> = {
  kubeconfig: 'kubeconfig',
  leaderElection: 'leader-election',
  leaderElectionNamespace: 'leader-election-namespace',
  leaseDurationMs: 'leader-election-lease-duration',
  renewDeadlineMs: 'leader-election-renew-deadline',
  retryPeriodMs: 'leader-election-retry-period',
  releaseOnCancel: 'leader-election-release-on-cancel',
  leaderElectionLabels: 'leader-election-labels',
  httpEndpoint: 'http-endpoint',
  metricsPath: 'metrics-path',
  kubeApiQps: 'kube-api-qps',
  kubeApiBurst: 'kube-api-burst',
  workerThreads: 'worker-threads',
  loggingFormat: 'logging-format',
  verbosity: 'v',
};

/** {@link COMMON_FLAGS} with a binary's own defaults, so that its help shows them. */
export function commonFlags(defaults: CommonOptions = {}): FlagTable {
  const table: Record<string, FlagTable[string]> = { ...COMMON_FLAGS };
  for (const [option, value] of Object.entries(defaults) as [keyof CommonOptions, unknown][]) {
    if (value === undefined) continue;
    const flag = FLAG_OF[option];
    let text = value;
    if (option === 'httpEndpoint') {
      const { host, port } = value as EndpointAddress;
      text = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    }
    if (option === 'leaderElectionLabels') {
      text = Object.entries(value as Record<string, string>)
        .map(([k, v]) => `${k}:${v}`)
        .join(',');
    }
    table[flag] = { ...table[flag], default: text } as FlagTable[string];
  }
  return table;
}

/** Options of {@link commonOptionsOf}. */
export interface CommonOptionsOfOptions {
  /**
   * What the messages write before a flag's name: `-`, as Go's `flag` package writes flags (the runtime's own command
   * line), or `--` for a binary whose command line spells them so. Default `-`.
   */
  flagPrefix?: string;
}

/**
 * The common options from the values of the common flags (complete: defaults filled in), by flag name as in
 * {@link COMMON_FLAGS}. Empty texts mean unset. A binary with its own parser over these flags (another syntax, the
 * same flags) gets its common options from it too.
 *
 * @throws {@link CommandLineError} when the lease timings are not in client-go's order (see `leaseTimingProblem`), or
 *   both `metrics-address` and `http-endpoint` are set; the message names the flags.
 */
export function commonOptionsOf(
  values: ReadonlyMap<string, ParsedValue>,
  options: CommonOptionsOfOptions = {},
): CommonOptions {
  const prefix = options.flagPrefix ?? '-';
  const spelled = (name: string): string => `${prefix}${name}`;
  const text = (flag: string): string | undefined => {
    const v = values.get(flag);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const num = (flag: string): number => values.get(flag) as number;
  // The sidecars' older name of the endpoint flag; they refuse both at once.
  if (text('metrics-address') !== undefined && text('http-endpoint') !== undefined)
    throw new CommandLineError(`only one of ${spelled('metrics-address')} and ${spelled('http-endpoint')} can be set`);
  const endpoint = text('metrics-address') ?? text('http-endpoint');
  const labels = text('leader-election-labels');
  const common: CommonOptions = {
    kubeconfig: text('kubeconfig'),
    leaderElection: values.get('leader-election') as boolean,
    leaderElectionNamespace: text('leader-election-namespace'),
    leaseDurationMs: num('leader-election-lease-duration'),
    renewDeadlineMs: num('leader-election-renew-deadline'),
    retryPeriodMs: num('leader-election-retry-period'),
    releaseOnCancel: values.get('leader-election-release-on-cancel') as boolean,
    leaderElectionLabels: labels === undefined ? undefined : parseLeaseLabels(labels),
    httpEndpoint: endpoint === undefined ? undefined : parseEndpointAddress(endpoint),
    metricsPath: values.get('metrics-path') as string,
    kubeApiQps: num('kube-api-qps'),
    kubeApiBurst: num('kube-api-burst'),
    workerThreads: num('worker-threads'),
    loggingFormat: values.get('logging-format') as 'text' | 'json',
    verbosity: num('v'),
  };
  const problem = leaseTimingProblem(common as LeaseTimings);
  if (problem !== undefined) throw new CommandLineError(`${spelled(problem.flag)} ${longerThan(problem, prefix)}`);
  return common;
}
