/**
 * Whether any of a PV's nodes exists: upstream's `AnyNodeExists` on the Node cache, and the same question asked of
 * the API server right before something is deleted.
 *
 * @module
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { isNotFound, withSignal, type Store } from '@kprov/provisioner-lib';
import { HOSTNAME_LABEL } from '../discovery/volume.js';

/** Name of the Node cache's index of `kubernetes.io/hostname` label values. */
export const HOSTNAME_INDEX = 'hostname';

/** The index function of {@link HOSTNAME_INDEX}. */
export function hostnameIndex(node: V1Node): readonly string[] {
  const value = node.metadata?.labels?.[HOSTNAME_LABEL];
  return value === undefined ? [] : [value];
}

/** A label value as Kubernetes validates one: at most 63 characters, alphanumeric at both ends, `-_.` inside. */
function isLabelValue(value: string): boolean {
  return value.length <= 63 && /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(value);
}

/**
 * Upstream's `AnyNodeExists` on the Node cache (which must have {@link HOSTNAME_INDEX}): whether a Node is named as
 * one of `names`, or carries one of them as its `kubernetes.io/hostname` label (a node's name and hostname may
 * differ, on AWS say). A name that cannot be a label value counts as existing, as upstream, which cannot build the
 * label selector for it, fails safe.
 */
export function anyNodeExists(nodes: Store<V1Node>, names: readonly string[]): boolean {
  for (const name of names) {
    if (nodes.get(name) !== undefined) return true;
    if (!isLabelValue(name)) return true;
    if (nodes.byIndex(HOSTNAME_INDEX, name).length > 0) return true;
  }
  return false;
}

/**
 * {@link anyNodeExists} asked of the API server (a GET by name, then a list by label, per name), for a decision
 * that must not rest on a cache that may lag: a Node created again a moment ago is seen.
 *
 * @throws the API error of any answer other than found or not found; the caller then deletes nothing (fail safe).
 */
export async function anyNodeExistsNow(
  core: Pick<CoreV1Api, 'readNode' | 'listNode'>,
  names: readonly string[],
  signal: AbortSignal,
): Promise<boolean> {
  for (const name of names) {
    if (!isLabelValue(name)) return true;
    if (name !== '') {
      try {
        await core.readNode({ name }, withSignal(signal));
        return true;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const list = await core.listNode({ labelSelector: `${HOSTNAME_LABEL}=${name}`, limit: 1 }, withSignal(signal));
    if (list.items.length > 0) return true;
  }
  return false;
}
