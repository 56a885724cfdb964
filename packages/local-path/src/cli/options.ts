/**
 * Command line of `local-path-provisioner`, compatible with rancher/local-path-provisioner v0.0.37:
 * `local-path-provisioner [--debug] start [flags]`, parsed the way urfave/cli (on Go's `flag` package) parses it,
 * plus the sidecar-style flags our binaries share (`--leader-election`, `--http-endpoint`, `--kube-api-qps`, ...),
 * on the runtime's flag tables (`flags.ts`), parser and environment rules (urfave/cli's).
 *
 * Flag names, environment variables, defaults and upstream's validation messages are the interface and are kept
 * verbatim; everything here is pure (no I/O), so the checks upstream makes after reading files or ConfigMaps
 * (`--config`, `--helper-pod-file`) are left to the caller.
 *
 * @packageDocumentation
 */
import {
  CommandLineError,
  completeFlagValues,
  leaseTimingProblem,
  longerThan,
  parseEndpointAddress,
  parseGoFlags,
  type EndpointAddress,
  type Env,
  type FlagTable,
  type ParsedValue,
} from '@kprov/provisioner-lib/runtime';
import packageJson from '../../package.json' with { type: 'json' };
import { KUTTI_PROVISIONER_NAME } from '../executor/node/kutti.js';
import { GLOBAL_FLAGS, HELP_REQUESTS, invalid, ROOT_REQUESTS, START_FLAGS } from './flags.js';
import { HELP, PROGRAM } from './help.js';

export { HELP, PROGRAM };

/** The version `--version` prints: this package's (upstream prints the git tag stamped in at build time). */
export const DEFAULT_VERSION: string = packageJson.version;

/** Where a metrics and health endpoint listens: the runtime's `EndpointAddress`. */
export type Endpoint = EndpointAddress;

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
  httpEndpoint: EndpointAddress | undefined;
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
 * A command line error: the runtime's `CommandLineError`. `flag` names the flag at fault (without dashes) when there
 * is one. `exitCode` is 2 for syntax errors (upstream panics with `Usage error, please check your command:
 * <message>`) and 1 for invalid values (upstream exits via `Error starting daemon: <message>`);
 * {@link describeUsageError} gives that line. `showHelp`: the program prints {@link HELP} before that line (no command
 * was given).
 */
export { CommandLineError as UsageError };

/** The message of a command line without a command, outside kutti's environment (see {@link parseCommandLine}). */
export const NO_COMMAND_MESSAGE =
  'no command given: pass "start" and its flags (such as "start --node-mode" in a DaemonSet), or set KUTTI_NODE_NAME ' +
  'and KUTTI_ROOT_PATH to run as kuttiproject/provisioner-localvolume';

/** The line upstream prints for `err`: the syntax error prefix, or the start-up error prefix. */
export function describeUsageError(err: CommandLineError): string {
  return err.exitCode === 2
    ? `Usage error, please check your command: ${err.message}`
    : `Error starting daemon: ${err.message}`;
}

/** `ADDR:PORT`, `:PORT` (every IPv4 address) or `[IPv6]:PORT`, port 0 to 65535 (the runtime's reading). */
export function parseEndpoint(value: string): Endpoint {
  const endpoint = parseEndpointAddress(value);
  if (endpoint === undefined) {
    throw invalid(
      `invalid flag http-endpoint "${value}": want ADDR:PORT, such as ":9090" or "127.0.0.1:9090"`,
      'http-endpoint',
    );
  }
  return endpoint;
}

/** Upstream's non-empty check, with its message. */
function nonEmpty(name: string, value: string): string {
  if (value === '') throw invalid(`invalid empty flag ${name}`, name);
  return value;
}

/**
 * Parses flags of `table` Go-style from `args` until the first non-flag, into `values`; returns the rest and whether
 * help and version (`requests`) were asked for.
 */
