/** `runProvisioner`: a provisioner binary from its flags and its setup, everything between them owned by the runtime. */
import { LeaderElectionLostError, ProvisionController } from '../controller/controller.js';
import type { EventRecorder } from '../events/recorder.js';
import type { HttpEndpoint } from '../metrics/http.js';
import { createLogger } from '../pino.js';
import { promClient } from '../metrics/prom-client.js';
import { prometheusSink } from '../prometheus.js';
import { flagsCommandLine, type CommandLine, type CommandLineParser } from './command-line.js';
import { resolveCommonOptions } from './common-options.js';
import { serveEndpoint } from './endpoint.js';
import type { FlagTable } from './flag-table.js';
import { runtimeKubeConfig } from './kube-client.js';
import { DEFAULT_MESSAGES } from './messages.js';
import type { ProvisionerSetup, RunWithFlags, RunWithParser, RuntimeOptions } from './run-options.js';
import { stopSignal } from './stop-signal.js';

/** The parser of `options.flags`: the binary's own, or the runtime's for a flag table. */
function commandLineOf<O>(
  options: RuntimeOptions<O> & { flags?: FlagTable | CommandLineParser<O> },
): CommandLineParser<O> {
  const flags = options.flags ?? {};
  if (typeof flags === 'function') return flags;
  return flagsCommandLine(flags, {
    name: options.name,
    ...(options.description === undefined ? {} : { description: options.description }),
    ...(options.commonDefaults === undefined ? {} : { commonDefaults: options.commonDefaults }),
    ...(options.version === undefined ? {} : { version: options.version }),
  }) as CommandLineParser<O>;
}

/** Runs the clean-ups, the latest first, each awaited; failures are ignored. */
async function runAll(cleanups: (() => unknown)[]): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // A clean-up that fails must not keep the others from running, nor change the exit code.
    }
  }
}

/**
 * Runs a provisioner binary and resolves with its exit code; a binary's `main` is
 * `process.exit(await runProvisioner({ name, flags, setup }))`.
 *
 * In order: parses the command line (`flags`), and for help or a usage error writes what the parser gave and
 * resolves with its code; builds the logger (pino via `@kprov/provisioner-lib/pino`, `--logging-format`, `-v`);
 * listens for SIGINT and SIGTERM (once: a second signal ends the process at once) and `signal`; runs the binary's
 * `preflight`; loads the
 * kubeconfig and sets the client-side rate limit (`--kube-api-qps`, `--kube-api-burst`, with client-go's throttling
 * log); calls `setup` with all of that and a prom-client registry; makes the `ProvisionController` (common options,
 * then the setup's overrides); serves `/metrics`, `/healthz`, `/readyz` and `/healthz/leader-election` on
 * `--http-endpoint` when set; runs the controller until the stop. On stop the controller finishes its operations and
 * gives the Lease up (`--leader-election-release-on-cancel`, default on), then the clean-ups run and the endpoint
 * closes. A setup that returns a `DaemonSetup` (its own `run`, for a binary that is not a `ProvisionController`) gets
 * everything above but the controller: the endpoint serves its registry and checks, and its `run` runs until the
 * stop.
 *
 * Exit codes: 0 after help or a requested stop (also when it came during start-up); 1 when start-up or the run
 * failed, or the Lease was lost (so that the kubelet restarts the container); 2 (or the binary parser's code) for a
 * command line that cannot be used. The prom-client and pino packages must be installed (optional peers of the
 * library, required by this entry point).
 */
export function runProvisioner<const T extends FlagTable>(options: RunWithFlags<T>): Promise<number>;
/**
 * `runProvisioner` for a binary that keeps its own command line: `flags` is its parser, which returns the common
 * options already parsed beside the binary's own (or what to print and the exit code). Everything after the command
 * line is as above.
 */
