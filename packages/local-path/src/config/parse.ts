/**
 * Loading `config.json`: decoding, then canonicalization with upstream's rules and error strings (reference 2.2).
 *
 * @packageDocumentation
 */
import { parsePathCapacity, parseSize } from './sizes.js';
import { decodeConfig } from './decode.js';
import { ConfigError } from './errors.js';
import { storageModeOf, type StorageMode } from './paths.js';
import {
  DEFAULT_CMD_TIMEOUT_SECONDS,
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  type Config,
  type RawConfig,
  type RawStorageClassConfig,
  type PathCapacity,
  type StorageClassConfig,
} from './schema.js';

/** Prefix upstream puts on every canonicalization error. */
export const CANONICALIZATION_FAILED = 'StorageClass config canonicalization failed';

/**
 * Lexically cleans an absolute path as Go's `filepath.Clean` (hence `filepath.Abs`) does: repeated and trailing
 * slashes, `.` and `..` are resolved (`/a/b/` → `/a/b`, `/a/../b` → `/b`, `/..` → `/`).
 */
export function cleanAbsolutePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

function nodeLabel(node: string): string {
  return node === DEFAULT_PATH_FOR_NON_LISTED_NODES
    ? `the ${DEFAULT_PATH_FOR_NON_LISTED_NODES} entry`
    : `node "${node}"`;
}

/** Known keys a misspelt one may have meant: `nodePathMapp` → `nodePathMap`. */
function didYouMean(unknownKeys: readonly string[]): string {
  if (unknownKeys.length === 0) return '';
  return ` (unknown keys, ignored: ${unknownKeys.join(', ')}; check their spelling)`;
}

/**
 * Refuses a class config that can provision nothing, which upstream accepts and only fails on at provision time:
 * both `nodePathMap` and `sharedFileSystemPath` (upstream's words), neither of them or an empty `nodePathMap`
 * (upstream's words), or a `nodePathMap` where no node has a path.
 */
function checkStorage(config: StorageClassConfig, unknownKeys: readonly string[]): void {
  let mode: StorageMode;
  try {
    mode = storageModeOf(config);
  } catch (err) {
    if (!(err instanceof ConfigError) || err.code !== 'unconfigured') throw err;
    throw new ConfigError(
      err.code,
      err.upstream,
      `set nodePathMap (per-node directories) or sharedFileSystemPath (a shared file system); this config could provision nothing${didYouMean(unknownKeys)}`,
    );
  }
  if (mode === 'local' && [...config.nodePathMap.values()].every((paths) => paths.length === 0)) {
    throw new ConfigError(
      'no-paths',
      'no node in nodePathMap has a path',
      'give at least one node (or DEFAULT_PATH_FOR_NON_LISTED_NODES) a path; this config could provision nothing',
    );
  }
}

/**
 * Checks and cleans one class config (upstream's `canonicalizeStorageClassConfig`). Errors carry upstream's bare
 * message (without the `StorageClass config canonicalization failed` prefix).
 */
function canonicalizeClass(raw: RawStorageClassConfig): StorageClassConfig {
  const nodePathMap = new Map<string, string[]>();
  const capacities = new Map<string, Map<string, PathCapacity>>();
  raw.nodePathMap.forEach((entry, index) => {
    if (entry === null) {
      // Upstream dereferences the nil entry and crashes; refuse it instead.
      throw new ConfigError(
        'null-entry',
        `nodePathMap entry ${index} is null`,
        'remove the null entry from nodePathMap',
      );
    }
    const { node, paths } = entry;
    if (nodePathMap.has(node)) {
      throw new ConfigError(
        'duplicate-node',
        `duplicate node ${node}`,
        `list ${nodeLabel(node)} once in nodePathMap, with all its paths`,
      );
    }
    const cleaned: string[] = [];
    nodePathMap.set(node, cleaned);
    for (const [i, p] of paths.entries()) {
      // An empty path crashes upstream (index out of range); it fails the same check as a relative one here.
      if (!p.startsWith('/')) {
        throw new ConfigError(
          'relative-path',
          `path must start with / for path ${p} on node ${node}`,
          `use an absolute path such as /opt/local-path-provisioner for ${nodeLabel(node)}`,
        );
      }
      const path = cleanAbsolutePath(p);
      if (path === '/') {
        throw new ConfigError(
          'root-path',
          `cannot use root ('/') as path on node ${node}`,
          `use a directory below / for ${nodeLabel(node)}, such as /opt/local-path-provisioner`,
        );
      }
      if (cleaned.includes(path)) {
        throw new ConfigError(
          'duplicate-path',
          `duplicate path ${p} on node ${node}`,
          `list ${path} once for ${nodeLabel(node)} (paths are compared after cleaning, so /a/b/ is /a/b)`,
        );
      }
      cleaned.push(path);
      const capacity = entry.capacities?.[i];
      if (capacity !== undefined) {
        const byPath = capacities.get(node) ?? new Map<string, PathCapacity>();
        byPath.set(path, parsePathCapacity(capacity, `capacity of ${path} on node ${node}`));
        capacities.set(node, byPath);
      }
    }
  });
  const bounds = sizeBounds(raw);
  return {
    nodePathMap,
    sharedFileSystemPath: raw.sharedFileSystemPath,
    ...(capacities.size === 0 ? {} : { capacities }),
    ...bounds,
  };
}

