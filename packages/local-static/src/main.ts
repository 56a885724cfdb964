/**
 * The `local-volume-provisioner` program as a function: upstream's command line and environment, the config from
 * the mounted ConfigMap, and the provisioner's loop, on `@kprov/provisioner-lib/runtime` (API client, logger,
 * metrics and readiness endpoint, signals, exit codes).
 *
 * @packageDocumentation
 */
import type { Clock, HttpEndpoint } from '@kprov/provisioner-lib';
import { prometheusSink } from '@kprov/provisioner-lib/prometheus';
import { runProvisioner, type RuntimeContext } from '@kprov/provisioner-lib/runtime';
import { ConfigDirectory } from './config/source.js';
import { parseCommandLine, PROGRAM } from './cli/options.js';
import { LocalStaticProvisioner } from './provisioner.js';

/** The environment variable naming this node. */
export const NODE_NAME_ENV = 'MY_NODE_NAME';
/** The environment variable naming the namespace of cleanup Jobs. */
export const NAMESPACE_ENV = 'MY_NAMESPACE';
/** The environment variable naming the image of cleanup Jobs. */
export const JOB_IMAGE_ENV = 'JOB_CONTAINER_IMAGE';
/** Path of the readiness check, as upstream serves it. */
export const READY_PATH = '/ready';

/** What {@link main} uses of its surroundings; the defaults are the process's. */
export interface MainContext extends Omit<RuntimeContext, 'onStarted'> {
  /** Mount table read for the mount point rule. Default `/proc/self/mountinfo`. */
  mountInfoPath?: string;
  /** Where sysfs is mounted, for block device sizes. Default `/sys`. */
  sysfsPath?: string;
  /** Time source of the loop, the config polling and the cleanup timeouts. Default the real clock. */
  clock?: Clock;
  /** Called once the loop runs, with the endpoint (undefined when not served) and the provisioner. */
  onStarted?: (started: { endpoint: HttpEndpoint | undefined; provisioner: LocalStaticProvisioner }) => void;
}

/**
 * Runs the provisioner until SIGINT or SIGTERM (or `context.signal`) and resolves with the exit code: 0 after help or
 * a requested stop, 1 when start-up failed (no `MY_NODE_NAME`, a config directory that cannot be read, a Node that
 * cannot be fetched), 2 for a command line that cannot be used.
 */
export function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  context: MainContext = {},
): Promise<number> {
  const { mountInfoPath, sysfsPath, clock, onStarted, ...runtime } = context;
  return runProvisioner({
    name: PROGRAM,
    flags: parseCommandLine,
    argv,
    env,
    ...runtime,
    preflight: ({ env: e }) => {
      if ((e[NODE_NAME_ENV] ?? '') === '')
        throw new Error(
          `${NODE_NAME_ENV} environment variable not set: set it to the node's name (fieldRef spec.nodeName)`,
        );
    },
    setup: async ({ options, env: e, kubeConfig, logger, registry }) => {
      const namespace = e[NAMESPACE_ENV] ?? '';
      if (namespace === '') logger.warn({}, `${NAMESPACE_ENV} environment variable not set, will be set to default`);
      const jobImage = e[JOB_IMAGE_ENV] ?? '';
      if (jobImage === '') logger.warn({}, `${JOB_IMAGE_ENV} environment variable not set`);
      const config = new ConfigDirectory({
        dir: options.configDir,
        periodMs: options.configSyncPeriodMs,
        logger,
        ...(clock === undefined ? {} : { clock }),
      });
      try {
        await config.load();
      } catch (err) {
        throw new Error(`Error parsing Provisioner's configuration: ${(err as Error).message}. Exiting...`, {
          cause: err,
        });
      }
      const provisioner = new LocalStaticProvisioner({
        kubeConfig,
        nodeName: e[NODE_NAME_ENV] ?? '',
        namespace: namespace === '' ? 'default' : namespace,
        jobImage,
        config: () => config.current(),
        discoveryPeriodMs: options.discoveryPeriodMs,
        env: { ...e },
        metrics: prometheusSink(registry),
        logger,
        ...(mountInfoPath === undefined ? {} : { mountInfoPath }),
        ...(sysfsPath === undefined ? {} : { sysfsPath }),
        ...(clock === undefined ? {} : { clock }),
      });
      return {
        metricsPath: options.metricsPath,
        readyPath: READY_PATH,
        readyChecks: {
          discovery: () => {
            const error = provisioner.readyError();
            if (error !== undefined) throw new Error(error);
          },
        },
        run: async (signal, { endpoint }) => {
          const watching = config.run(signal);
          try {
            await provisioner.run(signal, () => onStarted?.({ endpoint, provisioner }));
          } finally {
            await watching;
          }
        },
      };
    },
  });
}
