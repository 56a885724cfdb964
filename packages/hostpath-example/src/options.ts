/**
 * The command line of `kprov-hostpath`: the runtime's common flags and this binary's own, in the syntax its guide
 * documents: `--flag value` or `--flag=value`, booleans as `--flag`, `--no-flag` or `--flag=false`, `-v N`. A flag
 * wins over its environment variable, which wins over its default.
 *
 * The flags are a flag table of `@kprov/provisioner-lib/runtime` ({@link FLAGS}: `COMMON_FLAGS` and this binary's)
 * and their values are the runtime's: `convertFlagValue` reads Go durations and numbers and runs the flags' checks,
 * `completeFlagValues` fills in the defaults, `commonOptionsOf` makes the common options (and checks the lease
 * timings' order). Only the syntax and the messages are this binary's: `node:util`'s `parseArgs` reads the syntax,
 * where the runtime's own command line reads Go's `flag` syntax (`-flag`, no `--no-flag`, Go's messages and exit code
 * 2 for every mistake), which would change the command line the guide documents.
 */
import path from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import {
  COMMON_DEFAULTS,
  COMMON_FLAGS,
  CommandLineError,
  commonOptionsOf,
  completeFlagValues,
  convertFlagValue,
  formatGoDuration,
  parseEndpointAddress,
  resolveCommonOptions,
  type CommonOptions,
  type EndpointAddress,
  type Env,
  type FlagDefinition,
  type FlagTable,
  type FlagType,
  type ParsedValue,
} from '@kprov/provisioner-lib/runtime';
import packageJson from '../package.json' with { type: 'json' };
import { DEFAULT_PV_DIR } from './provisioner.js';

/** The program's name, in its help, version and messages. */
export const PROGRAM = 'kprov-hostpath';

/** What `--version` prints after the program's name: this package's version, which its image is tagged with. */
export const VERSION: string = packageJson.version;

/** Default provisioner name, as in the Go example. */
export const DEFAULT_PROVISIONER_NAME = 'example.com/hostpath';

function notEmpty(text: string): void {
  if (text === '') throw new Error('must not be empty');
}

function absolutePath(text: string): void {
  if (!path.isAbsolute(text)) throw new Error('must be an absolute path');
}

function endpointAddress(text: string): void {
  if (parseEndpointAddress(text) === undefined) throw new Error('must be ADDR:PORT (e.g. ":8080" or "127.0.0.1:8080")');
}

// `--metrics-address`, the sidecars' deprecated name of `--http-endpoint`, is left out: this binary never had it.
const { 'metrics-address': _deprecated, ...common } = COMMON_FLAGS;

/**
 * The flags: the runtime's common flags, with this binary's wording and its stricter checks (an empty namespace or
 * endpoint is refused: the guide has no "empty means unset"), and its own.
 */
export const FLAGS = {
  ...common,
  kubeconfig: { ...COMMON_FLAGS.kubeconfig, env: 'KUBECONFIG' },
  'leader-election-namespace': { ...COMMON_FLAGS['leader-election-namespace'], check: notEmpty },
  'http-endpoint': { ...COMMON_FLAGS['http-endpoint'], check: endpointAddress },
  'logging-format': {
    ...COMMON_FLAGS['logging-format'],
    check: (text: string) => {
      if (text !== 'text' && text !== 'json') throw new Error('must be "text" or "json"');
    },
  },
  v: {
    ...COMMON_FLAGS.v,
    check: (n: number) => {
      if (n < 0) throw new Error('must be a non-negative integer');
    },
  },
  'provisioner-name': {
    type: 'string',
    default: DEFAULT_PROVISIONER_NAME,
    check: notEmpty,
    usage: 'The provisioner `name` StorageClasses refer to.',
  },
  'pv-dir': {
    type: 'string',
    env: 'PV_DIR',
    default: DEFAULT_PV_DIR,
    check: (text: string) => {
      absolutePath(text);
      if (path.posix.normalize(text) === '/') throw new Error('must not be "/"');
    },
    usage: 'The `directory` on the node holding the volumes.',
  },
  'node-name': {
    type: 'string',
    env: 'NODE_NAME',
    usage: "This node's `name`, the provisioner's identity (in a pod, from the downward API field spec.nodeName).",
  },
  'host-root': {
    type: 'string',
    env: 'HOST_ROOT',
    default: '/',
    check: absolutePath,
    usage: "Where this process sees the node's root filesystem (a `directory`).",
  },
} as const satisfies FlagTable;

