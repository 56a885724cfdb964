/** The binary's API client configuration: its kubeconfig and client-side rate limit. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { asKubeConfig, loadKubeConfigData } from '../client/kubeconfig.js';
import { setClientRateLimit } from '../client/rate-limit/client-rate-limit.js';
import { logThrottledRequests } from '../client/rate-limit/throttle-log.js';
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';
import type { ResolvedCommonOptions } from './common-options.js';
import type { Env } from './command-line.js';

/**
 * Loads the kubeconfig (`kubeconfig`, else the files of `$KUBECONFIG` that exist, else in-cluster, else
 * `~/.kube/config`) and
 * sets client-go's QPS and burst on it: one token bucket for every client made from it (the leader election client
 * gets one of its own), no limit for a negative or infinite QPS. Waits over 1 s are logged with client-go's line.
 *
 * @param clock - time source of the rate limit and its log. Default the real clock.
 * @throws Error saying what to do when no kubeconfig can be found or loaded.
 */
export function kubeClientConfig(common: ResolvedCommonOptions, env: Env, logger: Logger, clock?: Clock): KubeConfig {
  return asKubeConfig(runtimeKubeConfig(common, env, logger, clock));
}

/**
 * {@link kubeClientConfig} for the runtime's start-up: the kubeconfig without client-node's `KubeConfig` class, which
 * loads client-node's whole generated client; `asKubeConfig` makes it one when the binary's setup asks for it.
 */
export function runtimeKubeConfig(common: ResolvedCommonOptions, env: Env, logger: Logger, clock?: Clock): KubeConfig {
  const kubeConfig = loadKubeConfigData(common.kubeconfig ?? existingFiles(env.KUBECONFIG), env);
  const qps = common.kubeApiQps;
  if (qps < 0 || qps === Infinity) {
    setClientRateLimit(kubeConfig, null);
    return kubeConfig;
  }
  const timing = clock === undefined ? {} : { clock };
  setClientRateLimit(kubeConfig, {
    qps,
    burst: common.kubeApiBurst,
    ...timing,
    onThrottled: logThrottledRequests(logger, timing),
  });
  return kubeConfig;
}

/**
 * The files of a `$KUBECONFIG` list that exist, as a list again; `undefined` when none does. client-go skips a file of
 * that list that does not exist (an explicit `--kubeconfig` must exist), and the Go provisioners then go on to the
 * in-cluster config: a stale `KUBECONFIG` in an image or a pod does not stop the binary.
 */
function existingFiles(list: string | undefined): string | undefined {
  const files = (list ?? '').split(path.delimiter).filter((f) => f !== '' && existsSync(f));
  return files.length === 0 ? undefined : files.join(path.delimiter);
}
