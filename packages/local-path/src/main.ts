/**
 * The `local-path-provisioner` program as a function, in upstream's start-up order (reference 1.5): parse the
 * command line, build the API client, start the health server, load the config and the helper pod template, then
 * run the provisioner under a `ProvisionController` until SIGINT/SIGTERM (exit code 0) or until leadership is lost
 * (exit code 1). The command line and the start-up after the API client are this binary's; the rest (API client and
 * rate limit, logger, metrics and health endpoint, signals, the controller, exit codes) is
 * `@kprov/provisioner-lib/runtime`'s.
 *
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1PersistentVolume,
  type V1Pod,
} from '@kubernetes/client-node';
import {
  apiStatus,
  DEFAULT_EVENT_WRITE_CONCURRENCY,
  DEFAULTS,
  defaultIdentity,
  describeError,
  EventRecorder,
  informerFor,
  makeApiClient,
  stripManagedFields,
  withSignal,
  type HttpEndpoint,
  type Logger,
  type ObjectReference,
  type ProvisionController,
} from '@kprov/provisioner-lib';
import { prometheusSink } from '@kprov/provisioner-lib/prometheus';
import {
  pickCommonOptions,
  runProvisioner,
  type CommandLine,
  type RuntimeContext,
} from '@kprov/provisioner-lib/runtime';
import { CapacityTracker } from './capacity/tracker.js';
import { HelperPodStatfs } from './executor/helper-pod/statfs.js';
import { measureFileSystem } from './executor/node/statfs.js';
import { runStatus, statusArguments } from './capacity/status-command.js';
import { usesCapacity } from './capacity/paths.js';
import { VolumeExpander } from './capacity/expansion.js';
import { startHealthServer, type HealthServer } from './cli/health.js';
import {
  DEFAULT_VERSION,
  describeUsageError,
  HELP,
  parseCommandLine,
  PROGRAM,
  UsageError,
  type Command,
  type LocalPathOptions,
} from './cli/options.js';
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
import { loadHelperPodTemplate } from './executor/helper-pod/template.js';
import { LocalPathProvisioner, VOLUME_CLEANUP_SKIPPED } from './provisioner/provisioner.js';
import { DEFAULT_RECONCILE_INTERVAL_MS, HelperPodReconciler } from './executor/helper-pod/reconciler.js';
import { NodeOrphanReconciler } from './executor/node/orphan-reconciler.js';
import type { NodeScripts } from './executor/node/scripts.js';

/**
 * Event writes in flight per worker thread: a provisioned claim records two Events (`Provisioning`,
 * `ProvisioningSucceeded`), as many as the controller's own recorder keeps in flight.
 */
const EVENTS_PER_WORKER = 2;

/** Reason of the Warning Event for a cleanup skipped because the node is gone (one of the provisioner's `warn` reasons). */
export const VOLUME_WARNING_REASON = VOLUME_CLEANUP_SKIPPED;

/**
 * What {@link main} uses of its surroundings; the defaults are the process's. `stdout` (help, version, logs),
 * `stderr` (usage errors), `signal` (aborting it stops the program as SIGTERM does), `handleSignals` (default true)
 * and `rateLimitClock` (time source of `--kube-api-qps`, `--kube-api-burst` and their throttling log) are the
 * runtime's.
 */
export interface MainContext extends Omit<RuntimeContext, 'onStarted'> {
  /** Printed by `--version`. Default {@link DEFAULT_VERSION}. */
  version?: string;
  /** How often `<CONFIG_MOUNT_PATH>/helperPod.yaml` is re-read, in ms. Default 30 000 (upstream's). */
  templatePollIntervalMs?: number;
  /**
   * Interval between two passes of the helper pod reconciler (leftover helper pods, directories of interrupted
   * setups), in ms; the first pass runs when the controller starts. Default {@link DEFAULT_RECONCILE_INTERVAL_MS}.
   */
  reconcileIntervalMs?: number;
  /** Called once the controller has started its workers (after leader election, if on). */
  onStarted?: (started: {
    controller: ProvisionController;
    endpoint: HttpEndpoint | undefined;
    health: HealthServer | undefined;
  }) => void;
}

