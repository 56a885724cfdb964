/**
 * The `local-path-provisioner` program as a function, in upstream's start-up order (reference 1.5): parse the
 * command line, build the API client, start the health server, load the config and the helper pod template, then
 * run the provisioner under a `ProvisionController` until SIGINT/SIGTERM (exit code 0) or until leadership is lost
 * (exit code 1). The command line and the start-up after the API client are this binary's; the rest (API client and
 * rate limit, logger, metrics and health endpoint, signals, the controller, exit codes) is
 * `@kprov/provisioner-lib/runtime`'s.
 *
 * The executor is picked here, once: helper pods ({@link helperPods}), or in-process on this node with `--node-mode`
 * ({@link onThisNode}). Each brings what runs with it (its template or scripts, its orphan reconciler, how `auto`
 * capacities are measured, whether a leader is elected); nothing else asks which one runs.
 *
 * @packageDocumentation
 */
import type { KubeConfig, V1PersistentVolume } from '@kubernetes/client-node';
import {
  apiStatus,
  DEFAULT_EVENT_WRITE_CONCURRENCY,
  defaultIdentity,
  DEFAULTS,
  describeError,
  EventRecorder,
  informerFor,
  makeCoordinationV1Calls,
  makeCoreV1Calls,
  stripManagedFields,
  withSignal,
  type HttpEndpoint,
  type Informer,
  type Logger,
  type ProvisionController,
} from '@kprov/provisioner-lib';
import { prometheusSink } from '@kprov/provisioner-lib/prometheus';
import {
  pickCommonOptions,
  runProvisioner,
  type CommandLine,
  type ProvisionerSetup,
  type RuntimeContext,
  type SetupContext,
} from '@kprov/provisioner-lib/runtime';
import { VolumeExpander } from './capacity/expansion.js';
import { usesCapacity } from './capacity/paths.js';
import { runStatus, statusArguments } from './capacity/status-command.js';
import { CapacityTracker, type MeasureFileSystem } from './capacity/tracker.js';
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
import type { Config, ConfigSource } from './config/index.js';
import { configMapRef, configSourceOf, scriptTextsOf } from './config/program-sources.js';
import { HelperPodTemplateSource } from './config/template-source.js';
import { UnknownNodeWarnings } from './config/unknown-nodes.js';
import { DEFAULT_RECONCILE_INTERVAL_MS, HelperPodReconciler } from './executor/helper-pod/reconciler.js';
import { HelperPodStatfs } from './executor/helper-pod/statfs.js';
import { loadHelperPodTemplate } from './executor/helper-pod/template.js';
import { NodeOrphanReconciler } from './executor/node/orphan-reconciler.js';
import { measureFileSystem } from './executor/node/statfs.js';
import { LocalPathProvisioner, type LocalPathProvisionerOptions } from './provisioner/provisioner.js';
import { VOLUME_CLEANUP_SKIPPED } from './provisioner/warnings.js';

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

/** What the program has made when it picks the executor. */
interface Program {
  readonly options: LocalPathOptions;
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** The source of `config.json` (and, from the ConfigMap, of the template and scripts). */
  readonly source: ConfigSource;
  /** The program's one Event recorder. */
  readonly events: EventRecorder;
  readonly signal: AbortSignal;
}

/** What runs with the executor the program picked. */
interface Execution {
  /** The provisioner options that choose and feed the executor. */
  readonly provisioner: Pick<LocalPathProvisionerOptions, 'helperPodTemplate' | 'nodeMode'>;
  /** Measures the file system of an `auto` path. */
  readonly measure: MeasureFileSystem;
  /** The executor's orphan reconciler, run from the controller's start. */
  readonly reconciler: (provisioner: LocalPathProvisioner) => {
    run(intervalMs: number, signal: AbortSignal): Promise<void>;
  };
  /** Whether leader election may run: one provisioner leads, where the instances of node mode all run at once. */
  readonly leaderElection: boolean;
  /** The node whose volumes this instance expands; undefined: every node's. */
  readonly nodeName: string | undefined;
  /** Logs the start. */
  readonly started: (leaderElection: boolean) => void;
}

/**
 * Helper pods: the template is loaded (and kept current), `auto` capacities are measured by helper pods, the helper
 * pod reconciler finishes interrupted operations, and one replica leads.
 */
