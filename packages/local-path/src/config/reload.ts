/**
 * Config reload: {@link ConfigSource}s that keep `config.json` current while the provisioner runs, from a mounted
 * file ({@link FileConfigSource}, `--config <path>`) or from the ConfigMap through the API
 * ({@link ConfigMapConfigSource}, no `--config`). A new config that is invalid never replaces a good one: the last
 * good config stays in force and the problem is logged, optionally recorded as a Warning Event, and reported as
 * `rejected`.
 *
 * @packageDocumentation
 */
export {
  CONFIG_REJECTED_REASON,
  type ConfigEventRecorder,
  type ConfigSnapshot,
  type ConfigSource,
  type ConfigSourceEvents,
  type ConfigSourceListener,
  type ConfigSourceOptions,
} from './reload-core.js';
export {
  DEFAULT_CONFIG_DEBOUNCE_MS,
  DEFAULT_CONFIG_POLL_INTERVAL_MS,
  FileConfigSource,
  type FileConfigSourceOptions,
} from './reload-file.js';
export {
  CONFIG_KEY,
  ConfigMapConfigSource,
  DEFAULT_CONFIGMAP_NAME,
  HELPER_POD_KEY,
  SETUP_KEY,
  TEARDOWN_KEY,
  type ConfigMapConfigSourceOptions,
  type ConfigMapRef,
} from './reload-configmap.js';
