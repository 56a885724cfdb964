/**
 * A cluster of either tier without kubelets, whose Nodes are API objects the tests create and delete, local PVs
 * pinned to them as local-volume-provisioner makes them, claims bound to those, and the node-cleanup controller
 * in-process (real HTTP) on a fake clock. Everything a test checks is read through the API.
 */
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { currentTier } from '@kprov/testkit/vitest';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { prometheusSink, renderRegistry } from '@kprov/provisioner-lib/prometheus';
import {
  CoreV1Api,
  type CoreV1Event,
  type V1NodeSelectorTerm,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { vi } from 'vitest';
import { HOSTNAME_LABEL, PROVISIONED_BY_ANNOTATION } from '../../src/discovery/volume.js';
import type { CleanupOutcome } from '../../src/node-cleanup/controller.js';
import { NodeCleanup, type NodeCleanupOptions } from '../../src/node-cleanup/node-cleanup.js';

/** Condition waits: generous, the machine is busy (the real tier binds claims every 2 s). */
export const WAIT = { timeout: 30_000, interval: 50 };
/** The delay the tests run with (the default), on the fake clock. */
export const DELAY_MS = 60_000;
/** The deleter's interval the tests run with (the default), on the fake clock. */
export const INTERVAL_MS = 10_000;
/** The opted-in StorageClass. */
export const FAST = 'fast-disks';
/** A StorageClass that is not opted in. */
export const OTHER = 'other-disks';

/** A test's cluster: no kubelet, Nodes made by the test. */
export interface Env {
  cluster: Cluster;
  core: CoreV1Api;
  read: ObjectReader;
}

/** Starts a cluster without nodes on the running test's tier. */
export async function startEnv(): Promise<Env> {
  const cluster = await currentTier().start({ nodes: [] });
  return {
    cluster,
    core: cluster.kubeConfig.makeApiClient(CoreV1Api),
    read: new ObjectReader(cluster.kubeConfig),
  };
}

/** Creates Node `name`, its `kubernetes.io/hostname` label `hostname` (default its name), as a kubelet registers it. */
export async function createNode(e: Env, name: string, hostname = name): Promise<void> {
  await e.core.createNode({
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { [HOSTNAME_LABEL]: hostname } } },
  });
}

/** Deletes Node `name` and waits until it is gone. */
export async function deleteNode(e: Env, name: string): Promise<void> {
  await e.core.deleteNode({ name });
  await vi.waitFor(async () => {
    const nodes = await e.core.listNode();
    if (nodes.items.some((n) => n.metadata?.name === name)) throw new Error(`Node ${name} is still there`);
  }, WAIT);
}

/** The node affinity term local-volume-provisioner gives a PV of node `hostname`. */
export function hostnameTerm(hostname: string): V1NodeSelectorTerm {
  return { matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [hostname] }] };
}

/** Creates a local PV of `className` as local-volume-provisioner makes them, pinned to `hostname` (or `terms`). */
export async function createVolume(
  e: Env,
  name: string,
  className: string,
  hostname: string,
  extra: { policy?: 'Delete' | 'Retain'; terms?: V1NodeSelectorTerm[] } = {},
): Promise<void> {
  const body: V1PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      labels: { [HOSTNAME_LABEL]: hostname },
      annotations: { [PROVISIONED_BY_ANNOTATION]: `local-volume-provisioner-${hostname}` },
    },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: extra.policy ?? 'Delete',
      storageClassName: className,
      volumeMode: 'Filesystem',
      local: { path: `/mnt/fast-disks/${name}` },
      nodeAffinity: { required: { nodeSelectorTerms: extra.terms ?? [hostnameTerm(hostname)] } },
    },
  };
  await e.core.createPersistentVolume({ body });
  await vi.waitFor(async () => {
    const pv = await e.read.volume(name);
    if (pv?.status?.phase !== 'Available') throw new Error(`PV ${name} is ${pv?.status?.phase ?? 'missing'}`);
  }, WAIT);
}

/** Creates claim `name` pre-bound to PV `pvName` and waits until both are Bound; returns the claim. */
export async function bindClaim(
  e: Env,
  name: string,
  className: string,
  pvName: string,
): Promise<V1PersistentVolumeClaim> {
  await e.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: className,
        volumeName: pvName,
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
  return vi.waitFor(async () => {
    const [pv, claim] = await Promise.all([e.read.volume(pvName), e.read.claim(name)]);
    if (pv?.status?.phase !== 'Bound' || claim?.status?.phase !== 'Bound')
      throw new Error(
        `PV ${pvName} is ${pv?.status?.phase ?? 'missing'}, claim ${name} ${claim?.status?.phase ?? 'missing'}`,
      );
    return claim;
  }, WAIT);
}

/** A PV and a claim bound to it. */
export async function boundVolume(
  e: Env,
  pvName: string,
  claimName: string,
  className: string,
  hostname: string,
  extra: { policy?: 'Delete' | 'Retain'; terms?: V1NodeSelectorTerm[] } = {},
): Promise<V1PersistentVolumeClaim> {
  await createVolume(e, pvName, className, hostname, extra);
  return bindClaim(e, claimName, className, pvName);
}