const DEFAULT_TIMINGS = {
  lease: formatGoDuration(COMMON_DEFAULTS.leaseDurationMs),
  renew: formatGoDuration(COMMON_DEFAULTS.renewDeadlineMs),
  retry: formatGoDuration(COMMON_DEFAULTS.retryPeriodMs),
};

/** The help text: every flag with its environment fallback and default. */
export const HELP = `Usage: ${PROGRAM} [flags]

A hostPath dynamic provisioner: each claim of a StorageClass naming this provisioner gets a directory
<pv-dir>/<pv name> on this node, served as a hostPath PersistentVolume.

Flags (a flag wins over its environment variable):
  --kubeconfig FILE                  kubeconfig file (env KUBECONFIG); default: in-cluster config, else ~/.kube/config
  --provisioner-name NAME            provisioner name StorageClasses refer to (default "${DEFAULT_PROVISIONER_NAME}")
  --pv-dir DIR                       directory on the node holding the volumes (env PV_DIR, default "${DEFAULT_PV_DIR}")
  --node-name NAME                   this node's name, the provisioner's identity (env NODE_NAME, required;
                                     in a pod, from the downward API field spec.nodeName)
  --host-root DIR                    where this process sees the node's root filesystem (env HOST_ROOT, default "/")
  --leader-election                  run only while holding the Lease "<provisioner name with / as ->" (default ${COMMON_DEFAULTS.leaderElection})
  --no-leader-election               do not use leader election
  --leader-election-namespace NS     namespace of the Lease (default: env POD_NAMESPACE, else the service
                                     account's namespace, else "default")
  --leader-election-lease-duration D how long a Lease lasts without renewal (default ${DEFAULT_TIMINGS.lease})
  --leader-election-renew-deadline D how long the leader retries renewing before it gives up (default ${DEFAULT_TIMINGS.renew})
  --leader-election-retry-period D   how often candidates try to acquire and the leader renews (default ${DEFAULT_TIMINGS.retry})
  --leader-election-release-on-cancel
                                     on SIGTERM or SIGINT, give the Lease up once in-flight operations finished,
                                     so another replica takes over at once (default ${COMMON_DEFAULTS.releaseOnCancel})
  --no-leader-election-release-on-cancel
                                     leave the Lease to expire on SIGTERM or SIGINT, as the Go library does
  --leader-election-labels K:V,...   labels put on the Lease while this replica leads, e.g. "team:storage"
                                     (default: none)
  --http-endpoint ADDR:PORT          serve /metrics, /healthz, /readyz and /healthz/leader-election there,
                                     e.g. ":8080" (default: off)
  --metrics-path PATH                where the endpoint serves the metrics (default "${COMMON_DEFAULTS.metricsPath}")
  --kube-api-qps QPS                 client-side limit of API requests per second; 0: the default, negative:
                                     no limit (default ${COMMON_DEFAULTS.kubeApiQps})
  --kube-api-burst N                 API requests that may go at once before that limit applies; 0: the default
                                     (default ${COMMON_DEFAULTS.kubeApiBurst})
  --worker-threads N                 claim workers, and as many volume workers (default ${COMMON_DEFAULTS.workerThreads})
  --logging-format text|json         log format; json is shaped like klog's (default "${COMMON_DEFAULTS.loggingFormat}")
  -v, --v N                          log verbosity: 4 and up logs debug messages (default ${COMMON_DEFAULTS.verbosity})
  --version                          print the version and exit
  -h, --help                         print this help and exit
`;

