/**
 * The shape of `config.json`: the raw form as decoded (Go's `ConfigData`) and the canonical form that the
 * provisioner works with once the paths are checked and cleaned (Go's `Config`).
 *
 * Keys are matched as Go's `encoding/json` matches struct fields: an exact match or, failing that, a
 * case-insensitive one (Unicode simple case folding, so `sharedFilesystemPath` and `SHAREDFILESYSTEMPATH` both
 * mean `sharedFileSystemPath`). Unknown keys are ignored.
 *
 * @packageDocumentation
 */

/** The `node` value whose paths serve every node not listed by name. */
export const DEFAULT_PATH_FOR_NON_LISTED_NODES = 'DEFAULT_PATH_FOR_NON_LISTED_NODES';

/** Helper-pod timeout, in polling iterations (about seconds), when `cmdTimeoutSeconds` is absent or `<= 0`. */
export const DEFAULT_CMD_TIMEOUT_SECONDS = 120;

/** The JSON key names of `config.json`, spelled as upstream's JSON tags spell them. */
export const CONFIG_KEYS = {
  nodePathMap: 'nodePathMap',
  sharedFileSystemPath: 'sharedFileSystemPath',
  storageClassConfigs: 'storageClassConfigs',
  cmdTimeoutSeconds: 'cmdTimeoutSeconds',
  setupCommand: 'setupCommand',
  teardownCommand: 'teardownCommand',
  node: 'node',
  paths: 'paths',
  path: 'path',
  capacity: 'capacity',
  minSize: 'minSize',
  maxSize: 'maxSize',
} as const;

/** One `nodePathMap` entry as decoded. A missing `node` is `""`; missing or `null` `paths` is `[]`. */
export interface RawNodePathMap {
  node: string;
  paths: string[];
  /**
   * The `capacity` of each path, by index into `paths` (ours): `undefined` for a path written as a plain string or
   * as an object without `capacity`. Absent when no path has one.
   */
  capacities?: (string | undefined)[];
}

/**
 * Storage settings of one class (or of the top level), as decoded. A `null` entry of `nodePathMap` is kept as
 * `null` (upstream crashes on it) and refused only if this class config is canonicalized.
 */
export interface RawStorageClassConfig {
  nodePathMap: (RawNodePathMap | null)[];
  sharedFileSystemPath: string;
  /** `minSize` (ours): the smallest request a claim may make, as a quantity; absent when unset. */
  minSize?: string;
  /** `maxSize` (ours): the largest request a claim may make, as a quantity; absent when unset. */
  maxSize?: string;
}

/**
 * The whole `config.json` as decoded, with Go's zero values for what is absent (`""`, `0`, `[]`). Two raw configs
 * that are deep-equal describe the same config (upstream's reload skips a config deep-equal to the last one).
 */
export interface RawConfig extends RawStorageClassConfig {
  /** Class name → settings; `null` when absent or `null` (upstream logs it as `"storageClassConfigs":null`). */
  storageClassConfigs: Map<string, RawStorageClassConfig> | null;
  cmdTimeoutSeconds: number;
  setupCommand: string;
  teardownCommand: string;
  /** Keys that match no field (Go ignores them silently), as `where.key`, e.g. `nodePathMapp`, `nodePathMap[0].path`. */
  unknownKeys?: string[];
}

/** Validated storage settings of one class: where its volumes go. */
export interface StorageClassConfig {
  /** Node name (or {@link DEFAULT_PATH_FOR_NON_LISTED_NODES}) → cleaned absolute paths, in config order. */
  readonly nodePathMap: ReadonlyMap<string, readonly string[]>;
  /** Shared file system directory, as written (not checked at load time, as upstream); `""` when unset. */
  readonly sharedFileSystemPath: string;
  /**
   * The declared capacity of node paths (ours, opt-in): node name (or {@link DEFAULT_PATH_FOR_NON_LISTED_NODES}) →
   * cleaned path → capacity. A path not in it has no budget (upstream's behaviour). Absent when no path declares one.
   */
  readonly capacities?: ReadonlyMap<string, ReadonlyMap<string, PathCapacity>>;
  /** `minSize` in bytes (ours): smaller claims are refused. Default: no lower bound. */
  readonly minSize?: bigint;
  /** `maxSize` in bytes (ours): larger claims are refused. Default: no upper bound. */
  readonly maxSize?: bigint;
}

/**
 * The capacity of a node path: a number of bytes, or `'auto'` for the size of the file system holding the path,
 * measured on the node (`statfs`).
 */
export type PathCapacity = bigint | 'auto';

/** The validated config. */
export interface Config {
  /**
   * Used for every StorageClass when `storageClassConfigs` is empty; `undefined` otherwise (the top-level
   * `nodePathMap` and `sharedFileSystemPath` are then ignored, neither checked nor used).
   */
  readonly defaultConfig: StorageClassConfig | undefined;
  /** Per-class settings by StorageClass name; empty when the top level applies. */
  readonly storageClassConfigs: ReadonlyMap<string, StorageClassConfig>;
  /** Helper-pod timeout; {@link DEFAULT_CMD_TIMEOUT_SECONDS} when the file gives none or `<= 0`. */
  readonly cmdTimeoutSeconds: number;
  /** Helper command for setup (`""` = `/bin/sh /script/setup`). */
  readonly setupCommand: string;
  /** Helper command for teardown (`""` = `/bin/sh /script/teardown`). */
  readonly teardownCommand: string;
  /** What is worth a warning but not a refusal (unknown keys). */
  readonly warnings?: readonly string[];
}

/** Go's `unicode.ToUpper(unicode.ToLower(r))` for one code point, as `encoding/json` folds names. */
function foldRune(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x80) return ch.toUpperCase();
  if (code === 0x130) return 'I'; // İ: Go's simple lower case is 'i'; JavaScript gives two code points.
  const lower = ch.toLowerCase();
  if ([...lower].length !== 1) return ch;
  const upper = lower.toUpperCase();
  return [...upper].length === 1 ? upper : lower;
}

/** Folds a key as Go's `encoding/json` does, so that `foldKey(a) === foldKey(b)` exactly when Go matches them. */
export function foldKey(key: string): string {
  let out = '';
  for (const ch of key) out += foldRune(ch);
  return out;
}

/**
 * The field of `fields` that JSON key `key` sets, matched as Go's `encoding/json` does: exact name first, then
 * case-insensitively; `undefined` for an unknown key.
 */
export function matchKey<F extends string>(key: string, fields: readonly F[]): F | undefined {
  const exact = fields.find((f) => f === key);
  if (exact !== undefined) return exact;
  const folded = foldKey(key);
  return fields.find((f) => foldKey(f) === folded);
}
