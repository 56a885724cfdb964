/**
 * Command line of `local-path-provisioner`, compatible with rancher/local-path-provisioner v0.0.37:
 * `local-path-provisioner [--debug] start [flags]`, parsed the way urfave/cli (on Go's `flag` package) parses it,
 * plus the sidecar-style flags our binaries share (`--leader-election`, `--http-endpoint`, `--kube-api-qps`, ...).
 *
 * Flag names, environment variables, defaults and upstream's validation messages are the interface and are kept
 * verbatim; everything here is pure (no I/O), so the checks upstream makes after reading files or ConfigMaps
 * (`--config`, `--helper-pod-file`) are left to the caller.
 *
 * @packageDocumentation
 */

/** The binary's name, used in help and version output. */
export const PROGRAM = 'local-path-provisioner';

import {
  CommandLineError,
  convertFlagValue,
  parseGoFlags,
  type FlagDefinition,
  type FlagTable,
  type FlagType,
  type ParsedFlags,
} from '@kprov/provisioner-lib/runtime';
import packageJson from '../../package.json' with { type: 'json' };
import { KUTTI_PROVISIONER_NAME } from '../executor/node/kutti.js';

/** The version `--version` prints: this package's (upstream prints the git tag stamped in at build time). */
export const DEFAULT_VERSION: string = packageJson.version;

/** How a flag's value is read. */
type FlagKind = 'string' | 'bool' | 'int' | 'float';

/** One flag of a command. */
interface FlagSpec {
  /** Long name, without dashes. */
  readonly name: string;
  /** Other names (one letter: shown as `-x`); they set the same value. */
  readonly aliases?: readonly string[];
  readonly kind: FlagKind;
  /** Environment variable read when the flag is not on the command line. */
  readonly env?: string;
  /** Default as the help shows it; none for actions such as `--help`. */
  readonly defaultText?: string;
  /** Placeholder of the value in the help. */
  readonly placeholder?: string;
  readonly usage: string;
  /** Added by us (not in upstream's `main.go`). */
  readonly ours?: boolean;
}

/** Flags of the application itself, valid before `start` (and, as urfave/cli v3 flags are inherited, after it). */
const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    name: 'debug',
    aliases: ['d'],
    kind: 'bool',
    env: 'RANCHER_DEBUG',
    defaultText: 'false',
    usage: 'enable debug logging level',
  },
];

/** Flags that print something and exit; `--version` only before `start`. Shown in the help, parsed apart. */
const ACTION_FLAGS: readonly FlagSpec[] = [
  { name: 'help', aliases: ['h'], kind: 'bool', usage: 'print this help and exit' },
  { name: 'version', aliases: ['v'], kind: 'bool', usage: 'print the version and exit (before "start" only)' },
];

