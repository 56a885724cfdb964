/** The options of `runProvisioner`, and what it hands to and takes from the binary's `setup`. */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger as PinoLogger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock/clock.js';
import type { ProvisionController } from '../controller/controller.js';
import type { ProvisionControllerOptions } from '../controller/options.js';
import type { Provisioner } from '../controller/provisioner.js';
import type { HealthCheck, HttpEndpoint } from '../metrics/http.js';
import type { LogSink } from '../pino.js';
import type { CommandLineParser, Env } from './command-line.js';
import type { CommonOptions, ResolvedCommonOptions } from './common-options.js';
import type { FlagTable, FlagValues } from './flag-table.js';
import type { RuntimeMessages } from './messages.js';

/** What the run hands to `onStarted`. */
export interface StartedProvisioner {
  /** The running controller. */
  controller: ProvisionController;
  /** The metrics and health endpoint; undefined when `--http-endpoint` is off. */
  endpoint: HttpEndpoint | undefined;
}

/**
 * What a run uses of its surroundings, the process's by default: a binary's `main(argv, env, context)` passes its
 * context on, so that tests and embedding programs run it in-process.
 */
export interface RuntimeContext {
  /** Help, version and log lines go here. Default `process.stdout`. */
  stdout?: LogSink;
  /** Usage errors go here. Default `process.stderr`. */
  stderr?: LogSink;
  /** Aborting it stops the run as SIGTERM does. Default none. */
  signal?: AbortSignal;
  /** Whether SIGINT and SIGTERM stop the run. Default true. */
  handleSignals?: boolean;
  /** Time source of the client-side rate limit and its throttling log. Default the real clock. */
  rateLimitClock?: Clock;
  /** Called once the controller has started its workers (after acquiring the Lease, with leader election). Default none. */
  onStarted?: (started: StartedProvisioner) => void;
}

/** What the binary's `preflight` gets: the parsed options and the logger. */
export interface PreflightContext<O> {
  /** The binary's own options, as its flags or its parser gave them. */
  options: O;
  /** The common options, defaults filled in. */
  common: ResolvedCommonOptions;
  /** The environment the run was given. */
  env: Env;
  /** The binary's logger (pino, shaped like klog's output, at `-v`'s level, in `--logging-format`). */
  logger: PinoLogger;
}

/** What the binary's `setup` gets: everything the runtime made from the command line. */
export interface SetupContext<O> extends PreflightContext<O> {
  /**
   * The loaded kubeconfig, with the client-side rate limit set on it. It has every method of client-node's
   * `KubeConfig` and is loaded without that class, whose module imports client-node's whole generated client: it
   * becomes one, in place, the first time a method only client-node's class has is called (`makeApiClient`,
   * `applySecurityAuthentication`, ...) or the library's `makeApiClient` or `watchWithAgent` is given it. Until then
   * `kubeConfig instanceof KubeConfig` is false. A binary that passes it only to the library's clients (`informerFor`,
   * `RestClient`, `EventRecorder`) never loads client-node's generated client.
   */
  kubeConfig: KubeConfig;
  /** The prom-client registry the controller's metrics go to, and `/metrics` renders; add the binary's own here. */
  registry: Registry;
  /** Aborts when the run stops (signal, `context.signal`, or a failure): the binary's own loops stop on it. */
  signal: AbortSignal;
  /**
   * Registers a clean-up, run when the run ends (also when `setup` or start-up fails), after the controller stopped
   * (the Lease released), the latest first, each awaited; a failing one is ignored.
   */
  defer: (cleanup: () => unknown) => void;
}

/** The controller options a binary may set beside those the runtime sets from the common options. */
export type ControllerOverrides = Partial<
  Omit<ProvisionControllerOptions, 'kubeConfig' | 'provisionerName' | 'provisioner' | 'metrics' | 'logger'>
>;

/** Where the endpoint serves what, for a binary that keeps its upstream's paths. */
export interface EndpointPaths {
  /** Path of the metrics. Default `--metrics-path` (common option `metricsPath`), `/metrics`; this one wins over it. */
  metricsPath?: string;
  /** Path of the readiness checks (their aggregate; `<readyPath>/<name>` for one). Default `/readyz`. */
  readyPath?: string;
}

