/**
 * The `kprov-hostpath` program as a function, on `@kprov/provisioner-lib/runtime`: its command line
 * ({@link parseOptions}: the runtime's common flags and its own, in the syntax of its guide), then the runtime runs
 * the controller around a {@link HostPathProvisioner}, serving metrics and health, until SIGINT/SIGTERM (exit code 0)
 * or until leadership is lost (exit code 1).
 */
import { stat } from 'node:fs/promises';
import { describeError } from '@kprov/provisioner-lib';
import { runProvisioner, type CommandLine, type Env, type RuntimeContext } from '@kprov/provisioner-lib/runtime';
import { parseOptions, PROGRAM, type CliOptions } from './options.js';
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

/** The command line as the runtime takes it: what to run with, or what to print and the exit code. */
function commandLine(argv: readonly string[], env: Env): CommandLine<CliOptions> {
  const parsed = parseOptions(argv, env);
  switch (parsed.kind) {
    case 'help':
    case 'version':
      return { kind: 'exit', code: 0, stdout: parsed.text };
    case 'error':
      return { kind: 'exit', code: parsed.exitCode, stderr: `${PROGRAM}: ${parsed.message}\n` };
    case 'run':
      return { kind: 'run', options: parsed.options, common: parsed.common };
  }
}

/**
 * Runs `kprov-hostpath` with the given arguments (without `node` and the script) and environment; resolves with
 * the exit code: 0 after `--help`, `--version` or a requested stop, 1 on errors (an invalid flag value too) and lost
 * leadership, 2 for unparsable flags.
 */
export async function main(argv: readonly string[], env: Env, context: MainContext = {}): Promise<number> {
  return runProvisioner({
    ...context,
    name: PROGRAM,
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