type Env = Readonly<Record<string, string | undefined>>;

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
function configSource(
  options: LocalPathOptions,
  kubeConfig: KubeConfig,
  logger: Logger,
  recorder: EventRecorder,
): ConfigSource {
  const config = options.config;
  if (config === undefined) {
    // The recorder turns a refused config into an InvalidConfig Warning Event on the ConfigMap.
    return new ConfigMapConfigSource(
      { kubeConfig, namespace: options.namespace, name: options.configmapName },
      { logger, recorder },
    );
  }
  // Upstream's manifest mounts the ConfigMap and passes --config <mount>/config.json: a refused file is recorded on
  // that ConfigMap too, so `kubectl describe configmap` shows it.
  if (config.endsWith('.json'))
    return new FileConfigSource(config, { logger, recorder, involvedObject: configMapRef(options) });
  return staticSource({ config: parseConfig(config), text: config });
}

/** The helper pod template text at start-up: `--helper-pod-file`, else key `helperPod.yaml` of the ConfigMap. */
async function initialTemplateText(
  options: LocalPathOptions,
  source: ConfigSource,
  kubeConfig: KubeConfig,
  signal: AbortSignal,
): Promise<string> {
  const { namespace, configmapName } = options;
  const fromConfigMap = (reason: string): Error =>
    new Error(
      `invalid empty flag helper-pod-file and it also does not exist at ConfigMap ${namespace}/${configmapName} with err: ${reason}`,
    );
  if (options.helperPodFile !== undefined) {
    try {
      return await readFile(options.helperPodFile, 'utf8');
    } catch (err) {
      throw new Error(`could not open file ${options.helperPodFile} with err: ${describeError(err)}`, { cause: err });
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
    const cm = await makeApiClient(kubeConfig, CoreV1Api).readNamespacedConfigMap(
      { name: configmapName, namespace },
      withSignal(signal),
    );
    data = cm.data;
  } catch (err) {
    throw fromConfigMap(describeError(err));
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
  holder: { template: V1Pod | undefined },
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
        logger.debug(
          { err: describeError(err) },
          'failed to load the new helper pod manifest; keeping the previous template',
        );
        return;
      }
      refused = text;
      logger.error(
        { err: describeError(err) },
        'failed to load the new helper pod manifest; keeping the previous template',
      );
      recorder.event(
        configMapRef(options),
        'Warning',
        CONFIG_REJECTED_REASON,
        `New ${HELPER_POD_KEY} refused, the previous helper pod template stays in force: ${describeError(err)}`,
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
        logger.error(
          { err: describeError(err) },
          'failed to load the new helper pod manifest; keeping the previous template',
        );
      });
    }, intervalMs);
    timer.unref();
    stops.push(() => clearInterval(timer));
  }
  return () => {
    for (const stop of stops) stop();
  };
}

/** A file's text, or `undefined` when it does not exist. */
async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Node mode's `setup` and `teardown` scripts: the ConfigMap's keys (ConfigMap source), else the files `setup` and
 * `teardown` next to the `--config` file (the mounted ConfigMap, read at each use, so an edit applies to the next
 * volume); none with an inline `--config` (or `--kutti-root-path`): the built-in behaviour.
 */
function nodeScripts(options: LocalPathOptions, source: ConfigSource): () => Promise<NodeScripts> {
  return async () => {
    if (source instanceof ConfigMapConfigSource) {
      const { setup, teardown } = source.current();
      return { setup, teardown };
    }
    const config = options.config;
    if (config === undefined || !config.endsWith('.json')) return {};
    const dir = path.dirname(config);
    return {
      setup: await readIfExists(path.join(dir, 'setup')),
      teardown: await readIfExists(path.join(dir, 'teardown')),
    };
  };
}

/** Node names a config's `nodePathMap`s list (every class), without {@link DEFAULT_PATH_FOR_NON_LISTED_NODES}. */
function listedNodes(config: Config): Set<string> {
  const names = new Set<string>();
  for (const classConfig of [config.defaultConfig, ...config.storageClassConfigs.values()]) {
    for (const node of classConfig?.nodePathMap.keys() ?? [])
      if (node !== DEFAULT_PATH_FOR_NON_LISTED_NODES) names.add(node);
  }
  return names;
}

