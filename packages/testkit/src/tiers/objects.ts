/**
 * What a storage test looks at, read through the API so that the same assertions hold on either tier: claims,
 * volumes, pods and the Events about them, `undefined` for an object that does not exist; and a recorder of one
 * watch's events from a consistent starting point.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  Watch,
  type CoreV1Event,
  type KubeConfig,
  type KubernetesObject,
  type V1Lease,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from '@kubernetes/client-node';
import { RestClient } from '../client/rest.js';

/** `undefined` for a 404, the object otherwise; other errors are thrown. */
async function orMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return undefined;
    throw err;
  }
}

/** Which Events {@link ObjectReader.events} returns; every field given must match. */
export interface EventFilter {
  /** `involvedObject.kind`, e.g. `PersistentVolumeClaim`. */
  kind?: string;
  /** `involvedObject.name`. */
  name?: string;
  /** `involvedObject.uid` (tells a recreated object's Events from the old one's). */
  uid?: string;
  reason?: string;
  /** The Event's namespace. Default all. */
  namespace?: string;
}

/** Reads through the API; see the module comment. */
export class ObjectReader {
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** The Leases of a namespace (leader election). */
  async leases(namespace: string): Promise<V1Lease[]> {
    return (await this.coordination.listNamespacedLease({ namespace })).items;
  }

  claim(name: string, namespace = 'default'): Promise<V1PersistentVolumeClaim | undefined> {
    return orMissing(this.core.readNamespacedPersistentVolumeClaim({ name, namespace }));
  }

  async claims(namespace?: string): Promise<V1PersistentVolumeClaim[]> {
    const list =
      namespace === undefined
        ? this.core.listPersistentVolumeClaimForAllNamespaces()
        : this.core.listNamespacedPersistentVolumeClaim({ namespace });
    return (await list).items;
  }

  volume(name: string): Promise<V1PersistentVolume | undefined> {
    return orMissing(this.core.readPersistentVolume({ name }));
  }

  async volumes(): Promise<V1PersistentVolume[]> {
    return (await this.core.listPersistentVolume()).items;
  }

  pod(name: string, namespace = 'default'): Promise<V1Pod | undefined> {
    return orMissing(this.core.readNamespacedPod({ name, namespace }));
  }

  async pods(namespace?: string): Promise<V1Pod[]> {
    return (
      await (namespace === undefined ? this.core.listPodForAllNamespaces() : this.core.listNamespacedPod({ namespace }))
    ).items;
  }

  /** core/v1 Events matching `filter`, oldest first. */
  async events(filter: EventFilter = {}): Promise<CoreV1Event[]> {
    const list =
      filter.namespace === undefined
        ? this.core.listEventForAllNamespaces()
        : this.core.listNamespacedEvent({ namespace: filter.namespace });
    const time = (e: CoreV1Event): number =>
      new Date(e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? 0).getTime();
    return (await list).items
      .filter(
        (e) =>
          (filter.kind === undefined || e.involvedObject.kind === filter.kind) &&
          (filter.name === undefined || e.involvedObject.name === filter.name) &&
          (filter.uid === undefined || e.involvedObject.uid === filter.uid) &&
          (filter.reason === undefined || e.reason === filter.reason),
      )
      .sort((a, b) => time(a) - time(b));
  }
}

/** One event of a watch. */
export interface RecordedEvent<T extends KubernetesObject = KubernetesObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** A running recorder; see {@link recordWatch}. */
export interface WatchRecorder<T extends KubernetesObject = KubernetesObject> {
  /** Every event so far, in order (objects present at the start come first, as ADDED). */
  readonly events: readonly RecordedEvent<T>[];
  /** `<TYPE> <name>` per event, e.g. `ADDED helper-pod-create-pvc-1`. */
  names(): string[];
  /** Stops watching. */
  stop(): void;
}

/**
 * Lists `path` (a collection, e.g. `/api/v1/namespaces/ns/pods`) and watches it from the list's resourceVersion, so
 * that nothing between the two is missed; resolves once the watch is open. The objects listed are recorded as
 * ADDED. A watch that ends (a server timeout, a restart) is not resumed: recorders are for the length of a test.
 */
export async function recordWatch<T extends KubernetesObject = KubernetesObject>(
  kubeConfig: KubeConfig,
  path: string,
  query: Record<string, string> = {},
): Promise<WatchRecorder<T>> {
  const events: RecordedEvent<T>[] = [];
  const rest = new RestClient(kubeConfig);
  const listed = await rest.request('GET', path, { query }).finally(() => rest.close());
  for (const object of (listed.items ?? []) as T[]) events.push({ type: 'ADDED', object });
  const controller = await new Watch(kubeConfig).watch(
    path,
    {
      ...query,
      resourceVersion: (listed.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '',
      allowWatchBookmarks: false,
    },
    (type, object) => events.push({ type: type as RecordedEvent['type'], object: object as T }),
    () => undefined,
  );
  return {
    events,
    names: () => events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`),
    stop: () => controller.abort(),
  };
}