/** Flags of `start`, in upstream's order, then ours. */
const START_FLAGS: readonly FlagSpec[] = [
  {
    name: 'config',
    kind: 'string',
    defaultText: '""',
    placeholder: 'FILE|JSON',
    usage: "a file if it ends in .json, else JSON text; empty: the ConfigMap's config.json",
  },
  {
    name: 'provisioner-name',
    kind: 'string',
    env: 'PROVISIONER_NAME',
    defaultText: '"rancher.io/local-path"',
    placeholder: 'NAME',
    usage: 'name StorageClasses give as provisioner',
  },
  {
    name: 'namespace',
    kind: 'string',
    env: 'POD_NAMESPACE',
    defaultText: '"local-path-storage"',
    placeholder: 'NS',
    usage: 'namespace of the provisioner, its helper pods and its ConfigMap',
  },
  {
    name: 'helper-image',
    kind: 'string',
    env: 'HELPER_IMAGE',
    defaultText: '"rancher/library-busybox:1.32.1"',
    placeholder: 'IMAGE',
    usage: 'must not be empty; unused (the image comes from the helper pod template)',
  },
  {
    name: 'kubeconfig',
    kind: 'string',
    defaultText: '""',
    placeholder: 'FILE',
    usage: 'kubeconfig; empty: $KUBECONFIG, else in-cluster, else $HOME/.kube/config',
  },
  {
    name: 'configmap-name',
    kind: 'string',
    defaultText: '"local-path-config"',
    placeholder: 'NAME',
    usage: 'ConfigMap with config.json, setup, teardown and helperPod.yaml',
  },
  {
    name: 'service-account-name',
    kind: 'string',
    env: 'SERVICE_ACCOUNT_NAME',
    defaultText: '"local-path-provisioner-service-account"',
    placeholder: 'NAME',
    usage: 'service account of the helper pods',
  },
  {
    name: 'helper-pod-file',
    kind: 'string',
    defaultText: '""',
    placeholder: 'FILE',
    usage: 'helper pod template; empty: key helperPod.yaml of the ConfigMap',
  },
  {
    name: 'worker-threads',
    kind: 'int',
    defaultText: '4',
    placeholder: 'N',
    usage: 'concurrent claim and volume workers (> 0)',
  },
  {
    name: 'provisioning-retry-count',
    kind: 'int',
    defaultText: '15',
    placeholder: 'N',
    usage: 'retries of a failed provisioning; 0: retry forever',
  },
  {
    name: 'deletion-retry-count',
    kind: 'int',
    defaultText: '15',
    placeholder: 'N',
    usage: 'retries of a failed deletion; 0: retry forever',
  },
  {
    name: 'allow-unsafe-helper-pod-template',
    kind: 'bool',
    env: 'ALLOW_UNSAFE_HELPER_POD_TEMPLATE',
    defaultText: 'false',
    usage: 'skip the safety checks of the helper pod template',
  },
  {
    name: 'kube-api-burst',
    aliases: ['kube-client-burst'],
    kind: 'int',
    defaultText: '10',
    placeholder: 'N',
    usage: 'API requests sent at once before the QPS limit applies; 0: the default',
  },
  {
    name: 'kube-api-qps',
    aliases: ['kube-client-qps'],
    kind: 'float',
    defaultText: '5',
    placeholder: 'QPS',
    usage: 'API client requests per second (client-side limit); 0: the default, negative: no limit',
  },
  {
    name: 'health-port',
    kind: 'int',
    env: 'HEALTH_PORT',
    defaultText: '8080',
    placeholder: 'PORT',
    usage: 'port of the health server (/health, /ready) on every address',
  },
  {
    name: 'leader-election',
    kind: 'bool',
    defaultText: 'true',
    usage: 'run only while holding a Lease; turn off with --leader-election=false',
    ours: true,
  },
  {
    name: 'leader-election-namespace',
    kind: 'string',
    defaultText: 'the namespace',
    placeholder: 'NS',
    usage: 'namespace of the Lease',
    ours: true,
  },
  {
    name: 'leader-election-lease-duration',
    kind: 'string',
    defaultText: '15s',
    placeholder: 'DURATION',
    usage: 'how long a Lease lasts without renewal',
    ours: true,
  },
  {
    name: 'leader-election-renew-deadline',
    kind: 'string',
    defaultText: '10s',
    placeholder: 'DURATION',
    usage: 'how long the leader retries renewing before it gives up',
    ours: true,
  },
  {
    name: 'leader-election-retry-period',
    kind: 'string',
    defaultText: '2s',
    placeholder: 'DURATION',
    usage: 'how often candidates try to acquire and the leader renews',
    ours: true,
  },
  {
    name: 'leader-election-release-on-cancel',
    kind: 'bool',
    defaultText: 'true',
    usage: 'on SIGTERM/SIGINT, give the Lease up after in-flight operations, for another replica to take at once',
    ours: true,
  },
  {
    name: 'http-endpoint',
    kind: 'string',
    defaultText: 'off',
    placeholder: 'ADDR:PORT',
    usage: 'serve /metrics, /healthz, /readyz, /healthz/leader-election (e.g. ":9090")',
    ours: true,
  },
  {
    name: 'node-mode',
    kind: 'bool',
    env: 'NODE_MODE',
    defaultText: 'false',
    usage: 'one provisioner per node (DaemonSet): only claims scheduled to --node-name, directories made in-process',
    ours: true,
  },
  {
    name: 'node-name',
    kind: 'string',
    env: 'NODE_NAME',
    defaultText: '""',
    placeholder: 'NODE',
    usage: 'node mode: the node this process runs on (KUTTI_NODE_NAME is read too)',
    ours: true,
  },
  {
    name: 'host-root',
    kind: 'string',
    env: 'HOST_ROOT',
    defaultText: '""',
    placeholder: 'DIR',
    usage: "node mode: where the node's root file system is mounted; empty: base paths are mounted at their own paths",
    ours: true,
  },
  {
    name: 'kutti-root-path',
    kind: 'string',
    env: 'KUTTI_ROOT_PATH',
    defaultText: '""',
    placeholder: 'DIR',
    usage:
      "node mode: kuttiproject/provisioner-localvolume's root path: the config is this one base path for every node, and kutti's PVs are deleted by their node",
    ours: true,
  },
  {
    name: 'logging-format',
    kind: 'string',
    defaultText: '"text"',
    placeholder: 'text|json',
    usage: "log format; json is shaped like klog's JSON",
    ours: true,
  },
];

