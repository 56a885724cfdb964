import {
  CoreV1Api,
  loadYaml,
  StorageV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StorageClass,
} from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { makeApiClient, withSignal } from '../client/agent.js';
import type { ListFn, ListParams } from '../watch/watcher.js';
import { uidIndex, type IndexFunc } from './store.js';

/** The kinds {@link informerFor} knows, with their object types. */
export interface InformerKinds {
  /** core/v1 PersistentVolumeClaims, all namespaces, indexed by `uid`. */
  PersistentVolumeClaim: V1PersistentVolumeClaim;
  /** core/v1 PersistentVolumes (cluster-scoped). */
  PersistentVolume: V1PersistentVolume;
  /** storage.k8s.io/v1 StorageClasses (cluster-scoped). */
  StorageClass: V1StorageClass;
}

/** A kind {@link informerFor} knows. */
export type InformerKind = keyof InformerKinds;

/** How to list and watch one kind. */
export interface ResourceSpec<T extends KubernetesObject> {
  /** `apiVersion` of the objects, e.g. `v1`. */
  apiVersion: string;
  /** `kind` of the objects, e.g. `PersistentVolumeClaim`. */
  kind: string;
  /** Collection path for the watch, across all namespaces. */
  path: string;
  /** Page lister (through {@link makeApiClient}, so through the shared agent). */
  list: ListFn<T>;
  /** Default indexers. */
  indexers: Readonly<Record<string, IndexFunc<T>>>;
  /** Turns a raw watch object into the same typed model the list returns. */
  decode: (raw: unknown) => T;
}

function query(p: ListParams): { limit: number; _continue?: string; labelSelector?: string; fieldSelector?: string } {
  return {
    limit: p.limit,
    ...(p.continue === undefined ? {} : { _continue: p.continue }),
    ...(p.labelSelector === undefined ? {} : { labelSelector: p.labelSelector }),
    ...(p.fieldSelector === undefined ? {} : { fieldSelector: p.fieldSelector }),
  };
}

/** Items of a typed list carry no apiVersion/kind on the wire; add them so listed and watched objects look alike. */
function withKind<T extends KubernetesObject>(list: KubernetesListObject<T>, apiVersion: string, kind: string): KubernetesListObject<T> {
  for (const item of list.items) {
    item.apiVersion ??= apiVersion;
    item.kind ??= kind;
  }
  return list;
}

/**
 * Deserializes a raw watch object into client-node's typed model (Date fields as `Date`), as the generated
 * list call does for its items. client-node 2.0.1 exports its ObjectSerializer only through `loadYaml`, which
 * picks the model from apiVersion/kind; JSON is YAML, and `json: true` keeps JSON.parse semantics.
 */
function decoder<T>(apiVersion: string, kind: string): (raw: unknown) => T {
  return (raw) => {
    const o = raw as KubernetesObject;
    return loadYaml<T>(JSON.stringify({ ...o, apiVersion: o.apiVersion ?? apiVersion, kind: o.kind ?? kind }), { json: true });
  };
}

type SpecFactories = { [K in InformerKind]: (kc: KubeConfig, agent: Dispatcher | undefined) => ResourceSpec<InformerKinds[K]> };

const SPECS: SpecFactories = {
  PersistentVolumeClaim: (kc, agent) => {
    const core = makeApiClient(kc, CoreV1Api, agent === undefined ? {} : { agent });
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      path: '/api/v1/persistentvolumeclaims',
      list: async (p, signal) => withKind(await core.listPersistentVolumeClaimForAllNamespaces(query(p), withSignal(signal)), 'v1', 'PersistentVolumeClaim'),
      indexers: { uid: uidIndex },
      decode: decoder('v1', 'PersistentVolumeClaim'),
    };
  },
  PersistentVolume: (kc, agent) => {
    const core = makeApiClient(kc, CoreV1Api, agent === undefined ? {} : { agent });
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      path: '/api/v1/persistentvolumes',
      list: async (p, signal) => withKind(await core.listPersistentVolume(query(p), withSignal(signal)), 'v1', 'PersistentVolume'),
      indexers: {},
      decode: decoder('v1', 'PersistentVolume'),
    };
  },
  StorageClass: (kc, agent) => {
    const storage = makeApiClient(kc, StorageV1Api, agent === undefined ? {} : { agent });
    return {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      path: '/apis/storage.k8s.io/v1/storageclasses',
      list: async (p, signal) => withKind(await storage.listStorageClass(query(p), withSignal(signal)), 'storage.k8s.io/v1', 'StorageClass'),
      indexers: {},
      decode: decoder('storage.k8s.io/v1', 'StorageClass'),
    };
  },
};

/** The list/watch spec of `kind`, with API clients made by {@link makeApiClient} (through `agent` if given). */
export function resourceSpec<K extends InformerKind>(kc: KubeConfig, kind: K, agent?: Dispatcher): ResourceSpec<InformerKinds[K]> {
  const factory: SpecFactories[K] | undefined = SPECS[kind];
  if (factory === undefined) throw new Error(`informerFor: unknown kind ${String(kind)}`);
  return factory(kc, agent);
}
