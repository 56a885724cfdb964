import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { makeApiClient, type AgentClientOptions } from '../client/agent.js';
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
 * The client a {@link ProvisionController} makes for itself: `createPersistentVolume`, the call of every provision,
 * through the library's lean JSON client (no fetch `Request`, no ObjectSerializer copies), the other calls through
 * client-node's `CoreV1Api` (`makeApiClient`). The lean `createPersistentVolume` sends the body only (no `dryRun`,
 * `fieldManager` or `pretty`: the controller sets none). Every request goes through the same dispatcher, by default the shared
 * keep-alive agent of `kc`, and waits for the client-side rate limit registered for `kc`, if any.
 *
 * @param kc - the KubeConfig; its current context at call time picks the server and credentials.
 * @param options - `agent` (default the shared agent of `kc`), `userAgent`, `rateLimiter` and `onThrottled`, as for
 *   `makeApiClient`.
 * @throws Error when the KubeConfig has no current cluster.
 */
export function makeProvisionControllerClient(
  kc: KubeConfig,
  options: AgentClientOptions = {},
): ProvisionControllerClient {
  const core = makeApiClient(kc, CoreV1Api, options);
  const writes = hotPathApi(kc, options);
  return {
    createPersistentVolume: (param) => writes.createPersistentVolume(param),
    patchPersistentVolume: (param, options) => core.patchPersistentVolume(param, options),
    deletePersistentVolume: (param, options) => core.deletePersistentVolume(param, options),
    replaceNamespacedPersistentVolumeClaim: (param, options) =>
      core.replaceNamespacedPersistentVolumeClaim(param, options),
  };
}