/** Where a metrics and health endpoint listens. */
export interface Endpoint {
  /** Address; `0.0.0.0` for every IPv4 address (`:PORT`). */
  host: string;
  port: number;
}

/** The parsed command line of `local-path-provisioner start`. */
export interface LocalPathOptions {
  /** `--debug` / `RANCHER_DEBUG`: log debug messages. */
  debug: boolean;
  /** `--config`: a file path if it ends in `.json`, else JSON text; undefined (empty): read the ConfigMap. */
  config: string | undefined;
  /** `--provisioner-name` / `PROVISIONER_NAME`; never empty. */
  provisionerName: string;
  /** `--namespace` / `POD_NAMESPACE`; never empty. */
  namespace: string;
  /** `--helper-image` / `HELPER_IMAGE`; checked non-empty, otherwise unused as upstream. */
  helperImage: string;
  /** `--kubeconfig`; undefined (empty): `$KUBECONFIG`, in-cluster, then `$HOME/.kube/config`. */
  kubeconfig: string | undefined;
  /** `--configmap-name`; never empty. */
  configmapName: string;
  /** `--service-account-name` / `SERVICE_ACCOUNT_NAME`; never empty. */
  serviceAccountName: string;
  /** `--helper-pod-file`; undefined (empty): key `helperPod.yaml` of the ConfigMap. */
  helperPodFile: string | undefined;
  /** `--worker-threads`; at least 1. */
  workerThreads: number;
  /** `--provisioning-retry-count`; 0 means forever. */
  provisioningRetryCount: number;
  /** `--deletion-retry-count`; 0 means forever. */
  deletionRetryCount: number;
  /** `--allow-unsafe-helper-pod-template` / `ALLOW_UNSAFE_HELPER_POD_TEMPLATE`. */
  allowUnsafeHelperPodTemplate: boolean;
  /** `--kube-api-qps` (alias `--kube-client-qps`); 0 already replaced by client-go's default 5; negative: no limit. */
  kubeApiQps: number;
  /** `--kube-api-burst` (alias `--kube-client-burst`); 0 already replaced by client-go's default 10. */
  kubeApiBurst: number;
  /** `--health-port` / `HEALTH_PORT`: the health server of upstream (not validated: a bad port only fails to listen). */
  healthPort: number;
  /** `--leader-election` (ours; upstream never elects a leader). */
  leaderElection: boolean;
  /** `--leader-election-namespace` (ours); defaults to {@link LocalPathOptions.namespace}. */
  leaderElectionNamespace: string;
  /** `--leader-election-lease-duration` (ours), in ms; default 15 000. */
  leaseDurationMs: number;
  /** `--leader-election-renew-deadline` (ours), in ms; default 10 000. */
  renewDeadlineMs: number;
  /** `--leader-election-retry-period` (ours), in ms; default 2 000. */
  retryPeriodMs: number;
  /** `--leader-election-release-on-cancel` (ours): client-go's `ReleaseOnCancel`; default true. */
  releaseOnCancel: boolean;
  /** `--http-endpoint` (ours): metrics and sidecar-style health; undefined: off. */
  httpEndpoint: Endpoint | undefined;
  /** `--logging-format` (ours). */
  loggingFormat: 'text' | 'json';
  /** `--node-mode` / `NODE_MODE` (ours): one provisioner per node; leader election is then off. */
  nodeMode: boolean;
  /** `--node-name` / `NODE_NAME`, else `KUTTI_NODE_NAME` (ours); never empty in node mode, else unused. */
  nodeName: string | undefined;
  /** `--host-root` / `HOST_ROOT` (ours): where the node's root file system is mounted; undefined (empty): `/`. */
  hostRoot: string | undefined;
  /**
   * `--kutti-root-path` / `KUTTI_ROOT_PATH` (ours): kuttiproject/provisioner-localvolume's root path. Node mode only,
   * not with `--config`: {@link LocalPathOptions.config} is then the inline config of this one base path for every
   * node, and the PVs kutti made (its annotations, folder `<root>/<PV name>`) are deleted by their node's provisioner.
   * Undefined (empty, default): off.
   */
  kuttiRootPath: string | undefined;
  /** `CONFIG_MOUNT_PATH`, read directly: where the ConfigMap is mounted; undefined (unset or empty): no template reload. */
  configMountPath: string | undefined;
}

