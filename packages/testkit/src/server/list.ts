import { clone, type KubeObject } from '../api/objects.js';
import { resourceKey, type ResourceType } from '../api/resources.js';
import { badRequest, forbidden, gone, invalid, notSupported, StatusError, type FieldError } from '../api/status.js';
import type { ObjectStore } from '../store/store.js';
import { matchesSelectors, type Selectors } from './selection.js';

/** A list query, from the request's parameters. */
export interface ListQuery extends Selectors {
  namespace?: string;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: number;
  continueToken?: string;
  remainingItemCount?: number;
}

interface ContinueKey {
  v: string;
  rv: number;
  start: string;
}

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function encodeContinue(key: ContinueKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeContinue(token: string): ContinueKey {
  try {
    const key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueKey;
    if (key.v !== 'meta.k8s.io/v1' || typeof key.rv !== 'number' || typeof key.start !== 'string')
      throw new Error('bad');
    return key;
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

function sortKey(o: KubeObject): string {
  return o.metadata.namespace === undefined
    ? (o.metadata.name ?? '')
    : `${o.metadata.namespace}/${o.metadata.name ?? ''}`;
}

/**
 * The objects of a resource as they were at `rv`, rebuilt by undoing newer changes from the history (the real
 * server reads etcd at that revision), in storage key order. These are the stored objects themselves, not copies:
 * read them, and copy what leaves the server. Throws 410 Expired when the history no longer reaches back that far.
 */
export function snapshotAt(store: ObjectStore, r: ResourceType, rv: number): readonly Readonly<KubeObject>[] {
  const byKey = new Map(store.peek(r).map((o) => [sortKey(o), o]));
  if (rv < store.resourceVersion) {
    const newer = store.history.since(rv);
    // An exact list goes to etcd, whose compaction it meets with this (the watch cache's wording differs).
    if (newer === undefined) throw gone('The resourceVersion for the provided list is too old.');
    const key = resourceKey(r);
    for (let i = newer.length - 1; i >= 0; i--) {
      const c = newer[i];
      if (c === undefined || c.resource !== key) continue;
      const k = sortKey(c.object);
      if (c.type === 'ADDED') byKey.delete(k);
      else if (c.previous !== undefined) byKey.set(k, c.previous);
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
}

/** Runs a list with the real server's resourceVersion, selector and pagination semantics. */
export function listObjects(store: ObjectStore, r: ResourceType, q: ListQuery): ListResult {
  let atRv = store.resourceVersion;
  let start = '';
  if (q.continueToken !== undefined && q.continueToken !== '') {
    if (q.resourceVersion !== undefined && q.resourceVersion !== '') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const key = decodeContinue(q.continueToken);
    if (key.rv < store.history.compactedAt) throw gone(EXPIRED_CONTINUE);
    atRv = key.rv;
    start = key.start;
  } else if (q.resourceVersion !== undefined && q.resourceVersion !== '' && q.resourceVersion !== '0') {
    const wanted = Number(q.resourceVersion);
    if (!Number.isInteger(wanted) || wanted < 0) throw badRequest(`invalid resource version: ${q.resourceVersion}`);
    if (wanted > store.resourceVersion) {
      throw new StatusError(
        504,
        'Timeout',
        `Too large resource version: ${wanted}, current: ${store.resourceVersion}`,
        {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        },
      );
    }
    if (q.resourceVersionMatch === 'Exact') atRv = wanted;
  }
  // Only the objects that are returned are copied, not every object of the resource.
  const all = snapshotAt(store, r, atRv).filter(
    (o) =>
      (q.namespace === undefined || !r.namespaced || o.metadata.namespace === q.namespace) && matchesSelectors(r, o, q),
  );
  const from = start === '' ? all : all.filter((o) => sortKey(o) >= start);
  // resourceVersion=0 is served from kube-apiserver's watch cache, which ignores `limit` (v1.32): every object, one
  // answer, no continue token.
  const fromCache = q.resourceVersion === '0';
  const limit = !fromCache && q.limit !== undefined && q.limit > 0 ? q.limit : undefined;
  if (limit === undefined || from.length <= limit) return { items: from.map((o) => clone(o)), resourceVersion: atRv };
  const page = from.slice(0, limit).map((o) => clone(o));
  const next = from[limit];
  const result: ListResult = { items: page, resourceVersion: atRv, remainingItemCount: from.length - limit };
  if (next !== undefined)
    result.continueToken = encodeContinue({ v: 'meta.k8s.io/v1', rv: atRv, start: sortKey(next) });
  return result;
}

/** The list and watch parameters {@link validateListOptions} looks at, as the request gave them. */
export interface ListOptionsQuery {
  resourceVersion: string | null;
  resourceVersionMatch: string | null;
  continueToken: string | null;
  sendInitialEvents: boolean | undefined;
}

/**
 * `ValidateListOptions` for a list or a watch (with the WatchList feature on, as in 1.32): 422 Invalid on
 * `ListOptions.meta.k8s.io` with one cause per problem.
 */
export function validateListOptions(q: ListOptionsQuery, watch: boolean): void {
  const errors: FieldError[] = [];
  const match = q.resourceVersionMatch ?? '';
  const cont = (q.continueToken ?? '') !== '';
  if (watch) {
    if (q.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      errors.push(
        forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'),
      );
    }
    if (match !== '') {
      if (q.sendInitialEvents === undefined)
        errors.push(
          forbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
          ),
        );
      if (match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (cont)
        errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  } else {
    if (match !== '') {
      if ((q.resourceVersion ?? '') === '')
        errors.push(
          forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
        );
      if (cont)
        errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan')
        errors.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && q.resourceVersion === '0')
        errors.push(
          forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
        );
    }
    if (q.sendInitialEvents !== undefined)
      errors.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
}
