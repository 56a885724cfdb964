import type { CoreV1Api, CoreV1Event, KubeConfig, V1PersistentVolume } from '@kubernetes/client-node';
import type { AgentClientOptions } from './agent.js';
import { modelDecoder } from './models.js';
import type { RequestPriority } from './rate-limit/token-bucket.js';
import { checkRequired, RestClient, writeQuery } from './rest.js';

/** The calls of client-node's `CoreV1Api` the controller makes for every provisioned claim. */
export type HotPathApi = Pick<CoreV1Api, 'createPersistentVolume' | 'createNamespacedEvent' | 'patchNamespacedEvent'>;

const decodeVolume = modelDecoder<V1PersistentVolume>('V1PersistentVolume');
const decodeEvent = modelDecoder<CoreV1Event>('CoreV1Event');

type Call<K extends keyof HotPathApi> = Parameters<HotPathApi[K]>[0];

/**
 * `createPersistentVolume`, `createNamespacedEvent` and `patchNamespacedEvent` with client-node's signatures and
 * results (objects in client-node's model shape, errors as its `ApiException`), sent by a {@link RestClient}: what
 * the controller writes per provision, without client-node's per-request cost. `createPersistentVolume` sends what
 * client-node sends, query parameters and per-call options included (see `RestClient.json`). The Event calls send
 * the body only, and the patch is always a JSON merge patch, which is what the event recorder sends (the second
 * argument of client-node's calls is ignored): no per-call options to run for each Event.
 *
 * @param priority - how these requests wait for a client-side rate limit token: the controller's Event writes go
 *   at `low`, so they never hold up the PV writes they report on.
 */
export function hotPathApi(
  kc: KubeConfig,
  options: AgentClientOptions = {},
  priority: RequestPriority = 'normal',
): HotPathApi {
  const rest = new RestClient(kc, options);
  const api: HotPathApi = {
    createPersistentVolume: async (param: Call<'createPersistentVolume'>, callOptions) => {
      checkRequired(['CoreV1Api', 'createPersistentVolume'], param, ['body']);
      return decodeVolume(
        await rest.json({
          method: 'POST',
          path: '/api/v1/persistentvolumes',
          query: writeQuery(param),
          body: param.body,
          priority,
          options: callOptions,
        }),
      );
    },
    createNamespacedEvent: async (param: Call<'createNamespacedEvent'>) =>
      decodeEvent(
        await rest.json({
          method: 'POST',
          path: `/api/v1/namespaces/${encodeURIComponent(param.namespace)}/events`,
          body: param.body,
          priority,
        }),
      ),
    patchNamespacedEvent: async (param: Call<'patchNamespacedEvent'>) =>
      decodeEvent(
        await rest.json({
          method: 'PATCH',
          path: `/api/v1/namespaces/${encodeURIComponent(param.namespace)}/events/${encodeURIComponent(param.name)}`,
          body: param.body,
          contentType: 'application/merge-patch+json',
          priority,
        }),
      ),
  };
  return api;
}