async function helperPods(program: Program, templatePollIntervalMs: number | undefined): Promise<Execution> {
  const { options, kubeConfig, logger, source, signal } = program;
  const { namespace, configmapName: configMapName } = options;
  const template = new HelperPodTemplateSource({
    parse: (text) => loadHelperPodTemplate(text, options.allowUnsafeHelperPodTemplate),
    kubeConfig,
    namespace,
    configMapName,
    config: source,
    file: options.helperPodFile,
    mountPath: options.configMountPath,
    pollIntervalMs: templatePollIntervalMs,
    logger,
    recorder: program.events,
    involvedObject: configMapRef({ namespace, configMapName }),
  });
  await template.start(signal);
  const helperPodTemplate = () => template.current();
  const timeoutSeconds = () => source.current().config.cmdTimeoutSeconds;
  const statfs = new HelperPodStatfs({
    kubeConfig,
    namespace,
    helperPodTemplate,
    serviceAccountName: options.serviceAccountName,
    configMapName,
    provisionerName: options.provisionerName,
    allowUnsafeHelperPodTemplate: options.allowUnsafeHelperPodTemplate,
    timeoutSeconds,
    logger,
  });
  return {
    provisioner: { helperPodTemplate },
    measure: (node, basePath, s) => statfs.measure(node, basePath, s),
    reconciler: (provisioner) =>
      new HelperPodReconciler({ kubeConfig, namespace, provisioner, timeoutSeconds, logger }),
    leaderElection: true,
    nodeName: undefined,
    started: (leaderElection) =>
      logger.debug({ provisioner: options.provisionerName, leaderElection }, 'Provisioner started'),
  };
}

/**
 * Node mode: no helper pod runs (no template is read); the directories of this node are made in-process with the
 * ConfigMap's scripts, `auto` capacities measured in-process, the pending records reconciled, and every node's
 * instance runs at once under the same name (no leader election). It says so at the default level: which node, and
 * under which name (kutti's, without arguments).
 */
function onThisNode(program: Program, nodeName: string): Execution {
  const { options, kubeConfig, logger, source } = program;
  const hostRoot = options.hostRoot ?? '';
  return {
    provisioner: {
      helperPodTemplate: () => {
        throw new Error('node mode runs no helper pod');
      },
      nodeMode: {
        nodeName,
        hostRoot: options.hostRoot,
        scripts: scriptTextsOf(source, options.config),
        kutti: options.kuttiRootPath !== undefined,
      },
    },
    measure: (_node, basePath) => measureFileSystem(hostRoot, basePath),
    reconciler: (provisioner) =>
      new NodeOrphanReconciler({
        kubeConfig,
        provisioner,
        nodeName,
        hostRoot,
        config: () => source.current().config,
        logger,
      }),
    leaderElection: false,
    nodeName,
    started: () =>
      logger.info(
        {
          provisioner: options.provisionerName,
          node: nodeName,
          ...(options.kuttiRootPath === undefined ? {} : { kuttiRootPath: options.kuttiRootPath }),
        },
        `Provisioner started in node mode on ${nodeName}`,
      ),
  };
}

/**
 * The capacity budgets of node paths, on the program's one PV informer (the controller's, its teardowns' check that a
 * directory holds no other PV, and the budgets'). The informer runs once this instance leads, as the controller's own
 * would; the budgets start it earlier, once a config declares a capacity (at start-up or on a reload), and keep it
 * running from then on. Both run until the program stops.
 */
