import type { KubernetesObject } from '@kubernetes/client-node';
import { decodeListMeta } from '../client/models.js';
import type { RestClient } from '../client/rest.js';
import type { ListFn, ListParams } from '../watch/watcher.js';

/** How {@link restListFn} lists. */
export interface RestListOptions {
  /**
   * Leave `metadata.managedFields` out of every item before it is parsed (see {@link RestClient.list}). Default
   * `false`.
   */
  stripManagedFields?: boolean | undefined;
}

/** A page's query parameters as the API server names them. */
function query(p: ListParams): Record<string, string | number | undefined> {
  return {
    limit: p.limit,
    continue: p.continue,
    resourceVersion: p.resourceVersion,
    labelSelector: p.labelSelector,
    fieldSelector: p.fieldSelector,
  };
}

/**
 * A {@link ListFn} for an `Informer` of any kind, through `rest` (its connection pool and client-side rate
 * limit): each page of the collection at `path` (e.g. `/api/v1/nodes`) read item by item as the answer arrives
 * ({@link RestClient.list}), each item turned into the cached object by `decode` and handed to the informer before
 * the next is read, so that a large list is never held whole; the page's `metadata` as client-node's `V1ListMeta`
 * (its continue token as `_continue`). What `informerFor` lists with; for an informer of another kind, the
 * watch is `rest` itself and `decode` the same function.
 *
 * @param decode - a listed item as the cache keeps it; it may slim the object down. Listed items carry no
 *   `apiVersion` or `kind`: set them here if the cache needs them.
 */
export function restListFn<T extends KubernetesObject>(
  rest: RestClient,
  path: string,
  decode: (raw: unknown) => T,
  options: RestListOptions = {},
): ListFn<T> {
  const itemOptions = { stripManagedFields: options.stripManagedFields === true };
  return async (p, signal, each) => {
    const list = await rest.list({ path, query: query(p), signal }, (raw) => each(decode(raw)), itemOptions);
    return { metadata: decodeListMeta(list.metadata ?? {}), items: [] };
  };
}