/** What the command line asks for. */
export type Command =
  { kind: 'start'; options: LocalPathOptions } | { kind: 'help'; text: string } | { kind: 'version'; text: string };

/**
 * A command line error. `flag` names the flag at fault (without dashes) when there is one. `exitCode` is 2 for
 * syntax errors (upstream panics with `Usage error, please check your command: <message>`) and 1 for invalid
 * values (upstream exits via `Error starting daemon: <message>`); {@link describeUsageError} gives that line.
 * `showHelp` (default false): the program prints {@link HELP} before that line (no command was given).
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly flag: string | undefined,
    readonly exitCode: 1 | 2 = 1,
    readonly showHelp = false,
  ) {
    super(message);
  }
}

/** The message of a command line without a command, outside kutti's environment (see {@link parseCommandLine}). */
export const NO_COMMAND_MESSAGE =
  'no command given: pass "start" and its flags (such as "start --node-mode" in a DaemonSet), or set KUTTI_NODE_NAME ' +
  'and KUTTI_ROOT_PATH to run as kuttiproject/provisioner-localvolume';

/** The line upstream prints for `err`: the syntax error prefix, or the start-up error prefix. */
export function describeUsageError(err: UsageError): string {
  return err.exitCode === 2
    ? `Usage error, please check your command: ${err.message}`
    : `Error starting daemon: ${err.message}`;
}

function flagColumn(spec: FlagSpec): string {
  const names = [spec.name, ...(spec.aliases ?? [])].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)).join(', ');
  return spec.placeholder === undefined ? names : `${names} ${spec.placeholder}`;
}

function helpLines(specs: readonly FlagSpec[]): string {
  const width = Math.max(...[...GLOBAL_FLAGS, ...ACTION_FLAGS, ...START_FLAGS].map((s) => flagColumn(s).length)) + 2;
  return specs
    .map((s) => {
      const notes = [
        ...(s.env === undefined ? [] : [`env ${s.env}`]),
        ...(s.defaultText === undefined ? [] : [`default ${s.defaultText}`]),
      ];
      const line = `  ${flagColumn(s).padEnd(width)}${s.usage}`;
      return notes.length === 0 ? line : `${line}\n${' '.repeat(width + 2)}(${notes.join(', ')})`;
    })
    .join('\n');
}

