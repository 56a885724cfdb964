/**
 * @packageDocumentation
 * local-path-provisioner (rancher/local-path-provisioner v0.0.37) on `@kprov/provisioner-lib`: the
 * {@link LocalPathProvisioner}, `config.json` parsing and its reloading sources, the helper pod template, the
 * `local-path-provisioner` command line ({@link parseCommandLine}) and the program itself ({@link main}).
 */
export const packageName = '@kprov/local-path';

export * from './provisioner/index.js';
export * from './config/index.js';
export * from './executor/index.js';
export * from './executor/helper-pod/index.js';
export * from './executor/node/index.js';
export * from './capacity/index.js';
export { PROVISIONED_ON_ANNOTATION, SELECTED_NODE_ANNOTATION } from './volume/annotations.js';
export {
  checkTeardownTarget,
  TeardownRefusedError,
  type ClaimIdentity,
  type TeardownTarget,
} from './volume/teardown-guard.js';
export {
  DEFAULT_VERSION,
  HELP,
  NO_COMMAND_MESSAGE,
  PROGRAM,
  UsageError,
  describeUsageError,
  parseCommandLine,
  parseEndpoint,
  type Command,
  type Endpoint,
  type LocalPathOptions,
} from './cli/options.js';
export {
  readinessChecks,
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
  type ReadinessCheck,
} from './cli/health.js';
export { VOLUME_WARNING_REASON, main, type MainContext } from './main.js';
export { loadKubeConfig } from '@kprov/provisioner-lib';
export { createLogger, levelFor, type LogSink } from '@kprov/provisioner-lib/pino';
