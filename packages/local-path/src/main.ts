/**
 * The `local-path-provisioner` program as a function, in upstream's start-up order (reference 1.5): parse the
 * command line, build the API client, start the health server, load the config and the helper pod template, then
 * run the provisioner under a {@link ProvisionController} until SIGINT/SIGTERM (exit code 0) or until leadership is
 * lost (exit code 1).
 *
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1PersistentVolume, type V1Pod } from '@kubernetes/client-node';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  apiStatus,
  controllerHealthChecks,
  describeError,
  EventRecorder,
  LeaderElectionLostError,
  logThrottledRequests,
  makeApiClient,
  ProvisionController,
  setClientRateLimit,
  startHttpEndpoint,
  withSignal,
  type Clock,
  type HttpEndpoint,
  type Logger,
  type ObjectReference,
} from '@kprov/provisioner-lib';
import { prometheusSink, renderRegistry } from '@kprov/provisioner-lib/prometheus';
import { startHealthServer, type HealthServer } from './cli/health.js';
import { DEFAULT_VERSION, describeUsageError, parseCommandLine, UsageError, type Command, type LocalPathOptions } from './cli/options.js';
import {
  CONFIG_REJECTED_REASON,
  ConfigMapConfigSource,
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  type Config,
  DEFAULT_CONFIG_POLL_INTERVAL_MS,
  FileConfigSource,
  HELPER_POD_KEY,
  parseConfig,
  type ConfigSnapshot,
  type ConfigSource,
} from './config/index.js';
import { loadHelperPodTemplate } from './helper-pod/template.js';
import { loadKubeConfig } from '@kprov/provisioner-lib';
import { createLogger, type LogSink } from '@kprov/provisioner-lib/pino';
import { LocalPathProvisioner, VOLUME_CLEANUP_SKIPPED } from './provisioner/provisioner.js';
import { DEFAULT_RECONCILE_INTERVAL_MS, HelperPodReconciler } from './provisioner/reconciler.js';

/** The Event source of the warnings the provisioner reports about volumes. */
export const EVENT_COMPONENT = 'local-path-provisioner';

/** Reason of the Warning Event for a cleanup skipped because the node is gone (one of the provisioner's `warn` reasons). */
export const VOLUME_WARNING_REASON = VOLUME_CLEANUP_SKIPPED;

/** What {@link main} uses of its surroundings; the defaults are the process's. */
export interface MainContext {
  /** Help, version and logs go here. Default `process.stdout`. */
  stdout?: LogSink;
  /** Usage errors go here. Default `process.stderr`. */
  stderr?: LogSink;
  /** Aborting it stops the program as SIGTERM does (for tests and embedding). */
  signal?: AbortSignal;
  /** Whether SIGINT and SIGTERM stop the program. Default true. */
  handleSignals?: boolean;
  /** Printed by `--version`. Default {@link DEFAULT_VERSION}. */
  version?: string;
  /**
   * Time source of the client-side rate limit (`--kube-api-qps`, `--kube-api-burst`) and of its throttling log.
   * Default the real clock.
   */
  rateLimitClock?: Clock;
  /** How often `<CONFIG_MOUNT_PATH>/helperPod.yaml` is re-read, in ms. Default 30 000 (upstream's). */
  templatePollIntervalMs?: number;
  /**
   * Interval between two passes of the helper pod reconciler (leftover helper pods, directories of interrupted
   * setups), in ms; the first pass runs when the controller starts. Default {@link DEFAULT_RECONCILE_INTERVAL_MS}.
   */
  reconcileIntervalMs?: number;
  /** Called once the controller has started its workers (after leader election, if on). */
  onStarted?: (started: { controller: ProvisionController; endpoint: HttpEndpoint | undefined; health: HealthServer | undefined }) => void;
}

type Env = Readonly<Record<string, string | undefined>>;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A config that never changes (`--config` with inline JSON). */
function staticSource(snapshot: ConfigSnapshot): ConfigSource {
  return {
    current: () => snapshot,
    start: () => Promise.resolve(),
    on: () => () => undefined,
    stopped: () => Promise.resolve(),
  };
}