/** The help text: both commands, every flag with its environment variable and default. */
export const HELP = `NAME:
  ${PROGRAM} - Local Path Provisioner

USAGE:
  ${PROGRAM} [--debug] start [flags]
  ${PROGRAM} [--debug]     with KUTTI_NODE_NAME and KUTTI_ROOT_PATH set: as kuttiproject/provisioner-localvolume,
                                  "start --node-mode --provisioner-name ${KUTTI_PROVISIONER_NAME}"

COMMANDS:
  start    run the provisioner
  status   print each node path's capacity, allocated and free space ("status --help" for its flags)

GLOBAL FLAGS (also accepted after "start"):
${helpLines([...GLOBAL_FLAGS, ...ACTION_FLAGS])}

START FLAGS (upstream):
${helpLines(START_FLAGS.filter((s) => s.ours !== true))}

START FLAGS (sidecar style, ours):
${helpLines(START_FLAGS.filter((s) => s.ours === true))}

ENVIRONMENT (read directly):
  CONFIG_MOUNT_PATH  directory of the mounted ConfigMap; if set, <dir>/helperPod.yaml is re-read every 30s
  KUTTI_NODE_NAME    --node-name when neither the flag nor NODE_NAME is set; with no command, see USAGE
  KUBECONFIG, HOME   kubeconfig discovery when --kubeconfig is empty

A flag wins over its environment variable. Values go as "--flag value" or "--flag=value" (one dash works too);
booleans take "--flag" or "--flag=false", never a separate value.
`;

const GO_TYPE: Record<FlagKind, string> = { string: 'string', bool: 'bool', int: 'int64', float: 'float64' };
const GO_PARSER: Record<Exclude<FlagKind, 'string'>, string> = {
  bool: 'ParseBool',
  int: 'ParseInt',
  float: 'ParseFloat',
};
const FLAG_TYPE: Record<FlagKind, FlagType> = { string: 'string', bool: 'boolean', int: 'int', float: 'float' };

/** `specs` as the runtime's flag table, and their aliases. */
function flagTable(specs: readonly FlagSpec[]): { table: FlagTable; aliases: Record<string, string> } {
  const table: Record<string, FlagDefinition> = {};
  const aliases: Record<string, string> = {};
  for (const spec of specs) {
    table[spec.name] = { type: FLAG_TYPE[spec.kind], usage: spec.usage };
    for (const alias of spec.aliases ?? []) aliases[alias] = spec.name;
  }
  return { table, aliases };
}

type Values = Map<string, string | number | boolean>;

/** Help and version are urfave/cli flags: noted wherever they come, while parsing goes on. */
const HELP_REQUESTS = { help: 'help', h: 'help' };
const ROOT_REQUESTS = { ...HELP_REQUESTS, version: 'version', v: 'version' };

/**
 * Parses flags of `specs` Go-style from `args` until the first non-flag, into `values`; returns the rest and the
 * requests among help and version (`requests`) that came.
 */
function parseFlagSet(
  args: readonly string[],
  specs: readonly FlagSpec[],
  requests: Readonly<Record<string, string>>,
  values: Values,
): { rest: string[]; help: boolean; version: boolean } {
  const { table, aliases } = flagTable(specs);
  let parsed: ParsedFlags;
  try {
    parsed = parseGoFlags(args, table, { aliases, requests });
  } catch (err) {
    if (err instanceof CommandLineError) throw new UsageError(err.message, err.flag, 2);
    throw err;
  }
  for (const [name, value] of parsed.values) values.set(name, value);
  return {
    rest: parsed.rest,
    help: parsed.requests?.has('help') === true,
    version: parsed.requests?.has('version') === true,
  };
}

/**
 * Fills flags missing from the command line from their environment variables, as urfave/cli v3 does: an empty
 * variable sets a string flag to "" and a boolean to false, and leaves a number at its default.
 */