/** What the binary's `setup` gives back: its provisioner, and how the controller around it is made. */
export interface ProvisionerSetup extends EndpointPaths {
  /** The provisioner name StorageClasses refer to, e.g. `example.com/hostpath`. */
  provisionerName: string;
  /** The implementation. */
  provisioner: Provisioner;
  /**
   * Controller options beyond the common ones (`failedProvisionThreshold`, `addFinalizer`, ...); these win over the
   * runtime's, e.g. `leaderElection: false` when the binary finds it cannot elect. An `eventRecorder` given here (the
   * binary's one recorder for its own Events and the controller's) is the run's to stop: once the controller stopped,
   * before the `stopped` line and the clean-ups, the run shuts it down and waits for its queued Events (one more try
   * each), as the controller does with its own. Default none.
   */
  controller?: ControllerOverrides;
  /** Liveness checks served at `/healthz/<name>` beside `leader-election`. Default none. */
  healthChecks?: Record<string, HealthCheck>;
  /** Readiness checks served at `/readyz/<name>` beside `informers`. Default none. */
  readyChecks?: Record<string, HealthCheck>;
  /**
   * Maps an error of the controller's constructor (an option it refused) to the error reported, e.g. to name the
   * binary's flag. Default: reported as is.
   */
  controllerError?: (err: unknown) => unknown;
  /**
   * Called with the controller once it is made and the endpoint serves, right before it runs: add listeners, log the
   * start. Default none.
   */
  beforeRun?: (controller: ProvisionController) => void;
}

/**
 * What the `setup` of a binary that is not a `ProvisionController` gives back (a per-node daemon, say): its own run
 * function. The runtime serves the endpoint with the registry, these checks and no controller checks, runs `run`
 * until the stop, and exits 0 when it resolves, 1 when it rejects (unless the stop was requested).
 */
export interface DaemonSetup extends EndpointPaths {
  /**
   * Runs the daemon until `signal` aborts (the stop: a signal, `context.signal`, or a failure), then resolves once its
   * work has stopped. `endpoint` is the metrics and health endpoint, undefined when `--http-endpoint` is off.
   */
  run: (signal: AbortSignal, started: { endpoint: HttpEndpoint | undefined }) => Promise<void>;
  /** Liveness checks served at `/healthz/<name>`. Default none: `/healthz` answers `ok`. */
  healthChecks?: Record<string, HealthCheck>;
  /** Readiness checks served at `<readyPath>/<name>`. Default none: the ready path answers `ok`. */
  readyChecks?: Record<string, HealthCheck>;
}

/** Options of `runProvisioner` whatever its flags, `O` being the binary's own options. */
export interface RuntimeOptions<O> extends RuntimeContext {
  /** The program's name, for the help and usage errors of the runtime's command line. */
  name: string;
  /** Text above the flags in `--help`, with a flag table (a binary with its own parser prints its own help). Default none. */
  description?: string;
  /** The binary's defaults of the common options, e.g. `{ leaderElection: false }` for a DaemonSet. Default none. */
  commonDefaults?: CommonOptions;
  /**
   * The version `--version` prints (as `<name> <version>`, exit code 0), with a flag table (a binary with its own
   * parser prints its own). Default `unknown`, as the sidecars print when their build set none.
   */
  version?: string;
  /**
   * Checks the binary's options against this machine before anything reaches out (before the kubeconfig is loaded):
   * a directory that must exist, a file that must be readable. A thrown error fails the run as a failed `setup`
   * does (exit code 1, the `failed` log line). Default none.
   */
  preflight?: (context: PreflightContext<O>) => void | Promise<void>;
  /**
   * Builds the provisioner from the parsed options; may be async. A binary that is not a `ProvisionController`
   * returns a {@link DaemonSetup} (its own `run`) instead; `onStarted` is not called for it.
   */
  setup: (context: SetupContext<O>) => ProvisionerSetup | DaemonSetup | Promise<ProvisionerSetup | DaemonSetup>;
  /** Arguments after the program name. Default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** Environment variables. Default `process.env`. */
  env?: Env;
  /** The binary's wording of the runtime's log lines. Default `DEFAULT_MESSAGES`, line by line. */
  messages?: Partial<RuntimeMessages>;
}

/** `runProvisioner` with the runtime's command line: the common flags and the binary's flag table. */
export interface RunWithFlags<T extends FlagTable> extends RuntimeOptions<FlagValues<T>> {
  /**
   * The binary's flags, added to the common ones and parsed in the sidecars' Go `flag` syntax (see
   * `flagsCommandLine`). Default `{}`: the common flags only.
   */
  flags?: T;
}

/** `runProvisioner` with the binary's own command line dialect. */
export interface RunWithParser<O> extends RuntimeOptions<O> {
  /** The binary's parser: it keeps its own flag names and syntax, and returns the common options already parsed. */
  flags: CommandLineParser<O>;
}