/** The `--configmap-name` ConfigMap, as the object of the Events about refused configs and templates. */
function configMapRef(options: LocalPathOptions): ObjectReference {
  return { apiVersion: 'v1', kind: 'ConfigMap', namespace: options.namespace, name: options.configmapName };
}

/** `--config`: a file when it ends in `.json`, else inline JSON; none: the ConfigMap through the API. */
function configSource(options: LocalPathOptions, kubeConfig: KubeConfig, logger: Logger, recorder: EventRecorder): ConfigSource {
  const config = options.config;
  if (config === undefined) {
    // The recorder turns a refused config into an InvalidConfig Warning Event on the ConfigMap.
    return new ConfigMapConfigSource({ kubeConfig, namespace: options.namespace, name: options.configmapName }, { logger, recorder });
  }
  // Upstream's manifest mounts the ConfigMap and passes --config <mount>/config.json: a refused file is recorded on
  // that ConfigMap too, so `kubectl describe configmap` shows it.
  if (config.endsWith('.json')) return new FileConfigSource(config, { logger, recorder, involvedObject: configMapRef(options) });
  return staticSource({ config: parseConfig(config), text: config });
}

/** The helper pod template text at start-up: `--helper-pod-file`, else key `helperPod.yaml` of the ConfigMap. */
async function initialTemplateText(options: LocalPathOptions, source: ConfigSource, kubeConfig: KubeConfig, signal: AbortSignal): Promise<string> {
  const { namespace, configmapName } = options;
  const fromConfigMap = (reason: string): Error =>
    new Error(`invalid empty flag helper-pod-file and it also does not exist at ConfigMap ${namespace}/${configmapName} with err: ${reason}`);
  if (options.helperPodFile !== undefined) {
    try {
      return await readFile(options.helperPodFile, 'utf8');
    } catch (err) {
      throw new Error(`could not open file ${options.helperPodFile} with err: ${message(err)}`, { cause: err });
    }
  }
  if (source instanceof ConfigMapConfigSource) {
    const text = source.current().helperPodYaml;
    if (text === undefined) throw fromConfigMap(`${HELPER_POD_KEY} is not exist in local-path-config ConfigMap`);
    return text;
  }
  // The config came from a file or inline JSON: read the template once from the ConfigMap, as upstream.
  let data: Record<string, string> | undefined;
  try {
    const cm = await makeApiClient(kubeConfig, CoreV1Api).readNamespacedConfigMap({ name: configmapName, namespace }, withSignal(signal));
    data = cm.data;
  } catch (err) {
    throw fromConfigMap(message(err));
  }
  const text = data?.[HELPER_POD_KEY];
  if (text === undefined) throw fromConfigMap(`${HELPER_POD_KEY} is not exist in local-path-config ConfigMap`);
  return text;
}

/**
 * Keeps the helper pod template current: re-validated when the ConfigMap's `helperPod.yaml` changes (ConfigMap
 * source, no `--helper-pod-file`) and every `intervalMs` from `<CONFIG_MOUNT_PATH>/helperPod.yaml` when that is set.
 * A bad new template keeps the previous one and is logged. Returns a function that stops the reloads.
 */