/**
 * Warns, once per name, about `nodePathMap` nodes that do not exist in the cluster: allowed (nodes come and go, and
 * a node added later with that name gets those paths), but often a typo. A failed node list is only logged at debug.
 */
async function warnUnknownNodes(
  config: Config,
  core: CoreV1Api,
  logger: Logger,
  warned: Set<string>,
  signal: AbortSignal,
): Promise<void> {
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
    logger.warn(
      { node },
      `nodePathMap lists node ${node}, which does not exist in the cluster; its paths apply if a node of that name joins (check the spelling)`,
    );
  }
}

/**
 * Whether leader election can run: one GET of the Lease before starting. Upstream's RBAC (an image-only migration)
 * grants nothing on `coordination.k8s.io` leases, so the elector would wait forever for a Lease it may not read;
 * on 403 Forbidden this says what to do and runs without leader election, as upstream runs (one replica, no
 * election). Found, 404, or any other error (left to the elector's retries): run with leader election.
 */
async function leaseReadable(
  kubeConfig: KubeConfig,
  options: LocalPathOptions,
  logger: Logger,
  signal: AbortSignal,
): Promise<boolean> {
  const name = options.provisionerName.replaceAll('/', '-');
  const namespace = options.leaderElectionNamespace;
  try {
    await makeApiClient(kubeConfig, CoordinationV1Api).readNamespacedLease({ name, namespace }, withSignal(signal));
    return true;
  } catch (err) {
    const code = apiStatus(err)?.code;
    if (code === 404) return true;
    if (code !== 403) {
      logger.debug(
        { err: describeError(err) },
        'Could not check the leader election Lease; starting leader election anyway',
      );
      return true;
    }
    logger.error(
      { namespace, lease: name, err: describeError(err) },
      `Leader election needs get, create and update on coordination.k8s.io leases in namespace ${namespace}, which the ` +
        "service account may not do (upstream's RBAC has no such rule). Add the leases rule of deploy/local-path-storage.yaml " +
        '(apiGroups [coordination.k8s.io], resources [leases], verbs [get, create, update]) to the Role in that namespace, ' +
        'or pass --leader-election=false. Continuing without leader election.',
    );
    logger.warn(
      {},
      'Running without leader election: do not run more than one replica, two replicas would provision and delete the same volumes',
    );
    return false;
  }
}

/**
 * The command line as the runtime takes it: upstream's `[--debug] start [flags]` with its help, version and usage
 * errors (`Usage error, please check your command: ...` exits 2, `Error starting daemon: ...` exits 1), and the
 * sidecar-style flags as the common options.
 */
function commandLine(argv: readonly string[], env: Env, version: string): CommandLine<LocalPathOptions> {
  let command: Command;
  try {
    command = parseCommandLine(argv, env, version);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // With no command, the help first and the reason last, where `kubectl logs` of a restarting pod ends.
    const help = err.showHelp ? `${HELP}\n` : '';
    return { kind: 'exit', code: err.exitCode, stderr: `${help}${describeUsageError(err)}\n` };
  }
  if (command.kind !== 'start') return { kind: 'exit', code: 0, stdout: command.text };
  const options = command.options;
  return {
    kind: 'run',
    options,
    // --debug is klog's verbosity 4: debug messages.
    common: pickCommonOptions(options, { verbosity: options.debug ? 4 : 0 }),
  };
}

/**
 * Runs `local-path-provisioner` with the given arguments (without `node` and the script) and environment;
 * resolves with the exit code: 0 after `--help`, `--version` or a requested stop; 1 for invalid flag values
 * (`Error starting daemon: ...`), start-up failures and lost leadership; 2 for unparsable command lines
 * (`Usage error, please check your command: ...`), and for no command at all outside
 * kuttiproject/provisioner-localvolume's environment (the help, then that line). With no command and kutti's
 * environment it runs as kutti (see {@link parseCommandLine}).
 */
