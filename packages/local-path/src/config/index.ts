/**
 * `config.json` of local-path-provisioner: schema, parsing with upstream's rules, and path selection.
 *
 * @packageDocumentation
 */
export { ConfigError, type ConfigErrorCode } from './errors.js';
export {
  CONFIG_KEYS,
  DEFAULT_CMD_TIMEOUT_SECONDS,
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  foldKey,
  matchKey,
  type Config,
  type RawConfig,
  type RawNodePathMap,
  type PathCapacity,
  type RawStorageClassConfig,
  type StorageClassConfig,
} from './schema.js';
export { decodeConfig } from './decode.js';
export { CANONICALIZATION_FAILED, canonicalizeConfig, cleanAbsolutePath, parseConfig } from './parse.js';
export { AUTO_CAPACITY, formatBytes, parsePathCapacity, parseSize, quantityToBytes } from './sizes.js';
export {
  chooseBasePath,
  pathsForNode,
  selectClassConfig,
  storageModeOf,
  type BasePath,
  type BasePathRequest,
  type NodePaths,
  type RandomSource,
  type StorageMode,
} from './paths.js';
export * from './reload.js';