function watchTemplate(
  options: LocalPathOptions,
  source: ConfigSource,
  holder: { template: V1Pod },
  logger: Logger,
  recorder: EventRecorder,
  intervalMs: number,
): () => void {
  // The last refused text: the mounted file is re-read every interval, so the same refusal is reported once.
  let refused: string | undefined;
  const apply = (text: string | undefined): void => {
    try {
      if (text === undefined) throw new Error(`${HELPER_POD_KEY} is not exist in local-path-config ConfigMap`);
      holder.template = loadHelperPodTemplate(text, options.allowUnsafeHelperPodTemplate);
      refused = undefined;
      logger.debug({}, 'Applied helper pod template');
    } catch (err) {
      if (text !== undefined && text === refused) {
        logger.debug({ err: message(err) }, 'failed to load the new helper pod manifest; keeping the previous template');
        return;
      }
      refused = text;
      logger.error({ err: message(err) }, 'failed to load the new helper pod manifest; keeping the previous template');
      recorder.event(
        configMapRef(options),
        'Warning',
        CONFIG_REJECTED_REASON,
        `New ${HELPER_POD_KEY} refused, the previous helper pod template stays in force: ${message(err)}`,
      );
    }
  };
  const stops: (() => void)[] = [];
  if (options.helperPodFile === undefined && source instanceof ConfigMapConfigSource) {
    stops.push(
      source.on('changed', (snapshot, previous) => {
        if (snapshot.helperPodYaml !== previous.helperPodYaml) apply(snapshot.helperPodYaml);
      }),
    );
  }
  const mount = options.configMountPath;
  if (mount !== undefined && intervalMs > 0) {
    const file = path.join(mount, HELPER_POD_KEY);
    const timer = setInterval(() => {
      readFile(file, 'utf8').then(apply, (err: unknown) => {
        logger.error({ err: message(err) }, 'failed to load the new helper pod manifest; keeping the previous template');
      });
    }, intervalMs);
    timer.unref();
    stops.push(() => clearInterval(timer));
  }
  return () => {
    for (const stop of stops) stop();
  };
}

/** Node names a config's `nodePathMap`s list (every class), without {@link DEFAULT_PATH_FOR_NON_LISTED_NODES}. */
function listedNodes(config: Config): Set<string> {
  const names = new Set<string>();
  for (const classConfig of [config.defaultConfig, ...config.storageClassConfigs.values()]) {
    for (const node of classConfig?.nodePathMap.keys() ?? []) if (node !== DEFAULT_PATH_FOR_NON_LISTED_NODES) names.add(node);
  }
  return names;
}

/**
 * Warns, once per name, about `nodePathMap` nodes that do not exist in the cluster: allowed (nodes come and go, and
 * a node added later with that name gets those paths), but often a typo. A failed node list is only logged at debug.
 */
async function warnUnknownNodes(config: Config, core: CoreV1Api, logger: Logger, warned: Set<string>, signal: AbortSignal): Promise<void> {
  const listed = [...listedNodes(config)].filter((n) => !warned.has(n));
  if (listed.length === 0) return;
  let existing: Set<string>;
  try {
    existing = new Set((await core.listNode({}, withSignal(signal))).items.map((n) => n.metadata?.name ?? ''));
  } catch (err) {
    logger.debug({ err: describeError(err) }, 'Could not list nodes to check the nodePathMap');
    return;
  }
  for (const node of listed) {
    if (existing.has(node)) continue;
    warned.add(node);
    logger.warn({ node }, `nodePathMap lists node ${node}, which does not exist in the cluster; its paths apply if a node of that name joins (check the spelling)`);
  }
}

/**
 * Whether leader election can run: one GET of the Lease before starting. Upstream's RBAC (an image-only migration)
 * grants nothing on `coordination.k8s.io` leases, so the elector would wait forever for a Lease it may not read;
 * on 403 Forbidden this says what to do and runs without leader election, as upstream runs (one replica, no
 * election). Found, 404, or any other error (left to the elector's retries): run with leader election.
 */
