import { findResource, type ResourceType } from '../api/resources.js';

/** What a request path names. */
export type Route =
  | { type: 'discovery'; path: string }
  | {
      type: 'resource';
      resource: ResourceType;
      /** Namespace from the path, for namespaced resources; absent means all namespaces (collection) or cluster scope. */
      namespace?: string;
      name?: string;
      subresource?: string;
    }
  | { type: 'unknown' };

const DISCOVERY = /^\/(version|api|apis|healthz|livez|readyz|openapi\/v2|openapi\/v3(\/.*)?)\/?$/;

function splitPath(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
}

/** Parses `/api/v1/...` and `/apis/<group>/<version>/...` paths as kube-apiserver's request info resolver does. */
export function parseRoute(pathname: string): Route {
  if (DISCOVERY.test(pathname)) return { type: 'discovery', path: pathname.replace(/\/$/, '') };
  const parts = splitPath(pathname);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 2) return { type: 'discovery', path: `/api/${parts[1]}` };
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 2 || parts.length === 3) return { type: 'discovery', path: `/${parts.join('/')}` };
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return { type: 'unknown' };
  }
  // /namespaces/{ns}/{resource}[/{name}[/{sub}]] addresses namespaced resources; anything else is cluster scope
  // (including /namespaces/{name}[/status] itself).
  const nested = rest[0] === 'namespaces' && rest.length >= 3 ? findResource(group, version, rest[2] ?? '') : undefined;
  if (nested !== undefined || (rest[0] === 'namespaces' && rest.length > 3)) {
    const resource = nested;
    if (resource === undefined || !resource.namespaced || rest.length > 5) return { type: 'unknown' };
    const route: Route = { type: 'resource', resource, namespace: rest[1] ?? '' };
    if (rest[3] !== undefined) route.name = rest[3];
    if (rest[4] !== undefined) route.subresource = rest[4];
    return route;
  }
  const resource = findResource(group, version, rest[0] ?? '');
  if (resource === undefined || rest.length > 3) return { type: 'unknown' };
  if (resource.namespaced && rest.length > 1) return { type: 'unknown' };
  const route: Route = { type: 'resource', resource };
  if (rest[1] !== undefined) route.name = rest[1];
  if (rest[2] !== undefined) route.subresource = rest[2];
  return route;
}
