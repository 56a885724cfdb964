/**
 * Where a volume goes: the class config for a StorageClass (reference 2.4), shared vs node-local mode (2.3), and
 * the base path on a node (2.5), with upstream's error strings.
 *
 * @packageDocumentation
 */
import { ConfigError } from './errors.js';
import { DEFAULT_PATH_FOR_NON_LISTED_NODES, type Config, type StorageClassConfig } from './schema.js';

/** A source of uniform numbers in `[0, 1)`, like `Math.random`; injected so tests can pin the choice. */
export type RandomSource = () => number;

/**
 * The class config for a StorageClass: the top-level config when `storageClassConfigs` is empty, else the entry
 * named `storageClassName` (provision: the claim's class; delete: the PV's `spec.storageClassName`).
 *
 * @param config - the active config; `undefined` when none was ever loaded.
 * @throws {@link ConfigError} `no valid config available`, or `BUG: Got request for unexpected storage class <name>`.
 */
export function selectClassConfig(config: Config | undefined, storageClassName: string): StorageClassConfig {
  if (config === undefined) {
    throw new ConfigError('no-config', 'no valid config available', 'fix config.json so that it loads');
  }
  if (config.defaultConfig !== undefined) return config.defaultConfig;
  const found = config.storageClassConfigs.get(storageClassName);
  if (found === undefined) {
    const known = [...config.storageClassConfigs.keys()].join(', ');
    throw new ConfigError(
      'unknown-class',
      `BUG: Got request for unexpected storage class ${storageClassName}`,
      `add "${storageClassName}" to storageClassConfigs (configured: ${known})`,
    );
  }
  return found;
}

/** `'local'`: a directory on the selected node; `'shared'`: under `sharedFileSystemPath`, on every node. */
export type StorageMode = 'local' | 'shared';

/**
 * Decides the mode of a class config as upstream does at provision and delete time: a non-empty `nodePathMap`
 * (even if every node lists no paths) means node-local, a non-empty `sharedFileSystemPath` means shared.
 *
 * @throws {@link ConfigError} `both nodePathMap and sharedFileSystemPath are defined. Please make sure only one is
 *   in use`, or `both nodePathMap and sharedFileSystemPath are unconfigured`.
 */
export function storageModeOf(classConfig: StorageClassConfig): StorageMode {
  const local = classConfig.nodePathMap.size > 0;
  const shared = classConfig.sharedFileSystemPath !== '';
  if (local && shared) {
    throw new ConfigError(
      'both-defined',
      'both nodePathMap and sharedFileSystemPath are defined. Please make sure only one is in use',
      'remove either nodePathMap or sharedFileSystemPath from this config',
    );
  }
  if (local) return 'local';
  if (shared) return 'shared';
  throw new ConfigError(
    'unconfigured',
    'both nodePathMap and sharedFileSystemPath are unconfigured',
    'set nodePathMap (per-node directories) or sharedFileSystemPath (a shared file system) in this config',
  );
}

/** The paths a node may use, and whether they come from the {@link DEFAULT_PATH_FOR_NON_LISTED_NODES} entry. */
export interface NodePaths {
  readonly paths: readonly string[];
  readonly fromDefault: boolean;
}

/**
 * The paths configured for `nodeName`, falling back to the {@link DEFAULT_PATH_FOR_NON_LISTED_NODES} entry only
 * when the node is not listed at all (a listed node with no paths does not fall back).
 *
 * @throws {@link ConfigError} `config doesn't contain node <n>, and no DEFAULT_PATH_FOR_NON_LISTED_NODES available`.
 */
export function pathsForNode(classConfig: StorageClassConfig, nodeName: string): NodePaths {
  const listed = classConfig.nodePathMap.get(nodeName);
  if (listed !== undefined) return { paths: listed, fromDefault: false };
  const fallback = classConfig.nodePathMap.get(DEFAULT_PATH_FOR_NON_LISTED_NODES);
  if (fallback !== undefined) return { paths: fallback, fromDefault: true };
  throw new ConfigError(
    'node-not-listed',
    `config doesn't contain node ${nodeName}, and no ${DEFAULT_PATH_FOR_NON_LISTED_NODES} available`,
    `add node "${nodeName}" or a ${DEFAULT_PATH_FOR_NON_LISTED_NODES} entry to nodePathMap`,
  );
}

/** What {@link chooseBasePath} needs to know about the request. */
export interface BasePathRequest {
  /** The selected node's name (ignored in shared mode). */
  readonly nodeName: string;
  /** The StorageClass parameter `nodePath`; `undefined` or `""` means "any". Compared exactly, not cleaned. */
  readonly nodePath?: string | undefined;
  /** Picks among several paths; `Math.random` by default. */
  readonly random?: RandomSource | undefined;
  /** Receives upstream's debug message when the node falls back to the default entry. */
  readonly debug?: ((message: string) => void) | undefined;
}

/** The chosen base directory. */
export interface BasePath {
  readonly mode: StorageMode;
  /** The base directory; in shared mode `sharedFileSystemPath` as written. */
  readonly path: string;
  /** In node-local mode, whether the node used the {@link DEFAULT_PATH_FOR_NON_LISTED_NODES} entry. */
  readonly fromDefault: boolean;
}

/**
 * The base directory for a volume of this class on `request.nodeName`: in shared mode `sharedFileSystemPath`;
 * in node-local mode the requested `nodePath` if the node has it, else one of the node's paths uniformly at random.
 *
 * @throws {@link ConfigError} from {@link storageModeOf} and {@link pathsForNode}, `no local path available on node
 *   <n>` for a listed node without paths, or `config doesn't contain path <nodePath> on node <n>`.
 */
export function chooseBasePath(classConfig: StorageClassConfig, request: BasePathRequest): BasePath {
  if (storageModeOf(classConfig) === 'shared') {
    return { mode: 'shared', path: classConfig.sharedFileSystemPath, fromDefault: false };
  }
  const { nodeName } = request;
  const { paths, fromDefault } = pathsForNode(classConfig, nodeName);
  if (fromDefault) {
    request.debug?.(`config doesn't contain node ${nodeName}, use ${DEFAULT_PATH_FOR_NON_LISTED_NODES} instead`);
  }
  if (paths.length === 0) {
    throw new ConfigError(
      'no-path-on-node',
      `no local path available on node ${nodeName}`,
      fromDefault
        ? `add paths to the ${DEFAULT_PATH_FOR_NON_LISTED_NODES} entry, or list node "${nodeName}" with paths`
        : `add paths for node "${nodeName}" in nodePathMap, or remove its entry so that ${DEFAULT_PATH_FOR_NON_LISTED_NODES} applies`,
    );
  }
  const wanted = request.nodePath ?? '';
  if (wanted !== '') {
    if (!paths.includes(wanted)) {
      throw new ConfigError(
        'path-not-on-node',
        `config doesn't contain path ${wanted} on node ${nodeName}`,
        `set the StorageClass parameter nodePath to one of ${paths.join(', ')} (written exactly, without a trailing slash)`,
      );
    }
    return { mode: 'local', path: wanted, fromDefault };
  }
  const random = request.random ?? Math.random;
  const index = Math.min(paths.length - 1, Math.max(0, Math.floor(random() * paths.length)));
  return { mode: 'local', path: paths[index]!, fromDefault };
}
