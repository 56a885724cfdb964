/**
 * `local-path-provisioner status`: prints, per node and path, the capacity, allocated, free space and volume count,
 * read from the API with the user's kubeconfig.
 *
 * ```
 * local-path-provisioner status [--kubeconfig FILE] [--namespace NS] [--configmap-name NAME]
 *     [--config FILE|JSON] [--provisioner-name NAME] [--output text|json]
 * ```
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { describeError, loadKubeConfig, makeCoreV1Calls, withSignal } from '@kprov/provisioner-lib';
import { CommandLineError, parseGoFlags, type FlagTable } from '@kprov/provisioner-lib/runtime';
import { parseConfig, type Config } from '../config/index.js';
import { formatUsage, readUsage, usageJson } from './status.js';

/** The word that selects this command. */
export const STATUS_COMMAND = 'status';

/** Options of `status`. */
export interface StatusOptions {
  /** `--kubeconfig`; undefined: `$KUBECONFIG`, in-cluster, `$HOME/.kube/config`. */
  readonly kubeconfig: string | undefined;
  /** `--namespace` / `POD_NAMESPACE`: where the ConfigMap is. Default `local-path-storage`. */
  readonly namespace: string;
  /** `--configmap-name`. Default `local-path-config`. */
  readonly configmapName: string;
  /** `--config`: a file if it ends in `.json`, else JSON text; undefined: the ConfigMap's `config.json`. */
  readonly config: string | undefined;
  /** `--provisioner-name` / `PROVISIONER_NAME`. Default `rancher.io/local-path`. */
  readonly provisionerName: string;
  /** `--output`: `text` (default) or `json`. */
  readonly output: 'text' | 'json';
}

const FLAGS: FlagTable = {
  kubeconfig: { type: 'string', usage: 'kubeconfig' },
  namespace: { type: 'string', usage: 'namespace of the ConfigMap' },
  'configmap-name': { type: 'string', usage: 'ConfigMap with config.json' },
  config: { type: 'string', usage: 'config file (.json) or JSON text instead of the ConfigMap' },
  'provisioner-name': { type: 'string', usage: 'provisioner name of the PVs' },
  output: { type: 'string', usage: 'text or json' },
};

/** The help of `status`. */
export const STATUS_HELP = `USAGE:
  local-path-provisioner status [flags]

Prints, per node and path of config.json, the capacity, the space allocated to volumes, the free space and the
number of volumes, read from the API.

FLAGS:
  --kubeconfig FILE          kubeconfig (default: $KUBECONFIG, in-cluster, $HOME/.kube/config)
  --namespace NS             namespace of the ConfigMap (env POD_NAMESPACE, default "local-path-storage")
  --configmap-name NAME      ConfigMap with config.json (default "local-path-config")
  --config FILE|JSON         a config file (.json) or JSON text instead of the ConfigMap
  --provisioner-name NAME    provisioner name of the PVs (env PROVISIONER_NAME, default "rancher.io/local-path")
  --output text|json         output format (default "text")
`;

/**
 * `argv` as a `status` command line (global `--debug`/`-d` flags may come first), or `undefined` when the command
 * is not `status`.
 */
export function statusArguments(argv: readonly string[]): string[] | undefined {
  let i = 0;
  while (i < argv.length && /^--?(d|debug)(=.*)?$/.test(argv[i]!)) i++;
  return argv[i] === STATUS_COMMAND ? argv.slice(i + 1) : undefined;
}

/**
 * Parses the flags of `status`; `'help'` for `--help`.
 *
 * @throws Error for an unknown flag or a bad `--output`.
 */
export function parseStatusOptions(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): StatusOptions | 'help' {
  const parsed = parseGoFlags(args, FLAGS, { requests: { help: 'help', h: 'help' } });
  if (parsed.help || parsed.requests?.has('help') === true) return 'help';
  if (parsed.rest.length > 0) throw new CommandLineError(`unexpected argument "${parsed.rest[0]}"`);
  const str = (name: string): string | undefined => {
    const v = parsed.values.get(name);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const output = str('output') ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new CommandLineError(`invalid flag output "${output}": want text or json`);
  return {
    kubeconfig: str('kubeconfig'),
    namespace: str('namespace') ?? (env.POD_NAMESPACE || 'local-path-storage'),
    configmapName: str('configmap-name') ?? 'local-path-config',
    config: str('config'),
    provisionerName: str('provisioner-name') ?? (env.PROVISIONER_NAME || 'rancher.io/local-path'),
    output,
  };
}

async function loadConfig(
  options: StatusOptions,
  kubeConfig: ReturnType<typeof loadKubeConfig>,
  signal: AbortSignal,
): Promise<Config> {
  const given = options.config;
  if (given !== undefined)
    return given.endsWith('.json') ? parseConfig(await readFile(given, 'utf8'), given) : parseConfig(given);
  const cm = await makeCoreV1Calls(kubeConfig).readNamespacedConfigMap(
    { name: options.configmapName, namespace: options.namespace },
    withSignal(signal),
  );
  const text = cm.data?.['config.json'];
  if (text === undefined)
    throw new Error(`config.json is not exist in ${options.namespace}/${options.configmapName} ConfigMap`);
  return parseConfig(text);
}

/** What {@link runStatus} writes to. */
export interface StatusIo {
  /** The report, or the help. */
  readonly stdout: { write(text: string): unknown };
  /** Errors. */
  readonly stderr: { write(text: string): unknown };
  /** Aborts the API reads. Default: none. */
  readonly signal?: AbortSignal | undefined;
}

/** Runs `status` with its arguments (after the word `status`); resolves with the exit code (0, 1 failure, 2 usage). */
export async function runStatus(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: StatusIo,
): Promise<number> {
  let options: StatusOptions | 'help';
  try {
    options = parseStatusOptions(args, env);
  } catch (err) {
    io.stderr.write(`Usage error, please check your command: ${describeError(err)}\n${STATUS_HELP}`);
    return 2;
  }
  if (options === 'help') {
    io.stdout.write(STATUS_HELP);
    return 0;
  }
  const signal = io.signal ?? new AbortController().signal;
  try {
    const kubeConfig = loadKubeConfig(options.kubeconfig, env);
    const config = await loadConfig(options, kubeConfig, signal);
    const usage = await readUsage(kubeConfig, config, options.provisionerName, signal);
    io.stdout.write(options.output === 'json' ? usageJson(usage) : formatUsage(usage));
    return 0;
  } catch (err) {
    io.stderr.write(`status: ${describeError(err)}\n`);
    return 1;
  }
}