export async function main(argv: readonly string[], env: Env, context: MainContext = {}): Promise<number> {
  const { version, templatePollIntervalMs, reconcileIntervalMs, onStarted, ...runtime } = context;
  const status = statusArguments(argv);
  if (status !== undefined) {
    return runStatus(status, env, {
      stdout: runtime.stdout ?? process.stdout,
      stderr: runtime.stderr ?? process.stderr,
      signal: runtime.signal,
    });
  }
  let health: HealthServer | undefined;
  return runProvisioner({
    ...runtime,
    name: PROGRAM,
    argv,
    env,
    flags: (args, vars) => commandLine(args, vars, version ?? DEFAULT_VERSION),
    messages: {
      signal: (logger, name) => logger.info({ signal: name }, `Receive ${name} to exit`),
      stopped: (logger) => logger.debug({}, 'Provisioner stopped'),
      failed: (logger, err) => logger.error({}, `Error starting daemon: ${describeError(err)}`),
    },
    onStarted: (started) => onStarted?.({ ...started, health }),
    setup: async ({ options, common, kubeConfig, logger, registry, signal, defer }) => {
      // Upstream starts the health server before loading any config.
      const served = await startHealthServer({
        port: options.healthPort,
        kubeConfig,
        namespace: options.namespace,
        logger,
      });
      health = served;
      defer(() => served?.close());

      // One recorder for every Event of the process: the controller's (given to it below, with the identity its
      // source names, as the Go library's `<provisioner name>_<identity>`), the refused configs and templates, and
      // the volumes' warnings. The runtime stops it once the controller stopped.
      const identity = defaultIdentity();
      const events = new EventRecorder({
        source: { component: `${options.provisionerName}_${identity}` },
        kubeConfig,
        logger,
        metrics: prometheusSink(registry),
        concurrency: Math.max(DEFAULT_EVENT_WRITE_CONCURRENCY, EVENTS_PER_WORKER * common.workerThreads),
      });
      const source = configSource(options, kubeConfig, logger, events);
      defer(() => source.stopped());
      await source.start(signal);
      const core = makeApiClient(kubeConfig, CoreV1Api);
      const warnedNodes = new Set<string>();
      const checkNodes = (config: Config): void => void warnUnknownNodes(config, core, logger, warnedNodes, signal);
      checkNodes(source.current().config);
      source.on('changed', (snapshot, previous) => {
        if (snapshot.config !== previous.config) checkNodes(snapshot.config);
      });
      // Node mode runs no helper pod: no template is read.
      const nodeMode =
        options.nodeMode && options.nodeName !== undefined
          ? {
              nodeName: options.nodeName,
              hostRoot: options.hostRoot,
              scripts: nodeScripts(options, source),
              kutti: options.kuttiRootPath !== undefined,
            }
          : undefined;
      const holder = {
        template:
          nodeMode === undefined
            ? loadHelperPodTemplate(
                await initialTemplateText(options, source, kubeConfig, signal),
                options.allowUnsafeHelperPodTemplate,
              )
            : undefined,
      };
      if (nodeMode === undefined) {
        defer(
          watchTemplate(
            options,
            source,
            holder,
            logger,
            events,
            templatePollIntervalMs ?? DEFAULT_CONFIG_POLL_INTERVAL_MS,
          ),
        );
      }

      // One PV informer for the process: the controller's (injected below), the budgets' and the teardowns' check
      // that a directory holds no other PV. As the controller's own would be, it runs once this instance leads; the
      // budgets start it earlier when a config declares a capacity. It runs until the program stops.
      const volumes = informerFor(kubeConfig, 'PersistentVolume', {
        resyncPeriodMs: DEFAULTS.resyncPeriodMs,
        transform: stripManagedFields,
        initialListFromCache: true,
        logger: logger.child({ informer: 'volumes' }),
      });
      let volumesRunning = false;
      const runVolumes = (): void => {
        if (volumesRunning) return;
        volumesRunning = true;
        const watching = volumes.run(signal);
        defer(() => watching);
      };

      // The budgets of node paths, on the shared PV informer (their gauges in the registry); `auto` paths are measured
      // in-process in node mode, by a helper pod otherwise.
      const statfs = new HelperPodStatfs({
        kubeConfig,
        namespace: options.namespace,
        helperPodTemplate: () => {
          if (holder.template === undefined) throw new Error('node mode runs no helper pod');
          return holder.template;
        },
        serviceAccountName: options.serviceAccountName,
        configMapName: options.configmapName,
        allowUnsafeHelperPodTemplate: options.allowUnsafeHelperPodTemplate,
        timeoutSeconds: () => source.current().config.cmdTimeoutSeconds,
        logger,
      });
      const capacity = new CapacityTracker({
        volumes,
        provisionerName: options.provisionerName,
        config: () => source.current().config,
        measure:
          nodeMode === undefined
            ? (node, basePath, s) => statfs.measure(node, basePath, s)
            : (_node, basePath) => measureFileSystem(nodeMode.hostRoot ?? '', basePath),
        metrics: prometheusSink(registry),
        logger,
      });
      // Started once a config declares a capacity (at start-up or on a reload), and kept running from then on; the
      // expander follows it on the leader.
      let capacityStarted = false;
      const capacityListeners: (() => void)[] = [];
      const startCapacity = (config: Config): void => {
        if (capacityStarted || !usesCapacity(config)) return;
        capacityStarted = true;
        runVolumes();
        const tracking = capacity.run(signal);
        defer(() => tracking);
        for (const listener of capacityListeners) listener();
      };
      startCapacity(source.current().config);
      source.on('changed', (snapshot) => startCapacity(snapshot.config));

      const provisioner = new LocalPathProvisioner({
        capacity,
        volumes: () => (volumes.hasSynced() ? volumes.store.list() : undefined),
        kubeConfig,
        namespace: options.namespace,
        config: () => source.current().config,
        helperPodTemplate: () => {
          if (holder.template === undefined) throw new Error('node mode runs no helper pod');
          return holder.template;
        },
        nodeMode,
        serviceAccountName: options.serviceAccountName,
        provisionerName: options.provisionerName,
        configMapName: options.configmapName,
        allowUnsafeHelperPodTemplate: options.allowUnsafeHelperPodTemplate,
        logger,
        // A stop (SIGTERM) lets the volume operations in flight finish before the Lease is given up.
        stopping: signal,
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
      // In node mode every node's instance runs at once under the same name: no leader election.
      const leaderElection =
        nodeMode === undefined && options.leaderElection && (await leaseReadable(kubeConfig, options, logger, signal));
      return {
        provisionerName: options.provisionerName,
        provisioner,
        controller: {
          identity,
          eventRecorder: events,
          leaderElection,
          failedProvisionThreshold: options.provisioningRetryCount,
          failedDeleteThreshold: options.deletionRetryCount,
          volumesInformer: volumes,
        },
        beforeRun: (controller) => {
          // The controller waits for the injected informer to list before its workers start.
          controller.once('startedLeading', runVolumes);
          controller.on('provisioned', (_claim, pv) => void provisioner.volumeSaved(pv));
          // Expansion runs where provisioning runs: on the leader (each node's instance in node mode).
          const expander = new VolumeExpander({
            kubeConfig,
            tracker: capacity,
            config: () => source.current().config,
            event: (ref, type, reason, message) => events.event(ref, type, reason, message),
            nodeName: nodeMode?.nodeName,
            logger,
          });
          const startExpander = (): void => {
            const expanding = expander.run(signal);
            defer(() => expanding);
          };
          controller.once('started', () => {
            if (capacityStarted) startExpander();
            else capacityListeners.push(startExpander);
          });
          const orphans =
            nodeMode === undefined
              ? new HelperPodReconciler({
                  kubeConfig,
                  namespace: options.namespace,
                  provisioner,
                  timeoutSeconds: () => source.current().config.cmdTimeoutSeconds,
                  logger,
                })
              : new NodeOrphanReconciler({
                  kubeConfig,
                  provisioner,
                  nodeName: nodeMode.nodeName,
                  hostRoot: nodeMode.hostRoot ?? '',
                  config: () => source.current().config,
                  logger,
                });
          controller.once(
            'started',
            () => void orphans.run(reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS, signal),
          );
          // Node mode says so at the default level: which node, and under which name (kutti's, without arguments).
          if (nodeMode === undefined)
            logger.debug({ provisioner: options.provisionerName, leaderElection }, 'Provisioner started');
          else
            logger.info(
              {
                provisioner: options.provisionerName,
                node: nodeMode.nodeName,
                ...(options.kuttiRootPath === undefined ? {} : { kuttiRootPath: options.kuttiRootPath }),
              },
              `Provisioner started in node mode on ${nodeMode.nodeName}`,
            );
        },
      };
    },
  });
}
