/**
 * Brings a shared real control plane back to how it was when it started, between tests: every object of the kinds
 * below that was not there at the start is deleted at once (finalizers removed, pods without a grace period), and
 * the deletions are awaited. Namespaces a test created are kept but emptied (deleting one takes the namespace
 * controller seconds, and the next test usually wants it again).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { RestClient, statusOf } from '../client/rest.js';

interface Kind {
  /** API prefix, e.g. `api/v1`, `apis/storage.k8s.io/v1`. */
  api: string;
  plural: string;
  namespaced: boolean;
}

/**
 * The kinds cleaned, in order: what makes pods (a manifest's or chart's Deployments and DaemonSets) before the pods,
 * pods before their claims, claims before volumes.
 */
const KINDS: readonly Kind[] = [
  { api: 'apis/apps/v1', plural: 'deployments', namespaced: true },
  { api: 'apis/apps/v1', plural: 'daemonsets', namespaced: true },
  { api: 'apis/apps/v1', plural: 'statefulsets', namespaced: true },
  { api: 'apis/apps/v1', plural: 'replicasets', namespaced: true },
  { api: 'apis/batch/v1', plural: 'jobs', namespaced: true },
  { api: 'apis/policy/v1', plural: 'poddisruptionbudgets', namespaced: true },
  { api: 'api/v1', plural: 'pods', namespaced: true },
  { api: 'api/v1', plural: 'persistentvolumeclaims', namespaced: true },
  { api: 'api/v1', plural: 'persistentvolumes', namespaced: false },
  { api: 'apis/storage.k8s.io/v1', plural: 'storageclasses', namespaced: false },
  { api: 'api/v1', plural: 'configmaps', namespaced: true },
  { api: 'api/v1', plural: 'services', namespaced: true },
  { api: 'api/v1', plural: 'secrets', namespaced: true },
  { api: 'api/v1', plural: 'serviceaccounts', namespaced: true },
  { api: 'apis/coordination.k8s.io/v1', plural: 'leases', namespaced: true },
  { api: 'apis/rbac.authorization.k8s.io/v1', plural: 'roles', namespaced: true },
  { api: 'apis/rbac.authorization.k8s.io/v1', plural: 'rolebindings', namespaced: true },
  { api: 'apis/rbac.authorization.k8s.io/v1', plural: 'clusterroles', namespaced: false },
  { api: 'apis/rbac.authorization.k8s.io/v1', plural: 'clusterrolebindings', namespaced: false },
  { api: 'api/v1', plural: 'nodes', namespaced: false },
  { api: 'api/v1', plural: 'events', namespaced: true },
];

/** What the reset reads of an object. */
export interface Item {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { uid?: string }[];
  };
  spec?: { claimRef?: { uid?: string } };
}

/**
 * Which of the objects that are not in the baseline a reset deletes. `created`: the uids of every object that was
 * not in the baseline when the reset began.
 */
export type ResetScope = (plural: string, item: Item, created: ReadonlySet<string>) => boolean;

const key = (plural: string, m: Item['metadata']): string => `${plural}/${m.namespace ?? ''}/${m.name}`;

/**
 * Objects that kube-controller-manager makes in every namespace, and kube-apiserver's own identity Leases: never
 * deleted (they would only come back).
 */
function alwaysKept(plural: string, m: Item['metadata']): boolean {
  if (plural === 'serviceaccounts' && m.name === 'default') return true;
  if (plural === 'configmaps' && (m.name === 'kube-root-ca.crt' || m.name === 'openshift-service-ca.crt')) return true;
  return plural === 'leases' && m.namespace === 'kube-system' && m.name.startsWith('apiserver-');
}

async function list(rest: RestClient, kind: Kind): Promise<Item[]> {
  return ((await rest.request('GET', `/${kind.api}/${kind.plural}`)).items ?? []) as Item[];
}

/** Removes the finalizers and deletes at once; an object already gone (404) or changed meanwhile (409) is fine. */
async function remove(rest: RestClient, p: string, withFinalizers: boolean): Promise<void> {
  const ignoreGone = (err: unknown): void => {
    if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
  };
  if (withFinalizers)
    await rest
      .request('PATCH', p, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' })
      .catch(ignoreGone);
  await rest.request('DELETE', p, { query: { gracePeriodSeconds: 0 } }).catch(ignoreGone);
}

function objectPath(kind: Kind, m: Item['metadata']): string {
  const ns = kind.namespaced ? `/namespaces/${encodeURIComponent(m.namespace ?? '')}` : '';
  return `/${kind.api}${ns}/${kind.plural}/${encodeURIComponent(m.name)}`;
}

/** The objects present now, as keys; what {@link resetToBaseline} keeps. */
export async function takeBaseline(kc: KubeConfig): Promise<Set<string>> {
  const rest = new RestClient(kc);
  try {
    const keys = new Set<string>();
    for (const kind of KINDS) for (const item of await list(rest, kind)) keys.add(key(kind.plural, item.metadata));
    return keys;
  } finally {
    await rest.close();
  }
}

/**
 * Deletes every object of the kinds above that is not in `baseline` (and that `scope` picks, when given) and waits
 * until they are gone (Events are not waited for: the controllers may still be recording some).
 *
 * @throws Error naming what is still there after `timeoutMs`.
 */
export async function resetToBaseline(
  kc: KubeConfig,
  baseline: ReadonlySet<string>,
  timeoutMs = 30_000,
  scope?: ResetScope,
): Promise<void> {
  const rest = new RestClient(kc);
  const created = new Set<string>();
  const leftOver = async (kind: Kind): Promise<Item[]> =>
    (await list(rest, kind)).filter(
      (i) =>
        !baseline.has(key(kind.plural, i.metadata)) &&
        !alwaysKept(kind.plural, i.metadata) &&
        (scope === undefined || scope(kind.plural, i, created)),
    );
  try {
    if (scope !== undefined)
      for (const kind of KINDS)
        for (const item of await list(rest, kind))
          if (!baseline.has(key(kind.plural, item.metadata)) && item.metadata.uid !== undefined)
            created.add(item.metadata.uid);
    for (const kind of KINDS) {
      for (const item of await leftOver(kind))
        await remove(rest, objectPath(kind, item.metadata), (item.metadata.finalizers ?? []).length > 0);
    }
    const deadline = Date.now() + timeoutMs;
    for (const kind of KINDS.filter((k) => k.plural !== 'events')) {
      for (;;) {
        const left = await leftOver(kind);
        if (left.length === 0) break;
        if (Date.now() > deadline)
          throw new Error(
            `cleaning the control plane: ${left.map((i) => key(kind.plural, i.metadata)).join(', ')} still there after ${timeoutMs} ms`,
          );
        // Finalizers a controller added again after ours were removed, or a deletion that raced a change.
        for (const item of left)
          await remove(rest, objectPath(kind, item.metadata), (item.metadata.finalizers ?? []).length > 0);
        await sleep(100);
      }
    }
  } finally {
    await rest.close();
  }
}
