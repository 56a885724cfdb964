/**
 * @packageDocumentation
 * `@kprov/provisioner-lib/runtime`: the way to write a provisioner binary. `runProvisioner({ name, flags, setup })`
 * owns what every binary repeats: the sig-storage sidecars' common flags (`--kubeconfig`, `--leader-election*`,
 * `--http-endpoint`, `--kube-api-qps`/`--kube-api-burst`, `--worker-threads`, `--logging-format`, `-v`), the
 * kubeconfig and client-side rate limit, the logger, the prom-client registry, the metrics and health endpoint,
 * signals, the graceful stop that gives the Lease up, and exit codes. The binary keeps its own flags and its setup.
 *
 * This entry point imports prom-client and pino, the library's optional peers: install both to use it.
 */
// First: the V8 flags are set as this module is loaded, before the modules below make any code hot (pino and
// prom-client load on first use). package.json's sideEffects keeps dist/runtime.js whole in a consumer's bundle.
export {
  addV8Flags,
  DEFAULT_V8_FLAGS,
  restartWithoutJit,
  restartWithV8Flags,
  V8_FLAGS_ENV,
  V8_FLAGS_SET,
  v8FlagsToSet,
} from './runtime/v8-flags.js';
export { runProvisioner } from './runtime/run-provisioner.js';
export type {
  ControllerOverrides,
  DaemonSetup,
  EndpointPaths,
  PreflightContext,
  ProvisionerSetup,
  RunWithFlags,
  RunWithParser,
  RuntimeContext,
  RuntimeOptions,
  SetupContext,
  StartedProvisioner,
} from './runtime/run-options.js';
export {
  COMMON_DEFAULTS,
  pickCommonOptions,
  resolveCommonOptions,
  type CommonOptions,
  type EndpointAddress,
  type ResolvedCommonOptions,
} from './runtime/common-options.js';
export {
  COMMON_FLAGS,
  commonOptionsOf,
  parseEndpointAddress,
  type CommonOptionsOfOptions,
} from './runtime/common-flags.js';
export {
  flagsCommandLine,
  type CommandLine,
  type CommandLineParser,
  type Env,
  type FlagsCommandLineOptions,
} from './runtime/command-line.js';
export type { FlagDefinition, FlagTable, FlagType, FlagValue, FlagValues } from './runtime/flag-table.js';
export {
  CommandLineError,
  parseGoFlags,
  completeFlagValues,
  convertFlagValue,
  type CommandLineErrorOptions,
  type CompleteFlagValuesOptions,
  type EnvRules,
  type GoFlagsOptions,
  type ParsedFlags,
  type ParsedValue,
} from './runtime/go-flags.js';
export { formatGoDuration, parseGoDuration } from './runtime/go-duration.js';
export { leaseTimingProblem, longerThan, type LeaseTimingProblem, type LeaseTimings } from './runtime/lease-timing.js';
export { flagDefaultText, usageText } from './runtime/usage.js';
export { DEFAULT_MESSAGES, type RuntimeMessages } from './runtime/messages.js';
export { stopSignal, type StopSignal, type StopSignalOptions } from './runtime/stop-signal.js';
export { kubeClientConfig } from './runtime/kube-client.js';
export { LastGood, type LastGoodOptions, type Offered } from './runtime/last-good.js';
export type { LogSink } from './pino.js';