/** `minSize` and `maxSize` of a class config, checked (ours). */
function sizeBounds(raw: RawStorageClassConfig): { minSize?: bigint; maxSize?: bigint } {
  const out: { minSize?: bigint; maxSize?: bigint } = {};
  if (raw.minSize !== undefined) out.minSize = parseSize(raw.minSize, 'minSize');
  if (raw.maxSize !== undefined) out.maxSize = parseSize(raw.maxSize, 'maxSize');
  if (out.minSize !== undefined && out.maxSize !== undefined && out.minSize > out.maxSize) {
    throw new ConfigError(
      'invalid-size',
      `minSize ${raw.minSize} is larger than maxSize ${raw.maxSize}`,
      'make minSize at most maxSize',
    );
  }
  return out;
}

/**
 * Validates a decoded config (upstream's `canonicalizeConfig`). When `storageClassConfigs` is empty the top-level
 * `nodePathMap`/`sharedFileSystemPath` are checked and used for every class; otherwise each class config is
 * checked (in file order) and the top level is ignored. Unlike upstream, a config that can provision nothing is
 * refused here rather than at provision time: both `nodePathMap` and `sharedFileSystemPath`, neither of them (an
 * empty `nodePathMap` counts as none), or a `nodePathMap` in which no node has a path. Unknown keys become
 * `warnings`. `sharedFileSystemPath` itself is not checked, as upstream.
 *
 * @throws {@link ConfigError} with upstream's message `StorageClass config canonicalization failed: <msg>`, or
 *   `config for class <name> is invalid: StorageClass config canonicalization failed: <msg>` for a class config.
 */
export function canonicalizeConfig(raw: RawConfig): Config {
  const storageClassConfigs = new Map<string, StorageClassConfig>();
  let defaultConfig: StorageClassConfig | undefined;
  const wrapped = (err: unknown, prefix: string): unknown => (err instanceof ConfigError ? err.wrap(prefix) : err);
  const unknownKeys = raw.unknownKeys ?? [];
  if (raw.storageClassConfigs === null || raw.storageClassConfigs.size === 0) {
    try {
      defaultConfig = canonicalizeClass(raw);
      checkStorage(defaultConfig, unknownKeys);
    } catch (err) {
      throw wrapped(err, CANONICALIZATION_FAILED);
    }
  } else {
    for (const [name, classRaw] of raw.storageClassConfigs) {
      try {
        const classConfig = canonicalizeClass(classRaw);
        checkStorage(
          classConfig,
          unknownKeys.filter((k) => k.startsWith(`storageClassConfigs.${name}.`)),
        );
        storageClassConfigs.set(name, classConfig);
      } catch (err) {
        const inner = wrapped(err, CANONICALIZATION_FAILED);
        throw inner instanceof ConfigError ? inner.wrap(`config for class ${name} is invalid`) : inner;
      }
    }
  }
  return {
    defaultConfig,
    storageClassConfigs,
    cmdTimeoutSeconds: raw.cmdTimeoutSeconds > 0 ? raw.cmdTimeoutSeconds : DEFAULT_CMD_TIMEOUT_SECONDS,
    setupCommand: raw.setupCommand,
    teardownCommand: raw.teardownCommand,
    warnings: unknownKeys.map((k) => `unknown key ${k} in config.json, ignored; check its spelling`),
  };
}

/**
 * Parses and validates `config.json` text.
 *
 * @param text - the JSON text.
 * @param configFile - the file it came from, named in JSON errors (`fail to load config file <configFile>: ...`);
 *   defaults to the text itself, as upstream does for a config given inline.
 * @throws {@link ConfigError} for invalid JSON, a value of the wrong type, or a broken canonicalization rule.
 */
export function parseConfig(text: string, configFile?: string): Config {
  return canonicalizeConfig(decodeConfig(text, configFile));
}
