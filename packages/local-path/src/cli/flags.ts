/**
 * The flags of `local-path-provisioner`, as the runtime's flag tables: upstream's (rancher/local-path-provisioner
 * v0.0.37's names, environment variables and defaults, verbatim: they are the interface), then ours in the sidecars'
 * dialect. The help (`help.ts`) and the parser (`options.ts`) both read these tables.
 *
 * @packageDocumentation
 */
import { CommandLineError, type FlagDefinition, type FlagTable } from '@kprov/provisioner-lib/runtime';
import { DEFAULT_CONFIGMAP_NAME } from '../config/index.js';

/**
 * A value that parses but cannot be used: upstream exits with `Error starting daemon: <message>` (exit code 1). The
 * error names the flag.
 */
export function invalid(message: string, flag: string | undefined): CommandLineError {
  return new CommandLineError(message, flag, { exitCode: 1 });
}

/** Flags of the application itself, valid before `start` (and, as urfave/cli v3 flags are inherited, after it). */
export const GLOBAL_FLAGS = {
  debug: { type: 'boolean', aliases: ['d'], env: 'RANCHER_DEBUG', default: false, usage: 'enable debug logging level' },
} as const satisfies FlagTable;

/** Flags that print something and exit (`--version` only before `start`): shown in the help, parsed as requests. */
export const ACTION_FLAGS = {
  help: { type: 'boolean', aliases: ['h'], usage: 'print this help and exit' },
  version: { type: 'boolean', aliases: ['v'], usage: 'print the version and exit (before "start" only)' },
} as const satisfies FlagTable;

/** Help and version are urfave/cli flags: noted wherever they come, while parsing goes on. */
export const HELP_REQUESTS = { help: 'help', h: 'help' };
/** Before `start`, also the version. */
export const ROOT_REQUESTS = { ...HELP_REQUESTS, version: 'version', v: 'version' };

/** The check of a Lease timing: greater than zero, else a start-up error (exit code 1) naming the flag. */
function positive(name: string): FlagDefinition & { type: 'duration' } {
  return {
    type: 'duration',
    usage: '',
    check: (ms: number, text: string) => {
      if (ms <= 0) throw invalid(`invalid flag ${name} "${text}": must be greater than zero`, name);
    },
  };
}

/** Flags of `start`, in upstream's order. */
export const UPSTREAM_START_FLAGS = {
  config: {
    type: 'string',
    default: '',
    valueName: 'FILE|JSON',
    usage: "a file if it ends in .json, else JSON text; empty: the ConfigMap's config.json",
  },
  'provisioner-name': {
    type: 'string',
    env: 'PROVISIONER_NAME',
    default: 'rancher.io/local-path',
    valueName: 'NAME',
    usage: 'name StorageClasses give as provisioner',
  },
  namespace: {
    type: 'string',
    env: 'POD_NAMESPACE',
    default: 'local-path-storage',
    valueName: 'NS',
    usage: 'namespace of the provisioner, its helper pods and its ConfigMap',
  },
  'helper-image': {
    type: 'string',
    env: 'HELPER_IMAGE',
    default: 'rancher/library-busybox:1.32.1',
    valueName: 'IMAGE',
    usage: 'must not be empty; unused (the image comes from the helper pod template)',
  },
  kubeconfig: {
    type: 'string',
    default: '',
    valueName: 'FILE',
    usage: 'kubeconfig; empty: $KUBECONFIG, else in-cluster, else $HOME/.kube/config',
  },
  'configmap-name': {
    type: 'string',
    default: DEFAULT_CONFIGMAP_NAME,
    valueName: 'NAME',
    usage: 'ConfigMap with config.json, setup, teardown and helperPod.yaml',
  },
  'service-account-name': {
    type: 'string',
    env: 'SERVICE_ACCOUNT_NAME',
    default: 'local-path-provisioner-service-account',
    valueName: 'NAME',
    usage: 'service account of the helper pods',
  },
  'helper-pod-file': {
    type: 'string',
    default: '',
    valueName: 'FILE',
    usage: 'helper pod template; empty: key helperPod.yaml of the ConfigMap',
  },
  'worker-threads': {
    type: 'int',
    default: 4,
    valueName: 'N',
    usage: 'concurrent claim and volume workers (> 0)',
  },
  'provisioning-retry-count': {
    type: 'int',
    default: 15,
    valueName: 'N',
    usage: 'retries of a failed provisioning; 0: retry forever',
  },
  'deletion-retry-count': {
    type: 'int',
    default: 15,
    valueName: 'N',
    usage: 'retries of a failed deletion; 0: retry forever',
  },
  'allow-unsafe-helper-pod-template': {
    type: 'boolean',
    env: 'ALLOW_UNSAFE_HELPER_POD_TEMPLATE',
    default: false,
    usage: 'skip the safety checks of the helper pod template',
  },
  'kube-api-burst': {
    type: 'int',
    aliases: ['kube-client-burst'],
    default: 10,
    valueName: 'N',
    usage: 'API requests sent at once before the QPS limit applies; 0: the default',
  },
  'kube-api-qps': {
    type: 'float',
    aliases: ['kube-client-qps'],
    default: 5,
    valueName: 'QPS',
    usage: 'API client requests per second (client-side limit); 0: the default, negative: no limit',
  },
  'health-port': {
    type: 'int',
    env: 'HEALTH_PORT',
    default: 8080,
    valueName: 'PORT',
    usage: 'port of the health server (/health, /ready) on every address',
  },
} as const satisfies FlagTable;

