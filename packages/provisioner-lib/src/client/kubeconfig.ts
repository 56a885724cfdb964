/** How a provisioner binary finds the API server. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * Loads the kubeconfig: from `file` when given (a `KUBECONFIG`-style list separated by `:` is merged as kubectl
 * does, the first file's context winning), else the in-cluster service account when `KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT` are set, else `~/.kube/config`. Throws an error saying what to do when none applies.
 */
export function loadKubeConfig(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (file !== undefined) {
    const files = file.split(path.delimiter).filter((f) => f !== '');
    files.forEach((f, i) => {
      const target = i === 0 ? kubeConfig : new KubeConfig();
      try {
        target.loadFromFile(f);
      } catch (err) {
        throw new Error(
          `cannot load kubeconfig "${f}" (--kubeconfig, KUBECONFIG): ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      }
      if (target !== kubeConfig) kubeConfig.mergeConfig(target, true);
    });
    return kubeConfig;
  }
  if ((env.KUBERNETES_SERVICE_HOST ?? '') !== '' && (env.KUBERNETES_SERVICE_PORT ?? '') !== '') {
    kubeConfig.loadFromCluster();
    return kubeConfig;
  }
  const fallback = path.join(env.HOME ?? homedir(), '.kube', 'config');
  if (!existsSync(fallback)) {
    throw new Error(
      `no kubeconfig: not running in a pod (KUBERNETES_SERVICE_HOST is not set) and ${fallback} does not exist; pass --kubeconfig FILE or set KUBECONFIG`,
    );
  }
  kubeConfig.loadFromFile(fallback);
  return kubeConfig;
}