function applyEnv(specs: readonly FlagSpec[], values: Values, env: Readonly<Record<string, string | undefined>>): void {
  for (const spec of specs) {
    if (spec.env === undefined || values.has(spec.name)) continue;
    const raw = env[spec.env];
    if (raw === undefined) continue;
    if (raw === '') {
      if (spec.kind === 'string') values.set(spec.name, '');
      if (spec.kind === 'bool') values.set(spec.name, false);
      continue;
    }
    const value = convertFlagValue({ type: FLAG_TYPE[spec.kind], usage: spec.usage }, raw);
    if (typeof value === 'object') {
      const parser = GO_PARSER[spec.kind as Exclude<FlagKind, 'string'>];
      // strconv's wording of the flag package's `parse error`.
      const reason = value.error === 'parse error' ? 'invalid syntax' : value.error;
      throw new UsageError(
        `could not parse "${raw}" as ${GO_TYPE[spec.kind]} value from environment variable "${spec.env}" for flag ${spec.name}: ` +
          `strconv.${parser}: parsing "${raw}": ${reason}`,
        spec.name,
        2,
      );
    }
    values.set(spec.name, value);
  }
}

/** `ADDR:PORT`, `:PORT` (every IPv4 address) or `[IPv6]:PORT`, port 0 to 65535. */
export function parseEndpoint(value: string): Endpoint {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65_535) {
    throw new UsageError(
      `invalid flag http-endpoint "${value}": want ADDR:PORT, such as ":9090" or "127.0.0.1:9090"`,
      'http-endpoint',
    );
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A Go duration (`15s`, `500ms`, `1m30s`) in ms, greater than zero, parsed as `kprov-hostpath` parses it. A value
 * that does not parse is a syntax error, worded as Go's `flag` package words a bad `flag.Duration`.
 */
export function parseDuration(name: string, value: string): number {
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(value))
    throw new UsageError(`invalid value "${value}" for flag -${name}: parse error`, name, 2);
  let ms = 0;
  for (const [, n, , unit] of value.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g))
    ms += Number(n) * (UNIT_MS[unit ?? 's'] ?? 1000);
  if (ms <= 0) throw new UsageError(`invalid flag ${name} "${value}": must be greater than zero`, name);
  return ms;
}

/** Upstream's non-empty check, with its message. */
function nonEmpty(name: string, value: string): string {
  if (value === '') throw new UsageError(`invalid empty flag ${name}`, name);
  return value;
}

/**
 * No command: kuttiproject/provisioner-localvolume's image runs its binary without arguments, with `KUTTI_NODE_NAME`
 * and `KUTTI_ROOT_PATH` set (kutti's manifest). With either of them set, this is `start --node-mode` with kutti's
 * provisioner name (unless `PROVISIONER_NAME` names another), and both must be set, as kutti requires. Without them
 * it is a usage error that prints the help (upstream prints the help and exits 0, so a pod run without arguments
 * would restart without saying why).
 */
function startAsKutti(values: Values, env: Readonly<Record<string, string | undefined>>): void {
  const nodeName = env.KUTTI_NODE_NAME ?? '';
  const rootPath = env.KUTTI_ROOT_PATH ?? '';
  if (nodeName === '' && rootPath === '') throw new UsageError(NO_COMMAND_MESSAGE, undefined, 2, true);
  const missing = nodeName === '' ? 'KUTTI_NODE_NAME' : rootPath === '' ? 'KUTTI_ROOT_PATH' : undefined;
  if (missing !== undefined) {
    throw new UsageError(
      `no command given and ${missing} is empty: kuttiproject/provisioner-localvolume's environment needs both KUTTI_NODE_NAME (the node, from spec.nodeName) and KUTTI_ROOT_PATH (the root path of the volumes)`,
      missing === 'KUTTI_NODE_NAME' ? 'node-name' : 'kutti-root-path',
    );
  }
  values.set('node-mode', true);
  if ((env.PROVISIONER_NAME ?? '') === '') values.set('provisioner-name', KUTTI_PROVISIONER_NAME);
}

