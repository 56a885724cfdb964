import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { startNodeProcess, stopProcess } from './node-process.js';

/** Options of {@link startServeProcess}. */
export interface ServeProcessOptions {
  /** The kubeconfig is written to `<dir>/kubeconfig`. */
  dir: string;
  /** `--node NAME[=ROOTDIR]` values. Default none: the server's one default node. */
  nodes?: readonly string[];
  /** Run the PV binder. Default true. */
  binder?: boolean;
  /** Run the scheduler. Default true. */
  scheduler?: boolean;
  /** Run the kubelet simulation. Default true. */
  kubelet?: boolean;
  /** Working directory of the child. Default `dir`. */
  cwd?: string;
  /** Give up (and stop the child) after this many ms. Default 30 000. */
  timeoutMs?: number;
  /** Told about the child as soon as it is spawned (e.g. to stop it on Ctrl-C while it starts). Default none. */
  onSpawn?: (child: ChildProcess) => void;
}

/** A running `kprov-testkit serve` child process. */
export interface ServeProcess {
  child: ChildProcess;
  /** Path of the kubeconfig it wrote. */
  kubeconfig: string;
  /** That kubeconfig, loaded. */
  kubeConfig: KubeConfig;
  /** The API server's URL. */
  url: string;
  /** SIGTERM, then waits for the exit. */
  stop: () => Promise<void>;
}

/** `dist/cli.js` of this package, found from this module whether it runs from `dist/` or `src/`. */
function cliPath(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === '@kprov/testkit'
    ) {
      return path.join(dir, 'dist', 'cli.js');
    }
  }
  throw new Error('startServeProcess: cannot find the @kprov/testkit package (its dist/cli.js)');
}

/**
 * Starts `kprov-testkit serve` as a child process, as a user runs it next to a provisioner binary, and resolves once
 * it has written its kubeconfig.
 *
 * @throws Error when the server exits or the timeout passes first (the message has its output).
 */
export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const kubeconfig = path.join(options.dir, 'kubeconfig');
  const args = [
    cliPath(),
    'serve',
    '--kubeconfig-out',
    kubeconfig,
    ...(options.nodes ?? []).flatMap((n) => ['--node', n]),
  ];
  if (options.binder === false) args.push('--no-binder');
  if (options.scheduler === false) args.push('--no-scheduler');
  if (options.kubelet === false) args.push('--no-kubelet');
  const child = await startNodeProcess('kprov-testkit serve', args, 'kubeconfig:', {
    cwd: options.cwd ?? options.dir,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.onSpawn === undefined ? {} : { onSpawn: options.onSpawn }),
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfig);
  return {
    child,
    kubeconfig,
    kubeConfig,
    url: kubeConfig.getCurrentCluster()?.server ?? '',
    stop: () => stopProcess(child),
  };
}
