/**
 * The `kprov-hostpath` program as a function: parse flags, build the provisioner and the controller, serve metrics
 * and health, run until SIGINT/SIGTERM (exit code 0) or until leadership is lost (exit code 1).
 */
import { stat } from 'node:fs/promises';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { controllerHealthChecks, LeaderElectionLostError, ProvisionController, startHttpEndpoint, type HttpEndpoint } from '@kprov/provisioner-lib';
import { prometheusSink, renderRegistry } from '@kprov/provisioner-lib/prometheus';
import { loadKubeConfig } from '@kprov/provisioner-lib';
import { createLogger, type LogSink } from '@kprov/provisioner-lib/pino';
import { parseOptions, type CliOptions } from './options.js';
import { HostPathProvisioner } from './provisioner.js';

/** What {@link main} uses of its surroundings; the defaults are the process's. */
export interface MainContext {
  /** Help text and logs go here. Default `process.stdout`. */
  stdout?: LogSink;
  /** Usage errors go here. Default `process.stderr`. */
  stderr?: LogSink;
  /** Aborting it stops the program as SIGTERM does (for tests and embedding). */
  signal?: AbortSignal;
  /** Whether SIGINT and SIGTERM stop the program. Default true. */
  handleSignals?: boolean;
  /** Called once the controller has started its workers (after leader election, if on). */
  onStarted?: (started: { controller: ProvisionController; endpoint: HttpEndpoint | undefined }) => void;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function checkHostRoot(hostRoot: string): Promise<void> {
  const s = await stat(hostRoot).catch(() => undefined);
  if (s?.isDirectory() !== true) {
    throw new Error(`--host-root "${hostRoot}" (HOST_ROOT) is not a directory: it must be where this process sees the node's root filesystem`);
  }
}

/** Builds the controller, maps its construction errors onto the flags that caused them. */
function buildController(options: CliOptions, env: Readonly<Record<string, string | undefined>>, parts: {
  provisioner: HostPathProvisioner;
  registry: Registry;
  logger: ReturnType<typeof createLogger>;
}): ProvisionController {
  try {
    return new ProvisionController({
      kubeConfig: loadKubeConfig(options.kubeconfig, env),
      provisionerName: options.provisionerName,
      provisioner: parts.provisioner,
      leaderElection: options.leaderElection,
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      releaseOnCancel: options.releaseOnCancel,
      ...(options.leaderElectionNamespace === undefined ? {} : { leaderElectionNamespace: options.leaderElectionNamespace }),
      metrics: prometheusSink(parts.registry),
      logger: parts.logger,
    });
  } catch (err) {
    if (/provisionerName/.test(message(err))) throw new Error(`invalid --provisioner-name: ${message(err)}`, { cause: err });
    throw err;
  }
}

/**
 * Runs `kprov-hostpath` with the given arguments (without `node` and the script) and environment; resolves with
 * the exit code: 0 after `--help` or a requested stop, 1 on errors and lost leadership, 2 for unparsable flags.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, context: MainContext = {}): Promise<number> {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const parsed = parseOptions(argv, env);
  if (parsed.kind === 'help') {
    stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'error') {
    stderr.write(`kprov-hostpath: ${parsed.message}\n`);
    return parsed.exitCode;
  }
  const options = parsed.options;
  const logger = createLogger(options.loggingFormat, options.verbosity, stdout);
  const stop = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    logger.info({ signal: name }, 'Received signal, shutting down');
    stop.abort();
  };
  const onAbort = (): void => stop.abort();
  let endpoint: HttpEndpoint | undefined;
  if (context.handleSignals !== false) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  context.signal?.addEventListener('abort', onAbort, { once: true });
  if (context.signal?.aborted === true) stop.abort();
  try {
    await checkHostRoot(options.hostRoot);
    const registry = new Registry();
    const provisioner = new HostPathProvisioner({ pvDir: options.pvDir, identity: options.nodeName, hostRoot: options.hostRoot, logger });
    const controller = buildController(options, env, { provisioner, registry, logger });
    if (options.httpEndpoint !== undefined) {
      collectDefaultMetrics({ register: registry });
      endpoint = await startHttpEndpoint({
        ...options.httpEndpoint,
        renderMetrics: () => renderRegistry(registry),
        ...controllerHealthChecks(controller, options.leaderElection),
      });
      logger.info({ url: endpoint.url }, 'Serving metrics and health checks');
    }
    const served = endpoint;
    // The library logs "Started provisioner controller" then.
    controller.once('started', () => {
      context.onStarted?.({ controller, endpoint: served });
    });
    logger.info(
      { provisioner: options.provisionerName, node: options.nodeName, pvDir: options.pvDir, hostRoot: options.hostRoot, leaderElection: options.leaderElection },
      'Starting hostPath provisioner',
    );
    await controller.run(stop.signal);
    logger.info({}, 'Stopped');
    return 0;
  } catch (err) {
    if (err instanceof LeaderElectionLostError) logger.error({ err: err.message }, 'Leader election lost, exiting');
    else logger.error({ err: message(err) }, 'Provisioner failed');
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    context.signal?.removeEventListener('abort', onAbort);
    await endpoint?.close().catch(() => undefined);
  }
}
