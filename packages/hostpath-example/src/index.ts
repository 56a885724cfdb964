/**
 * @packageDocumentation
 * A single-node hostPath dynamic provisioner, the smallest complete program built on `@kprov/provisioner-lib`:
 * the {@link HostPathProvisioner}, the `kprov-hostpath` command line ({@link parseOptions}) and the program
 * itself ({@link main}).
 */
export {
  HostPathProvisioner,
  IDENTITY_ANNOTATION,
  DEFAULT_PV_DIR,
  type HostPathProvisionerOptions,
} from './provisioner.js';
export { parseOptions, HELP, DEFAULT_PROVISIONER_NAME, type CliOptions, type ParseResult } from './options.js';
export { main, type MainContext } from './main.js';
export { loadKubeConfig } from '@kprov/provisioner-lib';
export { createLogger, levelFor, type LogSink } from '@kprov/provisioner-lib/pino';
