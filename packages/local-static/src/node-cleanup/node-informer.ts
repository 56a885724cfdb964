/**
 * A Node informer that keeps only what the node-cleanup controller reads of a Node: its name, uid, labels and
 * resourceVersion. provisioner-lib's `informerFor` knows PVs, PVCs and StorageClasses only, so this one is put
 * together from its `Informer`, listed (`restListFn`) and watched through the library's JSON client.
 *
 * @module
 */
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { Informer, RestClient, restListFn, type Clock, type Logger } from '@kprov/provisioner-lib';
import { hostnameIndex, HOSTNAME_INDEX } from './node-exists.js';

/** A Node cut down to its identity and labels (a Node's status, with its image list, is most of its size). */
function slimNode(node: V1Node): V1Node {
  const m = node.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      ...(m.name === undefined ? {} : { name: m.name }),
      ...(m.uid === undefined ? {} : { uid: m.uid }),
      ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
      ...(m.labels === undefined ? {} : { labels: m.labels }),
    },
  };
}

/** An informer of every Node, slimmed (see the module comment), with the {@link HOSTNAME_INDEX} index. */
export function nodeInformer(kc: KubeConfig, options: { clock: Clock; logger: Logger }): Informer<V1Node> {
  const rest = new RestClient(kc);
  const decode = (raw: unknown): V1Node => slimNode(raw as V1Node);
  return new Informer<V1Node>({
    path: '/api/v1/nodes',
    // Node by Node as the answer arrives, each slimmed at once: a page of 500 Nodes with their image lists is never
    // held whole.
    list: restListFn(rest, '/api/v1/nodes', decode),
    watch: rest,
    decode,
    indexers: { [HOSTNAME_INDEX]: hostnameIndex },
    clock: options.clock,
    logger: options.logger,
  });
}
