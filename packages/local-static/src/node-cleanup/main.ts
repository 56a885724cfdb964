/**
 * `local-volume-provisioner node-cleanup` as a function: upstream's `cmd/node-cleanup` on
 * `@kprov/provisioner-lib/runtime` (API client, logger, metrics endpoint, signals, exit codes).
 *
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  closeSharedConnections,
  describeError,
  type Clock,
  type HttpEndpoint,
  type Logger,
} from '@kprov/provisioner-lib';
import { prometheusSink } from '@kprov/provisioner-lib/prometheus';
import { runProvisioner, type RuntimeContext } from '@kprov/provisioner-lib/runtime';
import type { CleanupOutcome } from './controller.js';
import { NodeCleanup } from './node-cleanup.js';
import { NODE_CLEANUP_PROGRAM, parseNodeCleanupCommandLine } from './options.js';

/** What {@link nodeCleanupMain} uses of its surroundings; the defaults are the process's. */
export interface NodeCleanupMainContext extends Omit<RuntimeContext, 'onStarted'> {
  /** Time source of the delay, the passes and the retries. Default the real clock. */
  clock?: Clock;
  /** Called once the controller runs, with the endpoint (undefined when not served) and the controller. */
  onStarted?: (started: { endpoint: HttpEndpoint | undefined; nodeCleanup: NodeCleanup }) => void;
  /** Called after the worker is done with a PV, with how it left it. Default none. */
  onSynced?: (pvName: string, outcome: CleanupOutcome) => void;
}

/**
 * `--kube-api-endpoint`: the kubeconfig's current cluster with `server` replaced, as client-go's
 * `BuildConfigFromFlags(masterURL, kubeconfig)` overrides it.
 */
function withServer(kubeConfig: KubeConfig, server: string): void {
  const current = kubeConfig.getCurrentCluster();
  if (current === null)
    throw new Error('--kube-api-endpoint: the kubeconfig has no current cluster to point elsewhere');
  kubeConfig.clusters = kubeConfig.clusters.map((c) => (c.name === current.name ? { ...c, server } : c));
}

/** Says at the start what will be cleaned up. */
function logScope(logger: Logger, classes: readonly string[]): void {
  if (classes.length === 0) {
    logger.warn(
      {},
      'No StorageClass is opted in (--storageclass-names is empty): no PV nor PVC will be cleaned up; list the classes of local PVs whose claims may be deleted when their Node is',
    );
  } else
    logger.info(
      { storageClasses: classes },
      'Cleaning up local PVs and PVCs of deleted Nodes for these StorageClasses',
    );
}

/**
 * Runs the node-cleanup controller until SIGINT or SIGTERM (or `context.signal`) and resolves with the exit code: 0
 * after help or a requested stop, 1 when start-up failed (no kubeconfig, say), 2 for a command line that cannot be
 * used. `argv` are the arguments after `node-cleanup`.
 */
export function nodeCleanupMain(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  context: NodeCleanupMainContext = {},
): Promise<number> {
  const { clock, onStarted, onSynced, ...runtime } = context;
  return runProvisioner({
    name: NODE_CLEANUP_PROGRAM,
    flags: parseNodeCleanupCommandLine,
    argv,
    env,
    ...runtime,
    messages: {
      serving: (logger, url) => logger.info({ url }, 'Starting metrics server'),
      failed: (logger, err) => logger.error({ err: describeError(err) }, 'Error running controller'),
    },
    setup: ({ options, kubeConfig, logger, registry, defer }) => {
      if (options.kubeApiEndpoint !== undefined) withServer(kubeConfig, options.kubeApiEndpoint);
      // The run's own connections (this kubeconfig is the run's), closed with it rather than left to the server.
      defer(() => closeSharedConnections(kubeConfig));
      logScope(logger, options.storageClassNames);
      const nodeCleanup = new NodeCleanup({
        kubeConfig,
        storageClassNames: options.storageClassNames,
        pvcDeletionDelayMs: options.pvcDeletionDelayMs,
        staleVolumeDiscoveryIntervalMs: options.staleVolumeDiscoveryIntervalMs,
        resyncMs: options.resyncMs,
        workers: options.workerThreads,
        metrics: prometheusSink(registry),
        logger,
        ...(clock === undefined ? {} : { clock }),
        ...(onSynced === undefined ? {} : { onSynced }),
      });
      return {
        metricsPath: options.metricsPath,
        readyChecks: {
          informers: () => {
            if (!nodeCleanup.hasSynced()) throw new Error('the PV, PVC and Node caches have not synced yet');
          },
        },
        run: (signal, { endpoint }) => nodeCleanup.run(signal, () => onStarted?.({ endpoint, nodeCleanup })),
      };
    },
  });
}
