/**
 * The kubelet's view of a cluster behind any API server ({@link KubeletCluster}): list+watch caches of the pods
 * bound to its nodes (one `spec.nodeName=<node>` watch per node, as a kubelet watches) and of every claim, volume,
 * ConfigMap and Secret, plus the Node objects its node agents last wrote. A status write replaces the pod through
 * `pods/status` with the cached resourceVersion and keeps the answer, so the next reconcile compares against what
 * was written; a 409 Conflict reloads the pod before the caller retries.
 */
import { inspect } from 'node:util';
import type { Watch } from '@kubernetes/client-node';
import type { KubeObject } from '../api/objects.js';
import { hasCode, type ClusterListener, type KubeletCluster, type KubeletResource } from '../sim/kubelet/cluster.js';
import type { Pod } from '../sim/types.js';
import { Reflector } from '../client/reflector.js';
import type { RestClient } from '../client/rest.js';

/** Options of {@link ApiCluster}. */
export interface ApiClusterOptions {
  rest: RestClient;
  watch: Watch;
  /** Names of the nodes whose pods to watch. */
  nodes: readonly string[];
  /** Told about watch failures before they are retried. */
  onError: (error: unknown, context: string) => void;
}

type Shared = Exclude<KubeletResource, 'pods' | 'nodes'>;

const SHARED_PATHS: Record<Shared, string> = {
  persistentvolumeclaims: '/api/v1/persistentvolumeclaims',
  persistentvolumes: '/api/v1/persistentvolumes',
  configmaps: '/api/v1/configmaps',
  secrets: '/api/v1/secrets',
};

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

/** See the module comment. */
export class ApiCluster implements KubeletCluster {
  private readonly listeners = new Set<ClusterListener>();
  private readonly podCaches = new Map<string, Reflector>();
  private readonly shared = new Map<Shared, Reflector>();
  private readonly nodes = new Map<string, KubeObject>();
  /** The last failure of a list or watch, for a start-up that times out. */
  lastError: Error | undefined;

  constructor(private readonly options: ApiClusterOptions) {
    const reflector = (resource: string, path: string, fieldSelector?: string): Reflector =>
      new Reflector({
        rest: options.rest,
        watch: options.watch,
        path,
        ...(fieldSelector === undefined ? {} : { fieldSelector }),
        onChange: (object) => this.emit(resource, object),
        onError: (error) => {
          this.lastError = error instanceof Error ? error : new Error(inspect(error));
          options.onError(
            error,
            `watch ${path}${fieldSelector === undefined ? '' : `?fieldSelector=${fieldSelector}`}`,
          );
        },
      });
    for (const node of options.nodes)
      this.podCaches.set(node, reflector('pods', '/api/v1/pods', `spec.nodeName=${node}`));
    for (const [resource, path] of Object.entries(SHARED_PATHS) as [Shared, string][])
      this.shared.set(resource, reflector(resource, path));
  }

  private get reflectors(): Reflector[] {
    return [...this.podCaches.values(), ...this.shared.values()];
  }

  /** Starts every list+watch. */
  start(): void {
    for (const r of this.reflectors) r.start();
  }

  /** Whether every cache has had its first list. */
  get synced(): boolean {
    return this.reflectors.every((r) => r.synced);
  }

  /** Stops every watch. */
  async stop(): Promise<void> {
    await Promise.all(this.reflectors.map(async (r) => r.stop()));
  }

  /** Holds the Node object a node agent last read or wrote. */
  setNode(node: KubeObject): void {
    this.nodes.set(node.metadata.name ?? '', node);
  }

  private emit(resource: string, object: Readonly<KubeObject>): void {
    for (const l of [...this.listeners]) l(resource, object);
  }

  get(resource: KubeletResource, namespace: string | undefined, name: string): Readonly<KubeObject> | undefined {
    if (resource === 'nodes') return this.nodes.get(name);
    if (resource !== 'pods')
      return this.shared.get(resource)?.get(resource === 'persistentvolumes' ? undefined : namespace, name);
    for (const cache of this.podCaches.values()) {
      const pod = cache.get(namespace, name);
      if (pod !== undefined) return pod;
    }
    return undefined;
  }

  *pods(): Iterable<Readonly<KubeObject>> {
    for (const cache of this.podCaches.values()) yield* cache.values();
  }

  subscribe(listener: ClusterListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async updatePodStatus(pod: Readonly<Pod>, status: Record<string, unknown>): Promise<void> {
    const { namespace = '', name = '' } = pod.metadata;
    const cache = this.podCaches.get(pod.spec?.nodeName ?? '');
    try {
      // The whole pod, as client-go's UpdateStatus sends it: its resourceVersion makes the write conditional.
      const written = await this.options.rest.request('PUT', `${podPath(namespace, name)}/status`, {
        body: { apiVersion: 'v1', kind: 'Pod', ...pod, status },
      });
      cache?.put(written as KubeObject);
    } catch (err) {
      if (hasCode(err, 409)) {
        const current = await this.options.rest.request('GET', podPath(namespace, name)).catch(() => undefined);
        if (current !== undefined) cache?.put(current as KubeObject);
      }
      throw err;
    }
  }

  async deletePod(namespace: string, name: string, uid: string): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } };
    try {
      await this.options.rest.request('DELETE', podPath(namespace, name), { body });
    } catch (err) {
      if (!hasCode(err, 404, 409)) throw err;
    }
  }
}
