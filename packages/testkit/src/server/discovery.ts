import { GROUP_VERSIONS, RESOURCES, type ResourceType } from '../api/resources.js';
import { openApiV3 } from './openapi.js';

/** The version the server reports; client-node and kubectl only read `major`, `minor` and `gitVersion`. */
export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kprov-testkit',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function resourceEntries(r: ResourceType): object[] {
  const main: Record<string, unknown> = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: r.verbs,
  };
  if (r.shortNames.length > 0) main.shortNames = r.shortNames;
  if (r.categories !== undefined) main.categories = r.categories;
  const subs = r.subresources.map((s) => ({
    name: `${r.plural}/${s}`,
    singularName: '',
    namespaced: r.namespaced,
    kind: s === 'log' ? 'Pod' : r.kind,
    verbs: s === 'log' ? ['get'] : ['get', 'patch', 'update'],
  }));
  if (r.plural === 'pods') {
    subs.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
  }
  return [main, ...subs];
}

function resourceList(group: string, version: string): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: RESOURCES.filter((r) => r.group === group && r.version === version).flatMap(resourceEntries),
  };
}

function apiGroup(group: string, version: string): object {
  const gv = { groupVersion: `${group}/${version}`, version };
  return { name: group, versions: [gv], preferredVersion: gv };
}

/** Answers a discovery path, or `undefined` when the server does not serve it. */
export function discover(path: string, serverAddress: string): { status: number; body: unknown } | undefined {
  if (path === '/version') return { status: 200, body: SERVER_VERSION };
  if (path === '/healthz' || path === '/livez' || path === '/readyz') return { status: 200, body: 'ok' };
  if (path === '/api') {
    return {
      status: 200,
      body: {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
      },
    };
  }
  if (path.startsWith('/openapi/v3')) {
    const doc = openApiV3(path);
    return doc === undefined ? undefined : { status: 200, body: doc };
  }
  if (path === '/api/v1') return { status: 200, body: resourceList('', 'v1') };
  if (path === '/apis') {
    return {
      status: 200,
      body: { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUP_VERSIONS.map((g) => apiGroup(g.group, g.version)) },
    };
  }
  const m = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (m !== null) {
    const group = m[1] ?? '';
    const gv = GROUP_VERSIONS.find((g) => g.group === group && (m[2] === undefined || g.version === m[2]));
    if (gv === undefined) return undefined;
    if (m[2] === undefined)
      return { status: 200, body: { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(gv.group, gv.version) } };
    return { status: 200, body: resourceList(gv.group, gv.version) };
  }
  return undefined;
}