class Budgets {
  readonly volumes: Informer<V1PersistentVolume>;
  readonly tracker: CapacityTracker;
  private volumesRunning = false;
  private started = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly context: Pick<SetupContext<LocalPathOptions>, 'kubeConfig' | 'logger' | 'signal' | 'defer'>,
    source: ConfigSource,
    provisionerName: string,
    measure: MeasureFileSystem,
    metrics: ReturnType<typeof prometheusSink>,
  ) {
    const { kubeConfig, logger } = context;
    this.volumes = informerFor(kubeConfig, 'PersistentVolume', {
      resyncPeriodMs: DEFAULTS.resyncPeriodMs,
      transform: stripManagedFields,
      initialListFromCache: true,
      logger: logger.child({ informer: 'volumes' }),
    });
    this.tracker = new CapacityTracker({
      volumes: this.volumes,
      provisionerName,
      config: () => source.current().config,
      measure,
      metrics,
      logger,
    });
    this.startWith(source.current().config);
    source.on('changed', (snapshot) => this.startWith(snapshot.config));
  }

  /** Runs the PV informer (once). */
  runVolumes(): void {
    if (this.volumesRunning) return;
    this.volumesRunning = true;
    const watching = this.volumes.run(this.context.signal);
    this.context.defer(() => watching);
  }

  /** Calls `listener` once the budgets run (at once when they do). */
  whenStarted(listener: () => void): void {
    if (this.started) listener();
    else this.listeners.push(listener);
  }

  private startWith(config: Config): void {
    if (this.started || !usesCapacity(config)) return;
    this.started = true;
    this.runVolumes();
    const tracking = this.tracker.run(this.context.signal);
    this.context.defer(() => tracking);
    for (const listener of this.listeners.splice(0)) listener();
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
    await makeCoordinationV1Calls(kubeConfig).readNamespacedLease({ name, namespace }, withSignal(signal));
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

/** What {@link main} adds to the runtime's setup context: its own knobs and where the health server goes. */
interface MainKnobs {
  readonly templatePollIntervalMs: number | undefined;
  readonly reconcileIntervalMs: number | undefined;
  readonly onHealth: (health: HealthServer | undefined) => void;
}

/**
 * The program after the command line and the API client, in upstream's order: the health server, the config, the
 * executor (and its template), the budgets, the provisioner and the controller's options.
 */
async function setUp(setup: SetupContext<LocalPathOptions>, knobs: MainKnobs): Promise<ProvisionerSetup> {
  const { options, common, kubeConfig, logger, registry, signal, defer } = setup;
  // Upstream starts the health server before loading any config.
  const health = await startHealthServer({
    port: options.healthPort,
    kubeConfig,
    namespace: options.namespace,
    logger,
  });
  knobs.onHealth(health);
  defer(() => health?.close());

  // One recorder for every Event of the process: the controller's (given to it below, with the identity its source
  // names, as the Go library's `<provisioner name>_<identity>`), the refused configs and templates, and the volumes'
  // warnings. The runtime stops it once the controller stopped.
  const identity = defaultIdentity();
  const events = new EventRecorder({
    source: { component: `${options.provisionerName}_${identity}` },
    kubeConfig,
    logger,
    metrics: prometheusSink(registry),
    concurrency: Math.max(DEFAULT_EVENT_WRITE_CONCURRENCY, EVENTS_PER_WORKER * common.workerThreads),
  });
  const source = configSourceOf({
    config: options.config,
    kubeConfig,
    namespace: options.namespace,
    configMapName: options.configmapName,
    logger,
    recorder: events,
  });
  defer(() => source.stopped());
  await source.start(signal);
  const nodes = new UnknownNodeWarnings(makeCoreV1Calls(kubeConfig), logger);
  void nodes.check(source.current().config, signal);
  source.on('changed', (snapshot, previous) => {
    if (snapshot.config !== previous.config) void nodes.check(snapshot.config, signal);
  });

  const program: Program = { options, kubeConfig, logger, source, events, signal };
  const execution =
    options.nodeMode && options.nodeName !== undefined
      ? onThisNode(program, options.nodeName)
      : await helperPods(program, knobs.templatePollIntervalMs);

  const budgets = new Budgets(setup, source, options.provisionerName, execution.measure, prometheusSink(registry));
  const { volumes } = budgets;
  const provisioner = new LocalPathProvisioner({
    ...execution.provisioner,
    capacity: budgets.tracker,
    volumes: () => (volumes.hasSynced() ? volumes.store.list() : undefined),
    kubeConfig,
    namespace: options.namespace,
    config: () => source.current().config,
    serviceAccountName: options.serviceAccountName,
    provisionerName: options.provisionerName,
    configMapName: options.configmapName,
    allowUnsafeHelperPodTemplate: options.allowUnsafeHelperPodTemplate,
    logger,
    // A stop (SIGTERM) lets the volume operations in flight finish before the Lease is given up.
    stopping: signal,
    warn: (pv, text, reason) => events.event(volumeRef(pv), 'Warning', reason, text),
  });
  const leaderElection =
    execution.leaderElection && options.leaderElection && (await leaseReadable(kubeConfig, options, logger, signal));
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
      controller.once('startedLeading', () => budgets.runVolumes());
      controller.on('provisioned', (_claim, pv) => void provisioner.volumeSaved(pv));
      // Expansion runs where provisioning runs: on the leader (each node's instance in node mode), once the budgets
      // run; the orphan reconciler from the start.
      const expander = new VolumeExpander({
        kubeConfig,
        tracker: budgets.tracker,
        config: () => source.current().config,
        event: (ref, type, reason, message) => events.event(ref, type, reason, message),
        nodeName: execution.nodeName,
        logger,
      });
      const orphans = execution.reconciler(provisioner);
      controller.once('started', () => {
        budgets.whenStarted(() => {
          const expanding = expander.run(signal);
          defer(() => expanding);
        });
        void orphans.run(knobs.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS, signal);
      });
      execution.started(leaderElection);
    },
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
    setup: (setup) =>
      setUp(setup, {
        templatePollIntervalMs,
        reconcileIntervalMs,
        onHealth: (served) => {
          health = served;
        },
      }),
  });
}

/** A PV as the object of an Event. */
function volumeRef(pv: V1PersistentVolume): Parameters<EventRecorder['event']>[0] {
  return {
    kind: 'PersistentVolume',
    apiVersion: 'v1',
    name: pv.metadata?.name ?? '',
    ...(pv.metadata?.uid === undefined ? {} : { uid: pv.metadata.uid }),
    ...(pv.metadata?.resourceVersion === undefined ? {} : { resourceVersion: pv.metadata.resourceVersion }),
  };
}