/** Flags of `start` that upstream does not have: the sidecars' and node mode's. */
export const OUR_START_FLAGS = {
  'leader-election': {
    type: 'boolean',
    default: true,
    usage: 'run only while holding a Lease; turn off with --leader-election=false',
  },
  'leader-election-namespace': {
    type: 'string',
    defaultText: 'the namespace',
    valueName: 'NS',
    usage: 'namespace of the Lease',
  },
  'leader-election-lease-duration': {
    ...positive('leader-election-lease-duration'),
    default: 15_000,
    valueName: 'DURATION',
    usage: 'how long a Lease lasts without renewal',
  },
  'leader-election-renew-deadline': {
    ...positive('leader-election-renew-deadline'),
    default: 10_000,
    valueName: 'DURATION',
    usage: 'how long the leader retries renewing before it gives up',
  },
  'leader-election-retry-period': {
    ...positive('leader-election-retry-period'),
    default: 2_000,
    valueName: 'DURATION',
    usage: 'how often candidates try to acquire and the leader renews',
  },
  'leader-election-release-on-cancel': {
    type: 'boolean',
    default: true,
    usage: 'on SIGTERM/SIGINT, give the Lease up after in-flight operations, for another replica to take at once',
  },
  'http-endpoint': {
    type: 'string',
    defaultText: 'off',
    valueName: 'ADDR:PORT',
    usage: 'serve /metrics, /healthz, /readyz, /healthz/leader-election (e.g. ":9090")',
  },
  'node-mode': {
    type: 'boolean',
    env: 'NODE_MODE',
    default: false,
    usage: 'one provisioner per node (DaemonSet): only claims scheduled to --node-name, directories made in-process',
  },
  // No default: unset, the node name falls back to KUTTI_NODE_NAME.
  'node-name': {
    type: 'string',
    env: 'NODE_NAME',
    defaultText: '""',
    valueName: 'NODE',
    usage: 'node mode: the node this process runs on (KUTTI_NODE_NAME is read too)',
  },
  'host-root': {
    type: 'string',
    env: 'HOST_ROOT',
    default: '',
    valueName: 'DIR',
    usage: "node mode: where the node's root file system is mounted; empty: base paths are mounted at their own paths",
  },
  'kutti-root-path': {
    type: 'string',
    env: 'KUTTI_ROOT_PATH',
    default: '',
    valueName: 'DIR',
    usage:
      "node mode: kuttiproject/provisioner-localvolume's root path: the config is this one base path for every node, and kutti's PVs are deleted by their node",
  },
  'logging-format': {
    type: 'string',
    default: 'text',
    valueName: 'text|json',
    usage: "log format; json is shaped like klog's JSON",
  },
} as const satisfies FlagTable;

/** Every flag of `start`: upstream's, ours, and the global ones it inherits. */
export const START_FLAGS = {
  ...GLOBAL_FLAGS,
  ...UPSTREAM_START_FLAGS,
  ...OUR_START_FLAGS,
} as const satisfies FlagTable;