/** The options of the command line: this binary's own, and the common ones its guide has always documented. */
export interface CliOptions {
  /** `--kubeconfig` (env `KUBECONFIG`). Default undefined: the in-cluster service account, else `~/.kube/config`. */
  kubeconfig: string | undefined;
  /** `--provisioner-name`: the name StorageClasses refer to. Default `example.com/hostpath`. */
  provisionerName: string;
  /** `--pv-dir` (env `PV_DIR`): the directory on the node holding the volumes. Default `/tmp/hostpath-provisioner`. */
  pvDir: string;
  /** `--node-name` (env `NODE_NAME`): the provisioner's identity. Required. */
  nodeName: string;
  /** `--host-root` (env `HOST_ROOT`): where this process sees the node's root filesystem. Default `/`. */
  hostRoot: string;
  /** `--leader-election`: run only while holding the Lease. Default true. */
  leaderElection: boolean;
  /** `--leader-election-namespace`. Default undefined: `POD_NAMESPACE`, else the service account's namespace, else `default`. */
  leaderElectionNamespace: string | undefined;
  /** `--leader-election-lease-duration`, in ms. Default 15 000. */
  leaseDurationMs: number;
  /** `--leader-election-renew-deadline`, in ms. Default 10 000. */
  renewDeadlineMs: number;
  /** `--leader-election-retry-period`, in ms. Default 2 000. */
  retryPeriodMs: number;
  /** `--leader-election-release-on-cancel`: give the Lease up on a requested stop (client-go's `ReleaseOnCancel`). Default true. */
  releaseOnCancel: boolean;
  /** `--http-endpoint`: where metrics and health are served. Default undefined: not served. */
  httpEndpoint: EndpointAddress | undefined;
  /** `--logging-format`. Default `text`. */
  loggingFormat: 'text' | 'json';
  /** `-v`: klog-style verbosity, 4 and up logs debug messages, 5 and up trace. Default 0. */
  verbosity: number;
}

/**
 * What {@link parseOptions} found: options to run with (and every common option, for the runtime), text to print
 * (`--help`, `--version`), or an error to print with its exit code: 2 for a command line that does not parse (as Go's
 * `flag` package), 1 for a value that is not valid.
 */
export type ParseResult =
  | { kind: 'run'; options: CliOptions; common: CommonOptions }
  | { kind: 'help'; text: string }
  | { kind: 'version'; text: string }
  | { kind: 'error'; message: string; exitCode: number };

