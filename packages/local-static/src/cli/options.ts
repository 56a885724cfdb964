/**
 * The command line of `local-volume-provisioner`: upstream's flags in Go's `flag` syntax, with their defaults.
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
import { DEFAULT_CONFIG_DIR } from '../config/config.js';
import { DEFAULT_DISCOVERY_PERIOD_MS } from '../discovery/discoverer.js';

/** The program's name. */
export const PROGRAM = 'local-volume-provisioner';
/** `--config-sync-period` default: 5 s. */
export const DEFAULT_CONFIG_SYNC_PERIOD_MS = 5_000;

function positive(value: number): void {
  if (!(value > 0)) throw new Error('must be greater than zero');
}

/** The flags, by upstream's names. */
export const FLAGS = {
  'listen-address': {
    type: 'string',
    default: ':8080',
    check: (v: string) => {
      if (parseEndpointAddress(v) === undefined) throw new Error('must be ADDR:PORT');
    },
    usage: 'The `address` to expose the metrics and readiness endpoints on.',
  },
  'metrics-path': {
    type: 'string',
    default: '/metrics',
    check: (v: string) => {
      if (
        !v.startsWith('/') ||
        v === '/ready' ||
        v.startsWith('/ready/') ||
        v === '/healthz' ||
        v.startsWith('/healthz/')
      )
        throw new Error('must be a path starting with / other than /ready and /healthz');
    },
    usage: 'The `path` under which the metrics are exposed.',
  },
  'discovery-period': {
    type: 'duration',
    default: DEFAULT_DISCOVERY_PERIOD_MS,
    check: positive,
    usage: 'How long to wait between two passes of deleting released volumes and discovering new ones.',
  },
  'config-sync-period': {
    type: 'duration',
    default: DEFAULT_CONFIG_SYNC_PERIOD_MS,
    check: positive,
    usage: 'How often the configuration directory is read again.',
  },
  kubeconfig: {
    type: 'string',
    usage:
      'Path to the kubeconfig `file`; empty: $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.',
  },
  'config-dir': {
    type: 'string',
    default: DEFAULT_CONFIG_DIR,
    usage: 'The `directory` of the mounted ConfigMap, one file per key.',
  },
  v: {
    type: 'int',
    default: 0,
    check: (v: number) => {
      if (v < 0) throw new Error('must not be negative');
    },
    usage: 'Log `level`: 4 and up logs debug messages.',
  },
} as const satisfies FlagTable;

/** The options of the command line. */
export interface LocalStaticOptions {
  /** `--listen-address`: where `/metrics` and `/ready` are served. Default `:8080`. */
  listenAddress: string;
  /** `--metrics-path`. Default `/metrics`. */
  metricsPath: string;
  /** `--discovery-period`, in ms. Default 10 s. */
  discoveryPeriodMs: number;
  /** `--config-sync-period`, in ms. Default 5 s. */
  configSyncPeriodMs: number;
  /** `--kubeconfig`. Default: `$KUBECONFIG`, else in-cluster, else `~/.kube/config`. */
  kubeconfig: string | undefined;
  /** `--config-dir` (kprov): the mounted ConfigMap. Default `/etc/provisioner/config`. */
  configDir: string;
  /** `-v`. Default 0. */
  verbosity: number;
}

const DESCRIPTION = `${PROGRAM}: publishes the disks mounted in this node's discovery directories as local PersistentVolumes,
and cleans and publishes them again when they are released. Configured by the files of --config-dir (a mounted
ConfigMap) and the environment: MY_NODE_NAME (required), MY_NAMESPACE, JOB_CONTAINER_IMAGE.

\`${PROGRAM} node-cleanup [flags]\` runs the node-cleanup controller instead (\`${PROGRAM} node-cleanup --help\`).`;

/** Parses the command line (the runtime's `flags` parser of this binary). */
export function parseCommandLine(argv: readonly string[], env: Env): CommandLine<LocalStaticOptions> {
  const usage = usageText(PROGRAM, FLAGS);
  try {
    const parsed = parseGoFlags(argv, FLAGS);
    if (parsed.help) return { kind: 'exit', code: 0, stdout: `${DESCRIPTION}\n\n${usage}` };
    if (parsed.rest.length > 0) {
      const arg = parsed.rest[0]!;
      throw new CommandLineError(
        arg === 'node-cleanup'
          ? `unexpected argument "${arg}": the node-cleanup command comes first, before its flags: ${PROGRAM} node-cleanup [flags]`
          : `unexpected argument "${arg}": ${PROGRAM} takes flags only`,
      );
    }
    const values = completeFlagValues(parsed.values, FLAGS, env);
    const options: LocalStaticOptions = {
      listenAddress: values.get('listen-address') as string,
      metricsPath: values.get('metrics-path') as string,
      discoveryPeriodMs: values.get('discovery-period') as number,
      configSyncPeriodMs: values.get('config-sync-period') as number,
      kubeconfig: values.get('kubeconfig') as string | undefined,
      configDir: values.get('config-dir') as string,
      verbosity: values.get('v') as number,
    };
    return {
      kind: 'run',
      options,
      common: {
        kubeconfig: options.kubeconfig === '' ? undefined : options.kubeconfig,
        httpEndpoint: parseEndpointAddress(options.listenAddress),
        leaderElection: false,
        verbosity: options.verbosity,
      },
    };
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    return { kind: 'exit', code: 2, stderr: `${err.message}\n${usage}` };
  }
}
