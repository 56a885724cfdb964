/** The resource types the server serves, with what discovery and the handlers need to know of each. */

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface ResourceType {
  /** API group; `''` for core. */
  group: string;
  version: string;
  /** Lower-case plural, as in URLs: `persistentvolumeclaims`. */
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories?: readonly string[];
  verbs: readonly Verb[];
  /** Subresources: `status` has its own update path; `log` is served for pods only. */
  subresources: readonly ('status' | 'log')[];
}

/** `v1` for core, `group/version` otherwise. */
export function apiVersionOf(r: ResourceType): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** A stable key for a resource type, e.g. `persistentvolumeclaims` or `storage.k8s.io/storageclasses`. */
export function resourceKey(r: Pick<ResourceType, 'group' | 'plural'>): string {
  return r.group === '' ? r.plural : `${r.group}/${r.plural}`;
}

function core(plural: string, kind: string, namespaced: boolean, extra: Partial<ResourceType> = {}): ResourceType {
  return {
    group: '',
    version: 'v1',
    plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    shortNames: [],
    verbs: ALL_VERBS,
    subresources: [],
    ...extra,
  };
}

export const RESOURCES: readonly ResourceType[] = [
  core('namespaces', 'Namespace', false, {
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status'],
  }),
  core('nodes', 'Node', false, { shortNames: ['no'], subresources: ['status'] }),
  core('pods', 'Pod', true, { shortNames: ['po'], categories: ['all'], subresources: ['status', 'log'] }),
  core('persistentvolumes', 'PersistentVolume', false, { shortNames: ['pv'], subresources: ['status'] }),
  core('persistentvolumeclaims', 'PersistentVolumeClaim', true, { shortNames: ['pvc'], subresources: ['status'] }),
  core('configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  core('secrets', 'Secret', true),
  core('serviceaccounts', 'ServiceAccount', true, { shortNames: ['sa'] }),
  core('events', 'Event', true, { shortNames: ['ev'] }),
  {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'storageclasses',
    singular: 'storageclass',
    kind: 'StorageClass',
    namespaced: false,
    shortNames: ['sc'],
    verbs: ALL_VERBS,
    subresources: [],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    shortNames: [],
    verbs: ALL_VERBS,
    subresources: [],
  },
  {
    group: 'batch',
    version: 'v1',
    plural: 'jobs',
    singular: 'job',
    kind: 'Job',
    namespaced: true,
    shortNames: [],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: ['status'],
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    verbs: ALL_VERBS,
    subresources: [],
  },
];

/** Looks a resource type up by group, version and plural, as a URL names it. */
export function findResource(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** Looks a resource type up by group and kind, e.g. for an object's apiVersion and kind. */
export function findResourceByKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

/** The type with the given key; throws for an unknown key (a programming error, not a client one). */
export function resourceByKey(key: string): ResourceType {
  const r = RESOURCES.find((x) => resourceKey(x) === key);
  if (r === undefined) throw new Error(`unknown resource key ${key}`);
  return r;
}

export const GROUP_VERSIONS: readonly { group: string; version: string }[] = [
  ...new Map(
    RESOURCES.filter((r) => r.group !== '').map((r) => [r.group, { group: r.group, version: r.version }]),
  ).values(),
];
