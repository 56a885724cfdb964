/**
 * The command line of `local-volume-provisioner node-cleanup`: upstream's `cmd/node-cleanup` flags (spf13/pflag),
 * with their defaults.
 *
 * @module
 */
import {
  CommandLineError,
  completeFlagValues,
  parseEndpointAddress,
  parseGoFlags,
  usageText,
  type CommandLine,
  type Env,
  type FlagTable,
} from '@kprov/provisioner-lib/runtime';
import { PROGRAM } from '../cli/options.js';
import { DEFAULT_PVC_DELETION_DELAY_MS } from './controller.js';
import { DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS } from './deleter.js';
import { DEFAULT_NODE_CLEANUP_WORKERS, DEFAULT_RESYNC_MS } from './node-cleanup.js';

/** The subcommand's name: `local-volume-provisioner node-cleanup [flags]`. */
export const NODE_CLEANUP_COMMAND = 'node-cleanup';
/** The subcommand's name in its help and usage errors. */
export const NODE_CLEANUP_PROGRAM = `${PROGRAM} ${NODE_CLEANUP_COMMAND}`;

/** The options of the command line. */
export interface NodeCleanupCommandOptions {
  /** `--kubeconfig`. Default: `$KUBECONFIG`, else in-cluster, else `~/.kube/config`. */
  kubeconfig: string | undefined;
  /** `--kube-api-endpoint`: replaces the API server's URL of the kubeconfig in use. Default none. */
  kubeApiEndpoint: string | undefined;
  /** `--resync`, in ms: how often PVs of deleted nodes are looked for besides on Node deletions; 0: never. Default 10 min. */
  resyncMs: number;
  /** `--storageclass-names`: comma-separated, the flag repeatable (the lists add up). Default none: nothing is cleaned. */
  storageClassNames: string[];
  /** `--worker-threads`. Default 10. */
  workerThreads: number;
  /** `--pvc-deletion-delay`, in ms. Default 60 s. */
  pvcDeletionDelayMs: number;
  /** `--stale-pv-discovery-interval`, in ms. Default 10 s. */
  staleVolumeDiscoveryIntervalMs: number;
  /** `--listen-address`: where `/metrics` is served; empty: not served. Default `:8080`. */
  listenAddress: string;
  /** `--metrics-path`. Default `/metrics`. */
  metricsPath: string;
  /** `-v`. Default 0. */
  verbosity: number;
}

function notNegative(value: number): void {
  if (value < 0) throw new Error('must not be negative');
}

/**
 * The flags, by upstream's names. `collect` gets each `--storageclass-names` value as it is parsed (pflag's string
 * slice adds up repeated flags, where Go's `flag`, which the parser follows, keeps the last).
 */