/** A flag as its messages name it: `-v`, `--pv-dir`. */
function spelled(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** Why a text is not a value of a type, in this binary's words (the runtime's are Go's `parse error`). */
const NOT_A_VALUE: Readonly<Record<FlagType, string>> = {
  string: 'is not valid',
  boolean: 'must be true or false',
  // Every whole-number flag here (-v, --kube-api-burst, --worker-threads) is one.
  int: 'must be a non-negative integer',
  float: 'must be a number',
  duration: 'must be a duration such as "15s", "500ms" or "1m30s"',
};

/** `text` as a value of the flag `name`; throws a {@link CommandLineError} naming the flag and where the text came from. */
function flagValue(name: string, def: FlagDefinition, text: string, from: string | undefined): ParsedValue {
  const value = convertFlagValue(def, text);
  if (typeof value !== 'object') return value;
  const reason =
    value.error === 'parse error'
      ? NOT_A_VALUE[def.type]
      : value.error === 'value out of range'
        ? 'is out of range'
        : value.error;
  throw new CommandLineError(`${spelled(name)} ${reason}, got "${text}"${from === undefined ? '' : ` (from ${from})`}`);
}

/** `parseArgs`'s view of the flags: a text for all but the booleans (which also take `--no-`), `-v` also as `-vN`. */
const PARSE_ARGS_OPTIONS: ParseArgsOptionsConfig = {
  ...Object.fromEntries(
    Object.entries(FLAGS).map(([name, def]) => [
      name,
      def.type === 'boolean' ? { type: 'boolean' } : { type: 'string', ...(name.length === 1 ? { short: name } : {}) },
    ]),
  ),
  help: { type: 'boolean', short: 'h' },
};

/** Go's `--flag=false` for a boolean, and klog's `-v=N`, rewritten to what `parseArgs` reads. */
function normalizeArgs(argv: readonly string[]): string[] {
  return argv.map((arg) => {
    if (arg.startsWith('-v=')) return `--v=${arg.slice(3)}`;
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    const def = m === null ? undefined : (FLAGS as FlagTable)[m[1]!];
    if (m === null || def?.type !== 'boolean') return arg;
    return flagValue(m[1]!, def, m[2]!, undefined) === true ? `--${m[1]!}` : `--no-${m[1]!}`;
  });
}

/** The values of the flags given, each flag else its environment variable; the defaults are not filled in. */
function givenValues(given: Record<string, string | boolean | undefined>, env: Env): Map<string, ParsedValue> {
  const values = new Map<string, ParsedValue>();
  for (const [name, def] of Object.entries(FLAGS) as [string, FlagDefinition][]) {
    const flag = given[name];
    if (typeof flag === 'boolean') {
      values.set(name, flag);
      continue;
    }
    const fromEnv = def.env === undefined || env[def.env] === '' ? undefined : env[def.env];
    if (flag !== undefined) values.set(name, flagValue(name, def, flag, undefined));
    else if (fromEnv !== undefined) values.set(name, flagValue(name, def, fromEnv, def.env));
  }
  return values;
}

/** Throws for a boolean flag given both ways (`--leader-election --no-leader-election`). */
function checkContradictions(tokens: readonly { kind: string; name?: string; rawName?: string }[]): void {
  for (const [name, def] of Object.entries(FLAGS)) {
    if (def.type !== 'boolean') continue;
    const forms = new Set(tokens.filter((t) => t.kind === 'option' && t.name === name).map((t) => t.rawName));
    if (forms.has(`--${name}`) && forms.has(`--no-${name}`))
      throw new CommandLineError(`--${name} and --no-${name} contradict each other`);
  }
}

/** The options of valid values, or throws a {@link CommandLineError} naming what is wrong. */
function runOptions(given: Record<string, string | boolean | undefined>, env: Env): ParseResult & { kind: 'run' } {
  // givenValues read the environment, with this binary's messages: only the defaults are left to fill in.
  const values = completeFlagValues(givenValues(given, env), FLAGS, {});
  const common = commonOptionsOf(values, { flagPrefix: '--' });
  const resolved = resolveCommonOptions(common);
  // Checked last, so that a wrong flag is reported even where NODE_NAME is not set yet.
  const nodeName = values.get('node-name') as string | undefined;
  if (nodeName === undefined) {
    throw new CommandLineError(
      'the node name is required: set the NODE_NAME environment variable (in a pod, from the downward API: ' +
        'env NODE_NAME valueFrom.fieldRef.fieldPath spec.nodeName) or pass --node-name',
    );
  }
  const options: CliOptions = {
    kubeconfig: resolved.kubeconfig,
    provisionerName: values.get('provisioner-name') as string,
    pvDir: values.get('pv-dir') as string,
    nodeName,
    hostRoot: values.get('host-root') as string,
    leaderElection: resolved.leaderElection,
    leaderElectionNamespace: resolved.leaderElectionNamespace,
    leaseDurationMs: resolved.leaseDurationMs,
    renewDeadlineMs: resolved.renewDeadlineMs,
    retryPeriodMs: resolved.retryPeriodMs,
    releaseOnCancel: resolved.releaseOnCancel,
    httpEndpoint: resolved.httpEndpoint,
    loggingFormat: resolved.loggingFormat,
    verbosity: resolved.verbosity,
  };
  return { kind: 'run', options, common };
}

/** Parses the command line and the environment; see {@link ParseResult}. */
export function parseOptions(argv: readonly string[], env: Env): ParseResult {
  let parsed;
  try {
    parsed = parseArgs({
      args: normalizeArgs(argv),
      options: PARSE_ARGS_OPTIONS,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
      tokens: true,
    });
  } catch (err) {
    // normalizeArgs refused a boolean's value; the rest is parseArgs' own error about the syntax.
    if (err instanceof CommandLineError) return { kind: 'error', message: err.message, exitCode: 1 };
    return { kind: 'error', message: `${err instanceof Error ? err.message : String(err)} (see --help)`, exitCode: 2 };
  }
  // No flag takes `multiple`: each value is a text or a boolean.
  const given = parsed.values as Record<string, string | boolean | undefined>;
  if (given.help === true) return { kind: 'help', text: HELP };
  if (given.version === true) return { kind: 'version', text: `${PROGRAM} ${VERSION}\n` };
  try {
    checkContradictions(parsed.tokens);
    return runOptions(given, env);
  } catch (err) {
    if (err instanceof CommandLineError) return { kind: 'error', message: err.message, exitCode: 1 };
    throw err;
  }
}
