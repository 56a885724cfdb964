import type {
  KubeConfig,
  KubernetesObject,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import type { Agent as HttpAgent } from 'node:http';
import type { Dispatcher } from 'undici';
import { modelDecoder } from '../client/models.js';
import { RestClient } from '../client/rest.js';
import type { ListFn, WatchLike } from '../watch/watcher.js';
import { stripManagedFields as stripManagedFieldsOf } from './managed-fields.js';
import { restListFn } from './rest-list.js';
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
  /** Page lister (through a {@link RestClient}, so through the shared pool and the client-side rate limit). */
  list: ListFn<T>;
  /** The watch, through the same client. */
  watch: WatchLike;
  /** Default indexers. */
  indexers: Readonly<Record<string, IndexFunc<T>>>;
  /** Turns a raw watch object into the same typed model the list returns. */
  decode: (raw: unknown) => T;
}

/**
 * A kind's list and watch through one {@link RestClient}. Listed items carry no apiVersion/kind on the wire; they get
 * them, so listed and watched objects look alike, and both are decoded in place by the same {@link modelDecoder}
 * (timestamps become `Date`s), as client-node's generated list would give them but without its copy of every object.
 */
function spec<T extends KubernetesObject>(
  kc: KubeConfig,
  { agent, stripManagedFields = false }: ResourceOptions,
  apiVersion: string,
  kind: string,
  path: string,
  indexers: Readonly<Record<string, IndexFunc<T>>>,
): ResourceSpec<T> {
  const rest = new RestClient(kc, agent === undefined ? {} : { agent });
  const decodeItem = modelDecoder<T>(`V1${kind}`);
  // managedFields left out before an object is decoded: a list's are never parsed, a watched object's timestamps
  // in them never converted.
  const strip = stripManagedFields ? stripManagedFieldsOf : (o: KubernetesObject): KubernetesObject => o;
  const decode = (raw: unknown): T => {
    const o = strip(raw as KubernetesObject);
    o.apiVersion ??= apiVersion;
    o.kind ??= kind;
    return decodeItem(o);
  };
  return {
    apiVersion,
    kind,
    path,
    // Item by item as the answer arrives: 10,000 claims are never held as one text and one tree.
    list: restListFn(rest, path, decode, { stripManagedFields }),
    watch: rest,
    indexers,
    decode,
  };
}

/** How {@link resourceSpec} lists and watches. */
export interface ResourceOptions {
  /** The connection pool of the requests. Default: the library's shared keep-alive pool of the KubeConfig. */
  agent?: Dispatcher | HttpAgent | undefined;
  /** Leave `metadata.managedFields` out of every object before it is decoded (a list's is never parsed). */
  stripManagedFields?: boolean | undefined;
}

type SpecFactories = {
  [K in InformerKind]: (kc: KubeConfig, options: ResourceOptions) => ResourceSpec<InformerKinds[K]>;
};

const SPECS: SpecFactories = {
  PersistentVolumeClaim: (kc, options) =>
    spec<V1PersistentVolumeClaim>(kc, options, 'v1', 'PersistentVolumeClaim', '/api/v1/persistentvolumeclaims', {
      uid: uidIndex,
    }),
  PersistentVolume: (kc, options) =>
    spec<V1PersistentVolume>(kc, options, 'v1', 'PersistentVolume', '/api/v1/persistentvolumes', {}),
  StorageClass: (kc, options) =>
    spec<V1StorageClass>(
      kc,
      options,
      'storage.k8s.io/v1',
      'StorageClass',
      '/apis/storage.k8s.io/v1/storageclasses',
      {},
    ),
};

/** The list/watch spec of `kind`, through a {@link RestClient}. */
export function resourceSpec<K extends InformerKind>(
  kc: KubeConfig,
  kind: K,
  options: ResourceOptions = {},
): ResourceSpec<InformerKinds[K]> {
  const factory: SpecFactories[K] | undefined = SPECS[kind];
  if (factory === undefined) throw new Error(`informerFor: unknown kind ${String(kind)}`);
  return factory(kc, options);
}