/** The `ReferencedNodeDeleted` Events about claim `name`. */
export async function nodeDeletedEvents(e: Env, name: string): Promise<CoreV1Event[]> {
  return e.read.events({ kind: 'PersistentVolumeClaim', name, reason: 'ReferencedNodeDeleted' });
}

/** Waits for one `ReferencedNodeDeleted` Event about claim `name` (the PV is then queued) and returns it. */
export async function waitNodeDeletedEvent(e: Env, name: string): Promise<CoreV1Event> {
  return vi.waitFor(async () => {
    const events = await nodeDeletedEvents(e, name);
    if (events.length !== 1) throw new Error(`${events.length} ReferencedNodeDeleted events about claim ${name}`);
    return events[0]!;
  }, WAIT);
}

/** Waits until claim `name` is gone. */
export async function waitClaimGone(e: Env, name: string): Promise<void> {
  await vi.waitFor(async () => {
    if ((await e.read.claim(name)) !== undefined) throw new Error(`claim ${name} is still there`);
  }, WAIT);
}

/** The node-cleanup controller of a test, on a fake clock. */
export interface Controller {
  nodeCleanup: NodeCleanup;
  clock: FakeClock;
  /** Resolves once the caches have synced and the controller and the deleter run. */
  started: Promise<void>;
  /** How the worker left each PV, in order. */
  outcomes: Map<string, CleanupOutcome[]>;
  /** The fake clock's time at each of those. */
  syncedAt: Map<string, number[]>;
  /** The metrics text. */
  metrics(): Promise<string>;
  /** Waits until the worker is done with PV `name` `count` times in all, and returns its last outcome. */
  outcome(name: string, count?: number): Promise<CleanupOutcome>;
  /** Waits until `condition` holds of the controller's caches. */
  cached(condition: () => boolean): Promise<void>;
  /** Moves the fake clock on by the deleter's interval until it has made `n` more passes. */
  passes(n?: number): Promise<void>;
  /** Moves the fake clock on by the deleter's interval until PV `name` is gone. */
  waitVolumeGone(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the controller for `classes` (default the opted-in class) and waits until it runs (unless `waitStarted` is
 * false); it stops after the test.
 */
export async function startController(
  e: Env,
  classes: readonly string[] = [FAST],
  extra: Partial<NodeCleanupOptions> = {},
  { waitStarted = true }: { waitStarted?: boolean } = {},
): Promise<Controller> {
  const clock = new FakeClock();
  const registry = new Registry();
  const outcomes = new Map<string, CleanupOutcome[]>();
  const syncedAt = new Map<string, number[]>();
  const nodeCleanup = new NodeCleanup({
    kubeConfig: e.cluster.kubeConfig,
    storageClassNames: classes,
    pvcDeletionDelayMs: DELAY_MS,
    staleVolumeDiscoveryIntervalMs: INTERVAL_MS,
    metrics: prometheusSink(registry),
    clock,
    onSynced: (pv, outcome) => {
      outcomes.set(pv, [...(outcomes.get(pv) ?? []), outcome]);
      syncedAt.set(pv, [...(syncedAt.get(pv) ?? []), clock.now()]);
    },
    ...extra,
  });
  const abort = new AbortController();
  let onStarted: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onStarted = resolve));
  const running = nodeCleanup.run(abort.signal, () => onStarted());
  const stop = async (): Promise<void> => {
    abort.abort();
    await running;
  };
  currentTier().defer(stop);
  const started = Promise.race([ready, running]);
  if (waitStarted) await started;
  return {
    nodeCleanup,
    clock,
    started,
    outcomes,
    syncedAt,
    metrics: async () => (await renderRegistry(registry)).body,
    outcome: (name, count = 1) =>
      vi.waitFor(() => {
        const list = outcomes.get(name) ?? [];
        if (list.length < count) throw new Error(`the worker has been done with PV ${name} ${list.length} times`);
        return list[count - 1]!;
      }, WAIT),
    cached: (condition) =>
      vi.waitFor(() => {
        if (!condition()) throw new Error('the caches have not caught up yet');
      }, WAIT),
    async passes(n = 2) {
      const target = nodeCleanup.deleter.completedPasses + n;
      await vi.waitFor(() => {
        if (nodeCleanup.deleter.completedPasses >= target) return;
        clock.advance(INTERVAL_MS);
        throw new Error(`${nodeCleanup.deleter.completedPasses} deleter passes, waiting for ${target}`);
      }, WAIT);
    },
    async waitVolumeGone(name) {
      await vi.waitFor(async () => {
        if ((await e.read.volume(name)) === undefined) return;
        clock.advance(INTERVAL_MS);
        throw new Error(`PV ${name} is still there`);
      }, WAIT);
    },
    stop,
  };
}

/** The value of a metric series in a Prometheus text exposition (`name{labels} value`), or undefined. */
export function metricValue(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}
