/**
 * The calls local-static makes to the API server, with the signatures of client-node's generated `CoreV1Api` and
 * `BatchV1Api` (so that either of those is one), sent by the library's JSON client (`RestClient`). A binary that used
 * the generated classes for them loaded client-node's `KubeConfig` module, undici and the classes' serializer with
 * every model it names: about 20 MiB of the per-node daemon's RSS at rest. The PV writes are the library's own
 * (`makeProvisionControllerClient`).
 *
 * Answers are parsed JSON, not client-node's models: timestamps stay strings (nothing here reads one as a `Date`),
 * and a list's continue token is renamed to client-node's `_continue`, which the library's `Watcher` reads.
 *
 * @module
 */
import type { BatchV1Api, CoreV1Api, KubeConfig, V1ListMeta, V1NodeList } from '@kubernetes/client-node';
import { makeProvisionControllerClient, RestClient, type Query } from '@kprov/provisioner-lib';

/** A list's `metadata` as the API server sends it, with its continue token renamed to client-node's `_continue`. */
export function listMetaOf(metadata: (V1ListMeta & { continue?: string }) | undefined): V1ListMeta {
  const { continue: token, ...rest } = metadata ?? {};
  return token === undefined ? rest : { ...rest, _continue: token };
}

/** The `CoreV1Api` calls of the provisioner and the node-cleanup controller. */
export type CoreCalls = Pick<
  CoreV1Api,
  | 'readNode'
  | 'replaceNode'
  | 'listNode'
  | 'createPersistentVolume'
  | 'readPersistentVolume'
  | 'deletePersistentVolume'
  | 'readNamespacedPersistentVolumeClaim'
  | 'deleteNamespacedPersistentVolumeClaim'
>;

/** The `BatchV1Api` calls of the Job cleanup mode. */
export type JobCalls = Pick<BatchV1Api, 'readNamespacedJob' | 'createNamespacedJob' | 'deleteNamespacedJob'>;

type Param<A, K extends keyof A> = A[K] extends (param: infer P, ...rest: never[]) => unknown ? P : never;

const segment = encodeURIComponent;

/**
 * The query parameters of a generated client's call: every field of its parameter object but the path's and the body
 * (client-node's `_continue` is sent as `continue`), as the generated clients send them.
 */
function queryOf(param: object, inPath: readonly string[] = ['name']): Query {
  const query: Record<string, string | number | boolean | undefined> = {};
  for (const [key, value] of Object.entries(param)) {
    if (key === 'body' || inPath.includes(key)) continue;
    query[key === '_continue' ? 'continue' : key] = value as string | number | boolean | undefined;
  }
  return query;
}

const NAMESPACED = ['name', 'namespace'];

/** The `CoreV1Api` calls of local-static on the library's JSON client of `kc`. */
export function coreCalls(kc: KubeConfig): CoreCalls {
  const rest = new RestClient(kc);
  const volumes = makeProvisionControllerClient(kc);
  return {
    readNode: (param: Param<CoreV1Api, 'readNode'>, options) =>
      rest.json({ method: 'GET', path: `/api/v1/nodes/${segment(param.name)}`, query: queryOf(param), options }),
    replaceNode: (param: Param<CoreV1Api, 'replaceNode'>, options) =>
      rest.json({
        method: 'PUT',
        path: `/api/v1/nodes/${segment(param.name)}`,
        query: queryOf(param),
        body: param.body,
        options,
      }),
    listNode: async (param: Param<CoreV1Api, 'listNode'> = {}, options) => {
      const list = await rest.json<V1NodeList & { metadata?: { continue?: string } }>({
        method: 'GET',
        path: '/api/v1/nodes',
        query: queryOf(param, []),
        options,
      });
      return { ...list, items: list.items ?? [], metadata: listMetaOf(list.metadata) };
    },
    createPersistentVolume: (param, options) => volumes.createPersistentVolume(param, options),
    readPersistentVolume: (param: Param<CoreV1Api, 'readPersistentVolume'>, options) =>
      rest.json({
        method: 'GET',
        path: `/api/v1/persistentvolumes/${segment(param.name)}`,
        query: queryOf(param),
        options,
      }),
    deletePersistentVolume: (param, options) => volumes.deletePersistentVolume(param, options),
    readNamespacedPersistentVolumeClaim: (param: Param<CoreV1Api, 'readNamespacedPersistentVolumeClaim'>, options) =>
      rest.json({
        method: 'GET',
        path: `/api/v1/namespaces/${segment(param.namespace)}/persistentvolumeclaims/${segment(param.name)}`,
        query: queryOf(param, NAMESPACED),
        options,
      }),
    deleteNamespacedPersistentVolumeClaim: (
      param: Param<CoreV1Api, 'deleteNamespacedPersistentVolumeClaim'>,
      options,
    ) =>
      rest.json({
        method: 'DELETE',
        path: `/api/v1/namespaces/${segment(param.namespace)}/persistentvolumeclaims/${segment(param.name)}`,
        query: queryOf(param, NAMESPACED),
        body: param.body,
        options,
      }),
  };
}

/** The `BatchV1Api` calls of local-static on the library's JSON client of `kc`. */
export function jobCalls(kc: KubeConfig): JobCalls {
  const rest = new RestClient(kc);
  const jobs = (namespace: string): string => `/apis/batch/v1/namespaces/${segment(namespace)}/jobs`;
  return {
    readNamespacedJob: (param: Param<BatchV1Api, 'readNamespacedJob'>, options) =>
      rest.json({
        method: 'GET',
        path: `${jobs(param.namespace)}/${segment(param.name)}`,
        query: queryOf(param, NAMESPACED),
        options,
      }),
    createNamespacedJob: (param: Param<BatchV1Api, 'createNamespacedJob'>, options) =>
      rest.json({
        method: 'POST',
        path: jobs(param.namespace),
        query: queryOf(param, NAMESPACED),
        body: param.body,
        options,
      }),
    deleteNamespacedJob: (param: Param<BatchV1Api, 'deleteNamespacedJob'>, options) =>
      rest.json({
        method: 'DELETE',
        path: `${jobs(param.namespace)}/${segment(param.name)}`,
        query: queryOf(param, NAMESPACED),
        body: param.body,
        options,
      }),
  };
}
