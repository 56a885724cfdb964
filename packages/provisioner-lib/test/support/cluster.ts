/**
 * What a user of a cluster does and sees, through the API only (as kubectl would): storage classes, claims, volumes,
 * Events, change streams and RBAC. The same on both tiers (`describeTiers`): nothing here reads or writes the
 * testkit's store.
 */
import type { Cluster } from '@kprov/testkit';
import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  StorageV1Api,
  Watch,
  type CoreV1Event,
  type KubeConfig,
  type KubernetesObject,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1ListMeta,
  type V1PolicyRule,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';

/** Generous waits (@kprov/testkit's): the real tier shares two cores with everything else. */
export { WAIT };

/** The API clients of one user. */
export interface Api {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  storage: StorageV1Api;
  rbac: RbacAuthorizationV1Api;
}

/** API clients for a KubeConfig, or for the administrator of a cluster. */
export function apiOf(kubeConfig: KubeConfig | Cluster): Api {
  const kc = 'kubeConfig' in kubeConfig ? kubeConfig.kubeConfig : kubeConfig;
  return {
    kubeConfig: kc,
    core: kc.makeApiClient(CoreV1Api),
    storage: kc.makeApiClient(StorageV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
  };
}

function storageClass(name: string, provisioner: string, extra: Partial<V1StorageClass> = {}): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner,
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

/** Creates a StorageClass (reclaim policy Delete unless `extra` says otherwise). */
export async function createClass(
  api: Api,
  name: string,
  provisioner: string,
  extra: Partial<V1StorageClass> = {},
): Promise<V1StorageClass> {
  return api.storage.createStorageClass({ body: storageClass(name, provisioner, extra) });
}

/** Creates a 1Mi ReadWriteOnce claim of `className` in `default`; returns it as stored (with its UID). */
export async function createClaim(api: Api, name: string, className: string): Promise<V1PersistentVolumeClaim> {
  return api.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Mi' } },
        storageClassName: className,
      },
    },
  });
}

/** Creates claims `<prefix>-0 … <prefix>-(n-1)` of the class in `default`; returns their UIDs. */
export async function createClaims(api: Api, prefix: string, n: number, className: string): Promise<string[]> {
  const uids: string[] = [];
  for (let i = 0; i < n; i++) uids.push((await createClaim(api, `${prefix}-${i}`, className)).metadata?.uid ?? '');
  return uids;
}

/** Deletes claims of `default` by name. */
export async function deleteClaims(api: Api, names: readonly string[]): Promise<void> {
  for (const name of names) await api.core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name });
}

export async function listClaims(api: Api): Promise<V1PersistentVolumeClaim[]> {
  return (await api.core.listNamespacedPersistentVolumeClaim({ namespace: 'default' })).items;
}

/** A PV by name, or undefined when there is none. */
export async function getVolume(api: Api, name: string): Promise<V1PersistentVolume | undefined> {
  try {
    return await api.core.readPersistentVolume({ name });
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return undefined;
    throw err;
  }
}

/** Names of the claims (of those given) that are not Bound yet. */
export async function unbound(api: Api, names: readonly string[]): Promise<string[]> {
  const phase = new Map((await listClaims(api)).map((c) => [c.metadata?.name ?? '', c.status?.phase]));
  return names.filter((n) => phase.get(n) !== 'Bound');
}

/** Waits until the claim is Bound; returns it. */
export async function waitBound(api: Api, name: string): Promise<V1PersistentVolumeClaim> {
  return vi.waitFor(async () => {
    const claim = await api.core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name });
    if (claim.status?.phase !== 'Bound')
      throw new Error(`claim ${name} is ${claim.status?.phase ?? 'without a phase'}`);
    return claim;
  }, WAIT);
}

/** The component kube-controller-manager's PV controller reports its Events as. */
const KUBE_CONTROLLER_MANAGER_PV = 'persistentvolume-controller';

/**
 * The Events about one object (by UID) in `namespace`, by reason: what `kubectl describe` shows, but for
 * kube-controller-manager's on the real tier. Its PV controller reports about claims too (`ExternalProvisioning`),
 * and a claim that reaches it before its class does gets a `ProvisioningFailed` of its own ("storageclass ... not
 * found"), beside the controller's.
 */