function nodeCleanupFlags(collect: (names: string) => void) {
  return {
    kubeconfig: {
      type: 'string',
      usage:
        'Path to the kubeconfig `file`; empty: $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.',
    },
    'kube-api-endpoint': {
      type: 'string',
      check: (v: string) => {
        if (v !== '' && !URL.canParse(v)) throw new Error('must be a URL, such as https://10.0.0.1:6443');
      },
      usage: 'The API server `URL`, replacing the one of the kubeconfig in use.',
    },
    resync: {
      type: 'duration',
      default: DEFAULT_RESYNC_MS,
      check: notNegative,
      usage: 'How often PVs of deleted Nodes are looked for, besides on Node deletions; 0: never.',
    },
    'storageclass-names': {
      type: 'string',
      check: collect,
      usage:
        'Comma separated list of `names` of StorageClasses to opt-in PVs and PVCs for cleanup; repeatable. Empty: nothing is cleaned up.',
    },
    'worker-threads': {
      type: 'int',
      default: DEFAULT_NODE_CLEANUP_WORKERS,
      check: (v: number) => {
        if (v < 1) throw new Error('must be at least 1');
      },
      usage: 'Number of controller worker threads.',
    },
    'pvc-deletion-delay': {
      type: 'duration',
      default: DEFAULT_PVC_DELETION_DELAY_MS,
      check: notNegative,
      usage: 'How long to wait after Node deletion for PVC cleanup.',
    },
    'stale-pv-discovery-interval': {
      type: 'duration',
      default: DEFAULT_STALE_PV_DISCOVERY_INTERVAL_MS,
      check: (v: number) => {
        if (!(v > 0)) throw new Error('must be greater than zero');
      },
      usage: 'How long the PV deleter waits between tries to clean up stale PVs.',
    },
    'listen-address': {
      type: 'string',
      default: ':8080',
      check: (v: string) => {
        if (v !== '' && parseEndpointAddress(v) === undefined) throw new Error('must be ADDR:PORT, or empty for none');
      },
      usage: 'The TCP network `address` where the prometheus metrics endpoint will listen; empty: none.',
    },
    'metrics-path': {
      type: 'string',
      default: '/metrics',
      check: (v: string) => {
        if (!v.startsWith('/') || /^\/(readyz|healthz)(\/|$)/.test(v))
          throw new Error('must be a path starting with / other than /readyz and /healthz');
      },
      usage: 'The HTTP `path` where prometheus metrics will be exposed.',
    },
    v: {
      type: 'int',
      default: 0,
      check: notNegative,
      usage: 'Log `level`: 4 and up logs debug messages.',
    },
  } as const satisfies FlagTable;
}

/** The flags, by upstream's names, with their defaults. */
export const NODE_CLEANUP_FLAGS: FlagTable = nodeCleanupFlags(() => undefined);

const DESCRIPTION = `${NODE_CLEANUP_PROGRAM}: deletes the claims of local PVs whose Node was deleted and did not come
back within --pvc-deletion-delay (after a Warning event ReferencedNodeDeleted on the claim), and then such PVs when
they are Available, or Released with reclaim policy Delete. Only PVs of the StorageClasses of --storageclass-names are
touched; no disk is.`;

/** Splits a `--storageclass-names` value: comma-separated, blanks around names and empty names dropped. */
function classNames(text: string): string[] {
  return text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** Parses the subcommand's command line (the arguments after `node-cleanup`). */
export function parseNodeCleanupCommandLine(argv: readonly string[], env: Env): CommandLine<NodeCleanupCommandOptions> {
  const names: string[] = [];
  const flags = nodeCleanupFlags((text) => names.push(...classNames(text)));
  const usage = usageText(NODE_CLEANUP_PROGRAM, flags);
  try {
    const parsed = parseGoFlags(argv, flags);
    if (parsed.help) return { kind: 'exit', code: 0, stdout: `${DESCRIPTION}\n\n${usage}` };
    if (parsed.rest.length > 0)
      throw new CommandLineError(`unexpected argument "${parsed.rest[0]!}": ${NODE_CLEANUP_PROGRAM} takes flags only`);
    const values = completeFlagValues(parsed.values, flags, env);
    const text = (name: string): string | undefined => {
      const v = values.get(name) as string | undefined;
      return v === '' ? undefined : v;
    };
    const options: NodeCleanupCommandOptions = {
      kubeconfig: text('kubeconfig'),
      kubeApiEndpoint: text('kube-api-endpoint'),
      resyncMs: values.get('resync') as number,
      storageClassNames: [...new Set(names)],
      workerThreads: values.get('worker-threads') as number,
      pvcDeletionDelayMs: values.get('pvc-deletion-delay') as number,
      staleVolumeDiscoveryIntervalMs: values.get('stale-pv-discovery-interval') as number,
      listenAddress: values.get('listen-address') as string,
      metricsPath: values.get('metrics-path') as string,
      verbosity: values.get('v') as number,
    };
    return {
      kind: 'run',
      options,
      common: {
        kubeconfig: options.kubeconfig,
        httpEndpoint: options.listenAddress === '' ? undefined : parseEndpointAddress(options.listenAddress),
        leaderElection: false,
        verbosity: options.verbosity,
      },
    };
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    return { kind: 'exit', code: 2, stderr: `${err.message}\n${usage}` };
  }
}