/**
 * Parses `argv` (the arguments after the program name) and `env` as `local-path-provisioner` does. Returns what to
 * do: start with options, print help (`--help`, `-h`), or print the version. No command starts as
 * kuttiproject/provisioner-localvolume when its environment is set (`KUTTI_NODE_NAME`, `KUTTI_ROOT_PATH`: node mode
 * with its provisioner name), and is a usage error otherwise ({@link NO_COMMAND_MESSAGE}, with the help).
 *
 * Values come from the flag, else its environment variable, else the default. Upstream's checks run in its start-up
 * order (provisioner-name, namespace, configmap-name, helper-image, service-account-name, the retry counts,
 * worker-threads), then ours.
 *
 * @throws {@link UsageError} naming the flag, with upstream's message where upstream has one.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  version = DEFAULT_VERSION,
): Command {
  const values: Values = new Map();
  const root = parseFlagSet(argv, GLOBAL_FLAGS, ROOT_REQUESTS, values);
  if (root.help) return { kind: 'help', text: HELP };
  if (root.version) return { kind: 'version', text: `${PROGRAM} version ${version}\n` };
  const [command, ...rest] = root.rest;
  if (command === undefined) startAsKutti(values, env);
  else if (command !== 'start') throw new UsageError(`unrecognized command: ${command}`, undefined, 2);
  else {
    const start = parseFlagSet(rest, [...GLOBAL_FLAGS, ...START_FLAGS], HELP_REQUESTS, values);
    if (start.help) return { kind: 'help', text: HELP };
    if (start.rest.length > 0)
      throw new UsageError(`unexpected argument "${start.rest[0]}": start takes no arguments`, undefined, 2);
  }
  applyEnv([...GLOBAL_FLAGS, ...START_FLAGS], values, env);

  const str = (name: string, dflt: string): string => {
    const v = values.get(name);
    return typeof v === 'string' ? v : dflt;
  };
  const num = (name: string, dflt: number): number => {
    const v = values.get(name);
    return typeof v === 'number' ? v : dflt;
  };
  const bool = (name: string, dflt: boolean): boolean => {
    const v = values.get(name);
    return typeof v === 'boolean' ? v : dflt;
  };
  const optional = (s: string): string | undefined => (s === '' ? undefined : s);

  const provisionerName = nonEmpty('provisioner-name', str('provisioner-name', 'rancher.io/local-path'));
  const namespace = nonEmpty('namespace', str('namespace', 'local-path-storage'));
  const configmapName = nonEmpty('configmap-name', str('configmap-name', 'local-path-config'));
  const helperImage = nonEmpty('helper-image', str('helper-image', 'rancher/library-busybox:1.32.1'));
  const serviceAccountName = nonEmpty(
    'service-account-name',
    str('service-account-name', 'local-path-provisioner-service-account'),
  );
  const provisioningRetryCount = num('provisioning-retry-count', 15);
  if (provisioningRetryCount < 0)
    throw new UsageError('invalid negative integer flag provisioning-retry-count', 'provisioning-retry-count');
  const deletionRetryCount = num('deletion-retry-count', 15);
  if (deletionRetryCount < 0)
    throw new UsageError('invalid negative integer flag deletion-retry-count', 'deletion-retry-count');
  const workerThreads = num('worker-threads', 4);
  if (workerThreads <= 0)
    throw new UsageError('invalid zero or negative integer flag worker-threads', 'worker-threads');

  const leaderElectionNamespace = nonEmpty('leader-election-namespace', str('leader-election-namespace', namespace));
  const leaseDurationMs = parseDuration('leader-election-lease-duration', str('leader-election-lease-duration', '15s'));
  const renewDeadlineMs = parseDuration('leader-election-renew-deadline', str('leader-election-renew-deadline', '10s'));
  const retryPeriodMs = parseDuration('leader-election-retry-period', str('leader-election-retry-period', '2s'));
  // client-go's checks in NewLeaderElector, named by flag.
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new UsageError(
      'invalid flag leader-election-lease-duration: must be longer than leader-election-renew-deadline',
      'leader-election-lease-duration',
    );
  }
  if (!(renewDeadlineMs > 1.2 * retryPeriodMs)) {
    throw new UsageError(
      'invalid flag leader-election-renew-deadline: must be longer than 1.2 × leader-election-retry-period',
      'leader-election-renew-deadline',
    );
  }
  const endpointText = str('http-endpoint', '');
  const httpEndpoint = endpointText === '' ? undefined : parseEndpoint(endpointText);
  const healthPort = num('health-port', 8080);
  if (httpEndpoint !== undefined && httpEndpoint.port !== 0 && httpEndpoint.port === healthPort) {
    throw new UsageError(
      `invalid flag http-endpoint "${endpointText}": port ${healthPort} is already the health-port`,
      'http-endpoint',
    );
  }
  const loggingFormat = str('logging-format', 'text');
  if (loggingFormat !== 'text' && loggingFormat !== 'json') {
    throw new UsageError(`invalid flag logging-format "${loggingFormat}": want "text" or "json"`, 'logging-format');
  }
  const nodeMode = bool('node-mode', false);
  // kuttiproject/provisioner-localvolume's variable, read when neither the flag nor NODE_NAME is set.
  const nodeName = optional(values.has('node-name') ? str('node-name', '') : (env.KUTTI_NODE_NAME ?? ''));
  if (nodeMode && nodeName === undefined) {
    throw new UsageError(
      'invalid empty flag node-name: --node-mode needs the name of the node it runs on (NODE_NAME, from the downward API spec.nodeName)',
      'node-name',
    );
  }
  const kuttiRootPath = optional(str('kutti-root-path', ''));
  let config = optional(str('config', ''));
  if (kuttiRootPath !== undefined) {
    if (!nodeMode)
      throw new UsageError('invalid flag kutti-root-path: it needs --node-mode (NODE_MODE)', 'kutti-root-path');
    if (config !== undefined) {
      throw new UsageError(
        'invalid flag kutti-root-path: give either --config or --kutti-root-path (KUTTI_ROOT_PATH), not both',
        'kutti-root-path',
      );
    }
    const cleaned = kuttiRootPath.replace(/\/+$/, '');
    if (!kuttiRootPath.startsWith('/') || cleaned === '' || /(^|\/)\.\.?(\/|$)|\/\//.test(kuttiRootPath)) {
      throw new UsageError(
        `invalid flag kutti-root-path "${kuttiRootPath}": want a clean absolute path other than /`,
        'kutti-root-path',
      );
    }
    config = JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [cleaned] }] });
  }
  const qps = num('kube-api-qps', 5);
  const burst = num('kube-api-burst', 10);
  // client-go would build a bucket that refuses every request; a negative QPS turns the limit off, burst and all.
  if (qps >= 0 && burst < 0) throw new UsageError('invalid negative integer flag kube-api-burst', 'kube-api-burst');

  return {
    kind: 'start',
    options: {
      debug: bool('debug', false),
      config,
      provisionerName,
      namespace,
      helperImage,
      kubeconfig: optional(str('kubeconfig', '')),
      configmapName,
      serviceAccountName,
      helperPodFile: optional(str('helper-pod-file', '')),
      workerThreads,
      provisioningRetryCount,
      deletionRetryCount,
      allowUnsafeHelperPodTemplate: bool('allow-unsafe-helper-pod-template', false),
      kubeApiQps: qps === 0 ? 5 : qps,
      kubeApiBurst: burst === 0 ? 10 : burst,
      healthPort,
      leaderElection: bool('leader-election', true),
      leaderElectionNamespace,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
      releaseOnCancel: bool('leader-election-release-on-cancel', true),
      httpEndpoint,
      loggingFormat,
      nodeMode,
      nodeName,
      hostRoot: optional(str('host-root', '')),
      kuttiRootPath,
      configMountPath: optional(env.CONFIG_MOUNT_PATH ?? ''),
    },
  };
}