export async function eventsAbout(api: Api, namespace: string, uid: string): Promise<Map<string, CoreV1Event>> {
  const items = (await api.core.listNamespacedEvent({ namespace })).items.filter(
    (e) => e.involvedObject.uid === uid && e.source?.component !== KUBE_CONTROLLER_MANAGER_PV,
  );
  const byReason = new Map<string, CoreV1Event>();
  for (const e of items) {
    const reason = e.reason ?? '';
    if (byReason.has(reason))
      throw new Error(
        `two ${reason} Events about ${uid}: ${JSON.stringify([byReason.get(reason)?.message, e.message])}`,
      );
    byReason.set(reason, e);
  }
  return byReason;
}

/** `{count, message}` of each Event about the object, by reason, leaving out other components' reasons. */
export async function eventSummary(
  api: Api,
  namespace: string,
  uid: string,
  reasons: readonly string[],
): Promise<Record<string, { count: number; message: string }>> {
  const out: Record<string, { count: number; message: string }> = {};
  for (const [reason, e] of await eventsAbout(api, namespace, uid)) {
    if (reasons.includes(reason)) out[reason] = { count: e.count ?? 0, message: e.message ?? '' };
  }
  return out;
}

/** The Event reasons the controller records about claims and volumes. */
export const CONTROLLER_REASONS = [
  'Provisioning',
  'ProvisioningSucceeded',
  'ProvisioningFailed',
  'ProvisioningCleanupFailed',
  'VolumeFailedDelete',
];

/** A change as a watch delivers it. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Follows every change of a collection through the API: a list, then a watch from its resourceVersion, resumed
 * from the last resourceVersion seen whenever the connection ends (an idle timeout, the API server going down).
 * When the history to resume from is gone (410 Gone: compacted, or a restarted API server's fresh watch cache) it
 * lists again and reports the difference, as an informer would: changes that cancel out within that gap (an
 * object created and deleted again) are not seen; {@link relists} counts the gaps.
 */
export class ChangeStream<T extends KubernetesObject> {
  /** How many times the stream had to list again after a 410. */
  relists = 0;
  private resourceVersion = '';
  /** resourceVersion of every object present, by namespace/name. */
  private readonly known = new Map<string, string>();
  private stopped = false;
  private live = false;
  private current: AbortController | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly path: string,
    private readonly list: () => Promise<{ metadata?: V1ListMeta; items: T[] }>,
    private readonly onChange: (type: ChangeType, object: T) => void,
  ) {}

  /** Lists the collection at `path` with `list` (reporting what is there as ADDED) and starts watching it. */
  static async start<T extends KubernetesObject>(
    kubeConfig: KubeConfig,
    path: string,
    list: () => Promise<{ metadata?: V1ListMeta; items: T[] }>,
    onChange: (type: ChangeType, object: T) => void,
  ): Promise<ChangeStream<T>> {
    const stream = new ChangeStream<T>(kubeConfig, path, list, onChange);
    await stream.relist();
    stream.relists = 0;
    await stream.connect();
    return stream;
  }

  /** Whether a watch is established now. */
  connected(): boolean {
    return this.live;
  }

  private static key(o: KubernetesObject): string {
    return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  }

  private report(type: ChangeType, object: T): void {
    if (type === 'DELETED') this.known.delete(ChangeStream.key(object));
    else this.known.set(ChangeStream.key(object), object.metadata?.resourceVersion ?? '');
    this.onChange(type, object);
  }

  /** Lists, reporting what differs from what is known. */
  private async relist(): Promise<void> {
    const listed = await this.list();
    const present = new Set<string>();
    for (const item of listed.items) {
      const k = ChangeStream.key(item);
      present.add(k);
      const rv = this.known.get(k);
      if (rv === undefined) this.report('ADDED', item);
      else if (rv !== item.metadata?.resourceVersion) this.report('MODIFIED', item);
    }
    for (const k of [...this.known.keys()].filter((k) => !present.has(k))) {
      const [namespace, name] = k.split('/');
      this.report('DELETED', { metadata: { ...(namespace === '' ? {} : { namespace }), name } } as T);
    }
    this.resourceVersion = listed.metadata?.resourceVersion ?? '';
    this.relists += 1;
  }

  private later(step: () => Promise<void>): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => {
      step().catch(() => this.later(step));
    }, 100);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let expired = false;
    let ended = false;
    const controller = await new Watch(this.kubeConfig).watch(
      this.path,
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true },
      (type: string, object: T & { code?: number }) => {
        if (this.stopped || ended) return;
        if (type === 'ERROR') {
          expired ||= object.code === 410;
          this.current?.abort();
          return;
        }
        this.resourceVersion = object.metadata?.resourceVersion ?? this.resourceVersion;
        if (type !== 'BOOKMARK') this.report(type as ChangeType, object);
      },
      (err: unknown) => {
        ended = true;
        this.live = false;
        expired ||= (err as { statusCode?: number } | null)?.statusCode === 410;
        this.later(expired ? async () => (await this.relist(), await this.connect()) : () => this.connect());
      },
    );
    this.current = controller;
    if (!ended) this.live = true;
  }

  /** Stops watching. */
  stop(): void {
    this.stopped = true;
    this.live = false;
    clearTimeout(this.retry);
    this.current?.abort();
  }
}