export function runProvisioner<O>(options: RunWithParser<O>): Promise<number>;
export async function runProvisioner<O>(
  options: RuntimeOptions<O> & { flags?: FlagTable | CommandLineParser<O> },
): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const env = options.env ?? process.env;
  const messages = { ...DEFAULT_MESSAGES, ...options.messages };
  const command: CommandLine<O> = commandLineOf(options)(options.argv ?? process.argv.slice(2), env);
  if (command.kind === 'exit') {
    if (command.stdout !== undefined) stdout.write(command.stdout);
    if (command.stderr !== undefined) stderr.write(command.stderr);
    return command.code;
  }
  const common = resolveCommonOptions(command.common, options.commonDefaults);
  const logger = createLogger(common.loggingFormat, common.verbosity, stdout);
  const stop = stopSignal({
    signal: options.signal,
    handleSignals: options.handleSignals,
    onSignal: (name) => messages.signal(logger, name),
  });
  const cleanups: (() => unknown)[] = [];
  // An Event recorder the setup gave the controller is the run's to stop, as the controller stops its own.
  let recorder: EventRecorder | undefined;
  const stopRecorder = async (): Promise<void> => {
    const r = recorder;
    recorder = undefined;
    if (r === undefined) return;
    r.shutDown();
    await r.flush();
  };
  try {
    await options.preflight?.({ options: command.options, common, env, logger });
    const kubeConfig = runtimeKubeConfig(common, env, logger, options.rateLimitClock);
    const registry = new promClient.Registry();
    /** Serves the endpoint with `--http-endpoint` (undefined without), closed with the clean-ups. */
    const serve = async (
      controller: ProvisionController | undefined,
      leaderElection: boolean,
      parts: Pick<ProvisionerSetup, 'healthChecks' | 'readyChecks' | 'metricsPath' | 'readyPath'>,
    ): Promise<HttpEndpoint | undefined> => {
      if (common.httpEndpoint === undefined) return undefined;
      const served = await serveEndpoint({
        address: common.httpEndpoint,
        registry,
        controller,
        leaderElection,
        healthChecks: parts.healthChecks,
        readyChecks: parts.readyChecks,
        metricsPath: parts.metricsPath ?? common.metricsPath,
        readyPath: parts.readyPath,
      });
      cleanups.push(() => served.close());
      messages.serving(logger, served.url);
      return served;
    };
    const parts = await options.setup({
      options: command.options,
      common,
      env,
      // Not client-node's class until a method only that class has is called (see loadKubeConfigData): a setup
      // that hands it to the library's clients never loads client-node's entry point.
      kubeConfig,
      logger,
      registry,
      signal: stop.signal,
      defer: (cleanup) => cleanups.push(cleanup),
    });
    if ('run' in parts) {
      const endpoint = await serve(undefined, false, parts);
      await parts.run(stop.signal, { endpoint });
      messages.stopped(logger);
      return 0;
    }
    recorder = parts.controller?.eventRecorder;
    let controller: ProvisionController;
    try {
      controller = new ProvisionController({
        kubeConfig,
        provisionerName: parts.provisionerName,
        provisioner: parts.provisioner,
        threadiness: common.workerThreads,
        leaderElection: common.leaderElection,
        ...(common.leaderElectionNamespace === undefined
          ? {}
          : { leaderElectionNamespace: common.leaderElectionNamespace }),
        leaseDurationMs: common.leaseDurationMs,
        renewDeadlineMs: common.renewDeadlineMs,
        retryPeriodMs: common.retryPeriodMs,
        releaseOnCancel: common.releaseOnCancel,
        ...(common.leaderElectionLabels === undefined ? {} : { leaderElectionLabels: common.leaderElectionLabels }),
        ...parts.controller,
        metrics: prometheusSink(registry),
        logger,
      });
    } catch (err) {
      throw parts.controllerError === undefined ? err : parts.controllerError(err);
    }
    const endpoint = await serve(controller, parts.controller?.leaderElection ?? common.leaderElection, parts);
    parts.beforeRun?.(controller);
    controller.once('started', () => options.onStarted?.({ controller, endpoint }));
    try {
      await controller.run(stop.signal);
    } finally {
      await stopRecorder();
    }
    messages.stopped(logger);
    return 0;
  } catch (err) {
    if (err instanceof LeaderElectionLostError) {
      messages.leadershipLost(logger, err);
      return 1;
    }
    // A stop requested during start-up (while waiting for the API server, say) is a clean exit.
    if (stop.signal.aborted) return 0;
    messages.failed(logger, err);
    return 1;
  } finally {
    stop.dispose();
    stop.abort();
    await stopRecorder();
    await runAll(cleanups);
  }
}
