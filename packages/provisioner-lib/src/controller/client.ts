import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { AgentClientOptions } from '../client/agent.js';
import { makeCoreV1Calls } from '../client/calls/core-v1.js';
import { hotPathApi } from '../client/hot-path.js';

/**
 * The API calls a {@link ProvisionController} makes besides its informers, its Events and its Lease: saving a
 * provisioned PV, the PV finalizer patch, deleting a PV, and taking the selected node off a claim to reschedule it.
 * The signatures are client-node's `CoreV1Api`'s, so a `CoreV1Api` (from `makeApiClient`) is one.
 */
export type ProvisionControllerClient = Pick<
  CoreV1Api,
  | 'createPersistentVolume'
  | 'patchPersistentVolume'
  | 'deletePersistentVolume'
  | 'replaceNamespacedPersistentVolumeClaim'
>;

/**
 * The client a {@link ProvisionController} makes for itself: its four calls with client-node's `CoreV1Api`
 * signatures and results (objects in client-node's model shape, errors as its `ApiException`), sent by the library's
 * lean JSON client (`RestClient`) rather than client-node's generated `CoreV1Api`, which a bundled binary would carry
 * only for them: with it (and the Lease's `CoordinationV1Api`), client-node's generated API classes were 0.6 MB of
 * the bench's 2.1 MB controller bundle, and a controller running on an empty cluster took 4.6 to 5.4 MiB more RSS
 * and 0.7 MiB more heap after GC (medians of two series of 11 runs, Node.js 24).
 *
 * The calls send what client-node sends, as {@link makeCoreV1Calls}'s do (the same method, path, query parameters and
 * JSON body, and the Content-Type and abort signal of the per-call options); per-call options that would change
 * anything else, and the server-side apply patch type, reject the call with an Error before anything is sent (use
 * `makeApiClient(kc, CoreV1Api)` for those).
 *
 * Every request goes through the same connection pool, by default the library's shared keep-alive pool of `kc`
 * (Node.js's own HTTP client; an undici `ProxyAgent` for a cluster with a `proxy-url`), and waits for the
 * client-side rate limit registered for `kc`, if any.
 *
 * @param kc - the KubeConfig; its current context at call time picks the server and credentials.
 * @param options - `agent`: an undici dispatcher to send through (default the shared pool of `kc`),
 *   `userAgent` (default `DEFAULT_USER_AGENT`), `rateLimiter` (default the one registered for `kc`, if any) and
 *   `onThrottled` (default the registered hook), as for `makeApiClient`.
 * @throws Error when the KubeConfig has no current cluster.
 */
export function makeProvisionControllerClient(
  kc: KubeConfig,
  options: AgentClientOptions = {},
): ProvisionControllerClient {
  if (kc.getCurrentCluster() === null)
    throw new Error('makeProvisionControllerClient: the KubeConfig has no current cluster');
  const { patchPersistentVolume, deletePersistentVolume, replaceNamespacedPersistentVolumeClaim } = makeCoreV1Calls(
    kc,
    options,
  );
  const { createPersistentVolume } = hotPathApi(kc, options);
  return {
    createPersistentVolume,
    patchPersistentVolume,
    deletePersistentVolume,
    replaceNamespacedPersistentVolumeClaim,
  };
}
