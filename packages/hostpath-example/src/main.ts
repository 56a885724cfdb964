/**
 * The `kprov-hostpath` program as a function, on `@kprov/provisioner-lib/runtime`: its own command line
 * ({@link parseOptions}), then the runtime runs the controller around a {@link HostPathProvisioner}, serving metrics
 * and health, until SIGINT/SIGTERM (exit code 0) or until leadership is lost (exit code 1).
 */
import { stat } from 'node:fs/promises';
import { describeError } from '@kprov/provisioner-lib';
import {
  pickCommonOptions,
  runProvisioner,
  type CommandLine,
  type RuntimeContext,
} from '@kprov/provisioner-lib/runtime';
import { parseOptions, type CliOptions } from './options.js';
import { HostPathProvisioner } from './provisioner.js';

/** What {@link main} uses of its surroundings (output, stop signal, signal handling, `onStarted`); the defaults are the process's. */
export type MainContext = RuntimeContext;

async function checkHostRoot(hostRoot: string): Promise<void> {
  const s = await stat(hostRoot).catch(() => undefined);
  if (s?.isDirectory() !== true) {
    throw new Error(
      `--host-root "${hostRoot}" (HOST_ROOT) is not a directory: it must be where this process sees the node's root filesystem`,
    );
  }
}

/** The command line as the runtime takes it: `kprov-hostpath`'s own flags, its help and its usage errors. */
function commandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CommandLine<CliOptions> {
  const parsed = parseOptions(argv, env);
  if (parsed.kind === 'help') return { kind: 'exit', code: 0, stdout: parsed.text };
  if (parsed.kind === 'error')
    return { kind: 'exit', code: parsed.exitCode, stderr: `kprov-hostpath: ${parsed.message}\n` };
  const options = parsed.options;
  return {
    kind: 'run',
    options,
    // kprov-hostpath has no --kube-api-qps: its API requests are not limited client-side.
    common: pickCommonOptions(options, { kubeApiQps: -1 }),
  };
}

/**
 * Runs `kprov-hostpath` with the given arguments (without `node` and the script) and environment; resolves with
 * the exit code: 0 after `--help` or a requested stop, 1 on errors and lost leadership, 2 for unparsable flags.
 */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  context: MainContext = {},
): Promise<number> {
  return runProvisioner({
    ...context,
    name: 'kprov-hostpath',
    argv,
    env,
    flags: commandLine,
    // Before the kubeconfig: a wrong --host-root is reported whatever else is wrong.
    preflight: ({ options }) => checkHostRoot(options.hostRoot),
    setup: ({ options, logger }) => {
      const provisioner = new HostPathProvisioner({
        pvDir: options.pvDir,
        identity: options.nodeName,
        hostRoot: options.hostRoot,
        logger,
      });
      return {
        provisionerName: options.provisionerName,
        provisioner,
        // The controller refuses a malformed name: say which flag gave it.
        controllerError: (err) =>
          /provisionerName/.test(describeError(err))
            ? new Error(`invalid --provisioner-name: ${describeError(err)}`, { cause: err })
            : err,
        beforeRun: () => {
          // The library logs "Started provisioner controller" once the workers run.
          logger.info(
            {
              provisioner: options.provisionerName,
              node: options.nodeName,
              pvDir: options.pvDir,
              hostRoot: options.hostRoot,
              leaderElection: options.leaderElection,
            },
            'Starting hostPath provisioner',
          );
        },
      };
    },
  });
}
