/**
 * What the simulated kubelet reads and writes of the cluster, so that one kubelet serves both the in-process
 * testkit (its {@link ObjectStore}, through {@link storeCluster}) and any API server (list+watch caches and REST
 * calls, see `src/hollow-node/api-cluster.ts`). Reads are synchronous and return the held objects themselves, not
 * copies: callers must never mutate them.
 */
import type { KubeObject } from '../../api/objects.js';
import type { StatusError } from '../../api/status.js';
import type { ObjectStore } from '../../store/store.js';
import type { Pod } from '../types.js';

/** The resources the kubelet reads. */
export type KubeletResource =
  'pods' | 'persistentvolumeclaims' | 'persistentvolumes' | 'configmaps' | 'secrets' | 'nodes';

/** Told about a changed object (added, modified or deleted); `resource` may name one the kubelet does not read. */
export type ClusterListener = (resource: string, object: Readonly<KubeObject>) => void;

/** The kubelet's view of the cluster; see the module comment. */
export interface KubeletCluster {
  /** The object as known now, or `undefined`. Not a copy: never mutate it. */
  get(resource: KubeletResource, namespace: string | undefined, name: string): Readonly<KubeObject> | undefined;
  /** The known pods: at least every pod bound to one of the kubelet's nodes. Not copies. */
  pods(): Iterable<Readonly<KubeObject>>;
  /** Calls `listener` after every change; returns the function that removes it. */
  subscribe(listener: ClusterListener): () => void;
  /**
   * Replaces a pod's status through the `pods/status` subresource, with the pod's `uid` and `resourceVersion` as
   * preconditions. Rejects with the server's error, e.g. a 409 Conflict when the pod changed meanwhile (the caller
   * retries once its view has caught up).
   */
  updatePodStatus(pod: Readonly<Pod>, status: Record<string, unknown>): Promise<void>;
  /**
   * Deletes a pod for good, as the kubelet does once its containers are gone: `gracePeriodSeconds: 0` with a uid
   * precondition. A pod already gone (or replaced by one with another uid) is not an error.
   */
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
}

/** Whether an error is a StatusError (or a client error) with one of the given HTTP codes. */
export function hasCode(err: unknown, ...codes: number[]): boolean {
  const code = (err as Partial<StatusError> | undefined)?.status?.code ?? (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' && codes.includes(code);
}

/** The in-process store as a {@link KubeletCluster}: reads without copying, writes committed at once. */
export function storeCluster(store: ObjectStore): KubeletCluster {
  return {
    get: (resource, namespace, name) => store.peekObject(resource, namespace, name),
    pods: () => store.peek('pods'),
    subscribe: (listener) => store.subscribe((c) => listener(c.resource, c.object)),
    // Async only in signature: both commit before returning, as the store's own callers expect.
    async updatePodStatus(pod, status) {
      const { name, namespace, uid, resourceVersion } = pod.metadata;
      store.update(
        'pods',
        { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid, resourceVersion }, status },
        { subresource: 'status' },
      );
    },
    async deletePod(namespace, name, uid) {
      try {
        store.delete('pods', namespace, name, { uid });
      } catch (err) {
        if (!hasCode(err, 404, 409)) throw err;
      }
    },
  };
}
