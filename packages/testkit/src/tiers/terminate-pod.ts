/**
 * `kubectl delete pod` as a test wants to see it: how each container ended (its exit code, from the status the
 * kubelet writes before the pod goes) and what it printed last (its log followed until it ended), so that a suite can
 * check that a program stops gracefully on SIGTERM.
 */
import { PassThrough } from 'node:stream';
import { CoreV1Api, Log, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../process/wait-for.js';
import { recordWatch } from './objects.js';

/** How one container of a deleted pod ended. */
export interface TerminatedContainer {
  name: string;
  /** Its exit code, `undefined` when the pod went before its status said (a force deletion). */
  exitCode: number | undefined;
  /** Its log, from `tailLines` lines before the deletion to its end. */
  log: string;
}

/** Options of {@link terminatePod}. */
export interface TerminatePodOptions {
  /** Lines of each container's log from before the deletion that are kept. Default 100. */
  tailLines?: number;
  /** How long the pod may take to go, in ms. Default 120 000. */
  timeoutMs?: number;
}

/**
 * Deletes the pod with its own grace period (SIGTERM, then SIGKILL after `terminationGracePeriodSeconds`), as
 * `kubectl delete pod` does, and resolves once it is gone with how each of its containers ended.
 *
 * @throws Error when the pod does not exist, or is still there after `timeoutMs`.
 */
export async function terminatePod(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  options: TerminatePodOptions = {},
): Promise<TerminatedContainer[]> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const pod = await core.readNamespacedPod({ namespace, name });
  const containers = (pod.spec?.containers ?? []).map((c) => c.name);
  const logs = new Map<string, string>();
  const streams = await Promise.all(
    containers.map(async (container) => {
      logs.set(container, '');
      const out = new PassThrough();
      out.on('data', (chunk: Buffer) => logs.set(container, (logs.get(container) ?? '') + chunk.toString('utf8')));
      const ended = new Promise<void>((resolve) => {
        out.once('end', resolve);
        out.once('close', resolve);
      });
      const request = await new Log(kubeConfig).log(namespace, name, container, out, {
        follow: true,
        tailLines: options.tailLines ?? 100,
      });
      return { ended, request };
    }),
  );
  const watch = await recordWatch<V1Pod>(kubeConfig, `/api/v1/namespaces/${namespace}/pods`, {
    fieldSelector: `metadata.name=${name}`,
  });
  try {
    await core.deleteNamespacedPod({ namespace, name });
    const timeoutMs = options.timeoutMs ?? 120_000;
    await waitFor(
      `pod ${namespace}/${name} gone`,
      () => (watch.events.some((e) => e.type === 'DELETED') ? true : undefined),
      { timeoutMs },
    );
    // The logs end with their containers; a stream the server cut early ends too.
    await Promise.race([Promise.all(streams.map((s) => s.ended)), new Promise((r) => setTimeout(r, 10_000))]);
  } finally {
    watch.stop();
    for (const s of streams) s.request.abort();
  }
  const last = [...watch.events].reverse().find((e) => e.type === 'MODIFIED' || e.type === 'DELETED')?.object;
  return containers.map((container) => ({
    name: container,
    exitCode: last?.status?.containerStatuses?.find((c) => c.name === container)?.state?.terminated?.exitCode,
    log: logs.get(container) ?? '',
  }));
}