async function leaseReadable(kubeConfig: KubeConfig, options: LocalPathOptions, logger: Logger, signal: AbortSignal): Promise<boolean> {
  const name = options.provisionerName.replaceAll('/', '-');
  const namespace = options.leaderElectionNamespace;
  try {
    await makeApiClient(kubeConfig, CoordinationV1Api).readNamespacedLease({ name, namespace }, withSignal(signal));
    return true;
  } catch (err) {
    const code = apiStatus(err)?.code;
    if (code === 404) return true;
    if (code !== 403) {
      logger.debug({ err: describeError(err) }, 'Could not check the leader election Lease; starting leader election anyway');
      return true;
    }
    logger.error(
      { namespace, lease: name, err: describeError(err) },
      `Leader election needs get, create and update on coordination.k8s.io leases in namespace ${namespace}, which the ` +
        'service account may not do (upstream\'s RBAC has no such rule). Add the leases rule of deploy/local-path-storage.yaml ' +
        '(apiGroups [coordination.k8s.io], resources [leases], verbs [get, create, update]) to the Role in that namespace, ' +
        'or pass --leader-election=false. Continuing without leader election.',
    );
    logger.warn({}, 'Running without leader election: do not run more than one replica, two replicas would provision and delete the same volumes');
    return false;
  }
}

/**
 * client-go's `rest.Config` QPS and Burst for every client made from `kubeConfig` (health checks, config reload,
 * event writes, the controller): one token bucket; the leader election lease client gets one of its own. A negative
 * (or infinite) QPS means no limit. Waits over 1 s are logged with client-go's message.
 */
function limitClientRate(kubeConfig: KubeConfig, options: LocalPathOptions, logger: Logger, clock: Clock | undefined): void {
  const qps = options.kubeApiQps;
  if (qps < 0 || qps === Infinity) {
    setClientRateLimit(kubeConfig, null);
    return;
  }
  const timing = clock === undefined ? {} : { clock };
  setClientRateLimit(kubeConfig, { qps, burst: options.kubeApiBurst, ...timing, onThrottled: logThrottledRequests(logger, timing) });
}

/** Parses the command line; a usage error becomes its exit code after upstream's line on `stderr`. */
function parse(argv: readonly string[], env: Env, version: string, stderr: LogSink): Command | number {
  try {
    return parseCommandLine(argv, env, version);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    stderr.write(`${describeUsageError(err)}\n`);
    return err.exitCode;
  }
}

/**
 * Runs `local-path-provisioner` with the given arguments (without `node` and the script) and environment;
 * resolves with the exit code: 0 after `--help`, `--version` or a requested stop; 1 for invalid flag values
 * (`Error starting daemon: ...`), start-up failures and lost leadership; 2 for unparsable command lines
 * (`Usage error, please check your command: ...`).
 */