function parseFlagSet(
  args: readonly string[],
  table: FlagTable,
  requests: Readonly<Record<string, string>>,
  values: Map<string, ParsedValue>,
): { rest: string[]; help: boolean; version: boolean } {
  const parsed = parseGoFlags(args, table, { requests });
  for (const [name, value] of parsed.values) values.set(name, value);
  return {
    rest: parsed.rest,
    help: parsed.requests?.has('help') === true,
    version: parsed.requests?.has('version') === true,
  };
}

/**
 * No command: kuttiproject/provisioner-localvolume's image runs its binary without arguments, with `KUTTI_NODE_NAME`
 * and `KUTTI_ROOT_PATH` set (kutti's manifest). With either of them set, this is `start --node-mode` with kutti's
 * provisioner name (unless `PROVISIONER_NAME` names another), and both must be set, as kutti requires. Without them
 * it is a usage error that prints the help (upstream prints the help and exits 0, so a pod run without arguments
 * would restart without saying why).
 */
function startAsKutti(values: Map<string, ParsedValue>, env: Env): void {
  const nodeName = env.KUTTI_NODE_NAME ?? '';
  const rootPath = env.KUTTI_ROOT_PATH ?? '';
  if (nodeName === '' && rootPath === '') throw new CommandLineError(NO_COMMAND_MESSAGE, undefined, { showHelp: true });
  const missing = nodeName === '' ? 'KUTTI_NODE_NAME' : rootPath === '' ? 'KUTTI_ROOT_PATH' : undefined;
  if (missing !== undefined) {
    throw invalid(
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
 * Values come from the flag, else its environment variable (urfave/cli's rules), else the default. What does not
 * parse fails first, as the flags are read (a Lease timing that is not a duration greater than zero among them); then
 * upstream's checks run in its start-up order (provisioner-name, namespace, configmap-name, helper-image,
 * service-account-name, the retry counts, worker-threads), then ours.
 *
 * @throws `UsageError` (the runtime's `CommandLineError`) naming the flag, with upstream's message where upstream has
 *   one.
 */
export function parseCommandLine(argv: readonly string[], env: Env, version = DEFAULT_VERSION): Command {
  const given = new Map<string, ParsedValue>();
  const root = parseFlagSet(argv, GLOBAL_FLAGS, ROOT_REQUESTS, given);
  if (root.help) return { kind: 'help', text: HELP };
  if (root.version) return { kind: 'version', text: `${PROGRAM} version ${version}\n` };
  const [command, ...rest] = root.rest;
  if (command === undefined) startAsKutti(given, env);
  else if (command !== 'start') throw new CommandLineError(`unrecognized command: ${command}`);
  else {
    const start = parseFlagSet(rest, START_FLAGS, HELP_REQUESTS, given);
    if (start.help) return { kind: 'help', text: HELP };
    if (start.rest.length > 0)
      throw new CommandLineError(`unexpected argument "${start.rest[0]}": start takes no arguments`);
  }
  const values = completeFlagValues(given, START_FLAGS, env, { envRules: 'urfave' });
  const str = (name: keyof typeof START_FLAGS): string | undefined => values.get(name) as string | undefined;
  const num = (name: keyof typeof START_FLAGS): number => values.get(name) as number;
  const bool = (name: keyof typeof START_FLAGS): boolean => values.get(name) as boolean;
  const optional = (s: string | undefined): string | undefined => (s === '' ? undefined : s);

  const provisionerName = nonEmpty('provisioner-name', str('provisioner-name')!);
  const namespace = nonEmpty('namespace', str('namespace')!);
  const configmapName = nonEmpty('configmap-name', str('configmap-name')!);
  const helperImage = nonEmpty('helper-image', str('helper-image')!);
  const serviceAccountName = nonEmpty('service-account-name', str('service-account-name')!);
  const provisioningRetryCount = num('provisioning-retry-count');
  if (provisioningRetryCount < 0)
    throw invalid('invalid negative integer flag provisioning-retry-count', 'provisioning-retry-count');
  const deletionRetryCount = num('deletion-retry-count');
  if (deletionRetryCount < 0)
    throw invalid('invalid negative integer flag deletion-retry-count', 'deletion-retry-count');
  const workerThreads = num('worker-threads');
  if (workerThreads <= 0) throw invalid('invalid zero or negative integer flag worker-threads', 'worker-threads');

  const leaderElectionNamespace = nonEmpty('leader-election-namespace', str('leader-election-namespace') ?? namespace);
  const timings = {
    leaseDurationMs: num('leader-election-lease-duration'),
    renewDeadlineMs: num('leader-election-renew-deadline'),
    retryPeriodMs: num('leader-election-retry-period'),
  };
  const problem = leaseTimingProblem(timings);
  if (problem !== undefined) throw invalid(`invalid flag ${problem.flag}: ${longerThan(problem)}`, problem.flag);
  const endpointText = str('http-endpoint') ?? '';
  const httpEndpoint = endpointText === '' ? undefined : parseEndpoint(endpointText);
  const healthPort = num('health-port');
  if (httpEndpoint !== undefined && httpEndpoint.port !== 0 && httpEndpoint.port === healthPort) {
    throw invalid(
      `invalid flag http-endpoint "${endpointText}": port ${healthPort} is already the health-port`,
      'http-endpoint',
    );
  }
  const loggingFormat = str('logging-format');
  if (loggingFormat !== 'text' && loggingFormat !== 'json') {
    throw invalid(`invalid flag logging-format "${loggingFormat}": want "text" or "json"`, 'logging-format');
  }
  const nodeMode = bool('node-mode');
  // kuttiproject/provisioner-localvolume's variable, read when neither the flag nor NODE_NAME is set.
  const nodeName = optional(str('node-name') ?? env.KUTTI_NODE_NAME ?? '');
  if (nodeMode && nodeName === undefined) {
    throw invalid(
      'invalid empty flag node-name: --node-mode needs the name of the node it runs on (NODE_NAME, from the downward API spec.nodeName)',
      'node-name',
    );
  }
  const kuttiRootPath = optional(str('kutti-root-path'));
  let config = optional(str('config'));
  if (kuttiRootPath !== undefined) {
    if (!nodeMode) throw invalid('invalid flag kutti-root-path: it needs --node-mode (NODE_MODE)', 'kutti-root-path');
    if (config !== undefined) {
      throw invalid(
        'invalid flag kutti-root-path: give either --config or --kutti-root-path (KUTTI_ROOT_PATH), not both',
        'kutti-root-path',
      );
    }
    const cleaned = kuttiRootPath.replace(/\/+$/, '');
    if (!kuttiRootPath.startsWith('/') || cleaned === '' || /(^|\/)\.\.?(\/|$)|\/\//.test(kuttiRootPath)) {
      throw invalid(
        `invalid flag kutti-root-path "${kuttiRootPath}": want a clean absolute path other than /`,
        'kutti-root-path',
      );
    }
    config = JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [cleaned] }] });
  }
  const qps = num('kube-api-qps');
  const burst = num('kube-api-burst');
  // client-go would build a bucket that refuses every request; a negative QPS turns the limit off, burst and all.
  if (qps >= 0 && burst < 0) throw invalid('invalid negative integer flag kube-api-burst', 'kube-api-burst');

  return {
    kind: 'start',
    options: {
      debug: bool('debug'),
      config,
      provisionerName,
      namespace,
      helperImage,
      kubeconfig: optional(str('kubeconfig')),
      configmapName,
      serviceAccountName,
      helperPodFile: optional(str('helper-pod-file')),
      workerThreads,
      provisioningRetryCount,
      deletionRetryCount,
      allowUnsafeHelperPodTemplate: bool('allow-unsafe-helper-pod-template'),
      kubeApiQps: qps === 0 ? 5 : qps,
      kubeApiBurst: burst === 0 ? 10 : burst,
      healthPort,
      leaderElection: bool('leader-election'),
      leaderElectionNamespace,
      ...timings,
      releaseOnCancel: bool('leader-election-release-on-cancel'),
      httpEndpoint,
      loggingFormat,
      nodeMode,
      nodeName,
      hostRoot: optional(str('host-root')),
      kuttiRootPath,
      configMountPath: optional(env.CONFIG_MOUNT_PATH ?? ''),
    },
  };
}