/**
 * Every PV the API server stored while it ran: creations per claim UID (the claimRef the provisioner's controller
 * set) and deletions per PV name.
 */
export class VolumeHistory {
  readonly createdByClaim = new Map<string, string[]>();
  readonly deleted = new Map<string, number>();
  private stream: ChangeStream<V1PersistentVolume> | undefined;

  static async start(api: Api): Promise<VolumeHistory> {
    const history = new VolumeHistory();
    history.stream = await ChangeStream.start<V1PersistentVolume>(
      api.kubeConfig,
      '/api/v1/persistentvolumes',
      () => api.core.listPersistentVolume(),
      (type, pv) => {
        const name = pv.metadata?.name ?? '';
        if (type === 'ADDED') {
          const uid = pv.spec?.claimRef?.uid ?? '';
          history.createdByClaim.set(uid, [...(history.createdByClaim.get(uid) ?? []), name]);
        } else if (type === 'DELETED') {
          history.deleted.set(name, (history.deleted.get(name) ?? 0) + 1);
        }
      },
    );
    return history;
  }

  /** Claims that ever had more than one PV created for them. */
  duplicates(): [string, string[]][] {
    return [...this.createdByClaim].filter(([, names]) => names.length > 1);
  }

  /** Whether the history is following the server now (it resumes by itself after the server was away). */
  connected(): boolean {
    return this.stream?.connected() ?? false;
  }

  stop(): void {
    this.stream?.stop();
    this.stream = undefined;
  }
}

/**
 * What a provisioner's controller needs, as a ClusterRole's rules (the Go library's RBAC example): claims, volumes,
 * classes, Events and its Lease. `without` leaves verbs out per resource, to deny them.
 */
export function controllerRules(
  without: Partial<Record<'persistentvolumes' | 'persistentvolumeclaims' | 'events', string[]>> = {},
): V1PolicyRule[] {
  const verbs = (resource: keyof typeof without, all: string[]): string[] =>
    all.filter((v) => !(without[resource] ?? []).includes(v));
  return [
    {
      apiGroups: [''],
      resources: ['persistentvolumes'],
      verbs: verbs('persistentvolumes', ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
    },
    {
      apiGroups: [''],
      resources: ['persistentvolumeclaims'],
      verbs: verbs('persistentvolumeclaims', ['get', 'list', 'watch', 'update', 'patch']),
    },
    { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: verbs('events', ['list', 'watch', 'create', 'update', 'patch']) },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['get', 'watch', 'list', 'create', 'update', 'patch'],
    },
  ];
}

/** Grants `user` the rules through a ClusterRole and ClusterRoleBinding, both named `name`. */
export async function grant(api: Api, name: string, user: string, rules: V1PolicyRule[]): Promise<void> {
  await api.rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await api.rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
}

/** Replaces the rules of ClusterRole `name`. */
export async function setRules(api: Api, name: string, rules: V1PolicyRule[]): Promise<void> {
  const role = await api.rbac.readClusterRole({ name });
  await api.rbac.replaceClusterRole({ name, body: { ...role, rules } });
}

export { settle } from '../../src/testing/settle.js';