export async function main(argv: readonly string[], env: Env, context: MainContext = {}): Promise<number> {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const command = parse(argv, env, context.version ?? DEFAULT_VERSION, stderr);
  if (typeof command === 'number') return command;
  if (command.kind !== 'start') {
    stdout.write(command.text);
    return 0;
  }
  const options = command.options;
  const logger = createLogger(options.loggingFormat, options.debug ? 4 : 0, stdout);
  const stop = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    logger.info({ signal: name }, `Receive ${name} to exit`);
    stop.abort();
  };
  const onAbort = (): void => stop.abort();
  if (context.handleSignals !== false) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  context.signal?.addEventListener('abort', onAbort, { once: true });
  if (context.signal?.aborted === true) stop.abort();

  let health: HealthServer | undefined;
  let endpoint: HttpEndpoint | undefined;
  let source: ConfigSource | undefined;
  let recorder: EventRecorder | undefined;
  let stopTemplateWatch: (() => void) | undefined;
  try {
    const kubeConfig = loadKubeConfig(options.kubeconfig ?? (env.KUBECONFIG === '' ? undefined : env.KUBECONFIG), env);
    limitClientRate(kubeConfig, options, logger, context.rateLimitClock);
    // Upstream starts the health server before loading any config.
    health = await startHealthServer({ port: options.healthPort, kubeConfig, namespace: options.namespace, logger });

    const events = new EventRecorder({ source: { component: EVENT_COMPONENT }, kubeConfig, logger });
    recorder = events;
    source = configSource(options, kubeConfig, logger, events);
    await source.start(stop.signal);
    const core = makeApiClient(kubeConfig, CoreV1Api);
    const warnedNodes = new Set<string>();
    const checkNodes = (config: Config): void => void warnUnknownNodes(config, core, logger, warnedNodes, stop.signal);
    checkNodes(source.current().config);
    source.on('changed', (snapshot, previous) => {
      if (snapshot.config !== previous.config) checkNodes(snapshot.config);
    });
    const holder = { template: loadHelperPodTemplate(await initialTemplateText(options, source, kubeConfig, stop.signal), options.allowUnsafeHelperPodTemplate) };
    stopTemplateWatch = watchTemplate(options, source, holder, logger, events, context.templatePollIntervalMs ?? DEFAULT_CONFIG_POLL_INTERVAL_MS);

    const configs = source;
    const provisioner = new LocalPathProvisioner({
      kubeConfig,
      namespace: options.namespace,
      config: () => configs.current().config,
      helperPodTemplate: () => holder.template,
      serviceAccountName: options.serviceAccountName,
      provisionerName: options.provisionerName,
      configMapName: options.configmapName,
      allowUnsafeHelperPodTemplate: options.allowUnsafeHelperPodTemplate,
      logger,
      warn: (pv: V1PersistentVolume, text: string, reason: string) => {
        events.event(
          {
            kind: 'PersistentVolume',
            apiVersion: 'v1',
            name: pv.metadata?.name ?? '',
            ...(pv.metadata?.uid === undefined ? {} : { uid: pv.metadata.uid }),
            ...(pv.metadata?.resourceVersion === undefined ? {} : { resourceVersion: pv.metadata.resourceVersion }),
          },
          'Warning',
          reason,
          text,
        );
      },
    });
    const leaderElection = options.leaderElection && (await leaseReadable(kubeConfig, options, logger, stop.signal));
    const registry = new Registry();
    const controller = new ProvisionController({
      kubeConfig,
      provisionerName: options.provisionerName,
      provisioner,
      threadiness: options.workerThreads,
      failedProvisionThreshold: options.provisioningRetryCount,
      failedDeleteThreshold: options.deletionRetryCount,
      leaderElection,
      leaderElectionNamespace: options.leaderElectionNamespace,
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      releaseOnCancel: options.releaseOnCancel,
      metrics: prometheusSink(registry),
      logger,
    });
    if (options.httpEndpoint !== undefined) {
      collectDefaultMetrics({ register: registry });
      endpoint = await startHttpEndpoint({
        ...options.httpEndpoint,
        renderMetrics: () => renderRegistry(registry),
        ...controllerHealthChecks(controller, leaderElection),
      });
      logger.info({ url: endpoint.url }, 'Serving metrics and health checks');
    }
    const served = { endpoint, health };
    const reconciler = new HelperPodReconciler({
      kubeConfig,
      namespace: options.namespace,
      provisioner,
      timeoutSeconds: () => configs.current().config.cmdTimeoutSeconds,
      logger,
    });
    controller.on('provisioned', (_claim, pv) => void provisioner.volumeSaved(pv));
    controller.once('started', () => {
      void reconciler.run(context.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS, stop.signal);
      context.onStarted?.({ controller, ...served });
    });
    logger.debug({ provisioner: options.provisionerName, leaderElection }, 'Provisioner started');
    await controller.run(stop.signal);
    logger.debug({}, 'Provisioner stopped');
    return 0;
  } catch (err) {
    if (err instanceof LeaderElectionLostError) {
      logger.error({ err: err.message }, 'Leader election lost, exiting');
      return 1;
    }
    // A stop requested while still starting (e.g. while waiting for the ConfigMap) is a clean exit.
    if (stop.signal.aborted) return 0;
    logger.error({}, `Error starting daemon: ${message(err)}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    context.signal?.removeEventListener('abort', onAbort);
    stop.abort();
    stopTemplateWatch?.();
    await source?.stopped().catch(() => undefined);
    if (recorder !== undefined) {
      // Give the last events a moment to be written, without holding the exit for the retries.
      await Promise.race([recorder.flush(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      recorder.shutDown();
    }
    await endpoint?.close().catch(() => undefined);
    await health?.close().catch(() => undefined);
  }
}
