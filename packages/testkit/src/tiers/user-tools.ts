/**
 * What a user installs with: `kubectl` and `helm` against a cluster of a tier, as the administrator. End-to-end
 * suites that deploy manifests and charts as the docs tell users do it through these, with the same commands.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findHelm } from '../helm/find.js';
import type { Cluster } from './cluster.js';

/** `kubectl` and `helm` for one cluster. */
export interface UserTools {
  /** The administrator's kubeconfig file they use. */
  readonly kubeconfig: string;
  /** Runs `kubectl --kubeconfig <it> ...args`; resolves with its stdout. */
  readonly kubectl: (...args: string[]) => Promise<string>;
  /** Runs `helm --kubeconfig <it> ...args` (the helm of `findHelm`); resolves with its stdout. */
  readonly helm: (...args: string[]) => Promise<string>;
  /** Removes the kubeconfig file. */
  readonly close: () => Promise<void>;
}

/** Options of {@link userTools}. */
export interface UserToolsOptions {
  /** How long one command may run, in ms (`kubectl wait` and `helm install --wait` run long). Default 300 000. */
  timeoutMs?: number;
}

/** Runs `file args`, resolving with stdout; rejects with the command and its stderr. */
function run(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) resolve(stdout);
      else
        reject(
          new Error(`${path.basename(file)} ${args.join(' ')} failed: ${(stderr || stdout).trim() || err.message}`, {
            cause: err,
          }),
        );
    });
  });
}

/**
 * `kubectl` and `helm` against `cluster` as its administrator; see the module comment.
 *
 * @throws (from a command) Error naming the command, with what it printed on stderr.
 */
export async function userTools(cluster: Cluster, options: UserToolsOptions = {}): Promise<UserTools> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-user-'));
  const kubeconfig = await cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  return {
    kubeconfig,
    kubectl: (...args) => run('kubectl', ['--kubeconfig', kubeconfig, ...args], timeoutMs),
    helm: async (...args) => run(await findHelm(), ['--kubeconfig', kubeconfig, ...args], timeoutMs),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
