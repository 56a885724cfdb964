/**
 * A cluster of either tier with one `LocalStaticProvisioner` per node (in-process, real HTTP), discovery
 * directories on the simulated nodes' disks (so the simulated kubelet finds a PV's `local.path` where the provisioner
 * published it) and real mounts in them. Everything a test checks is read through the API.
 */
import { mkdirSync } from 'node:fs';
import { ObjectReader, type Cluster, type NodeSpec } from '@kprov/testkit';
import { currentTier } from '@kprov/testkit/vitest';
import {
  CoreV1Api,
  StorageV1Api,
  type CoreV1Event,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StorageClass,
} from '@kubernetes/client-node';
import type { Clock } from '@kprov/provisioner-lib';
import { prometheusSink, renderRegistry } from '@kprov/provisioner-lib/prometheus';
import { Registry } from 'prom-client';
import { vi } from 'vitest';
import { buildConfig, type ProvisionerConfig } from '../src/config/config.js';
import type { ConfigState } from '../src/config/source.js';
import { LocalStaticProvisioner } from '../src/provisioner.js';
import { Mounts } from './mounts.js';

/** The host directory of the tests' discovery directories. */
export const HOST_DIR = '/mnt/disks';
/** Discovery pass interval of the tests. */
export const PERIOD_MS = 100;
export const WAIT = { timeout: 20_000, interval: 50 };

/** One running provisioner. */
export interface Instance {
  node: string;
  provisioner: LocalStaticProvisioner;
  registry: Registry;
  /** Replaces the config in force (as a reload would). */
  setConfig(state: ConfigState): void;
  stop(): Promise<void>;
}

/** A test's environment. */
export interface Env {
  cluster: Cluster;
  read: ObjectReader;
  core: CoreV1Api;
  storage: StorageV1Api;
  mounts: Mounts;
  instances: Instance[];
  /** Where `hostPath` is on `node`'s disk: the provisioner's `mountDir` for it. */
  onNode(node: string, hostPath: string): string;
  /** Starts a provisioner for `node` with `keys` (the ConfigMap's keys, parsed); `extra.clock` replaces the real clock (the loop then waits for it to be advanced). */
  start(
    node: string,
    keys: Record<string, unknown>,
    extra?: { env?: NodeJS.ProcessEnv; jobImage?: string; clock?: Clock; discoveryPeriodMs?: number },
  ): Promise<Instance>;
  /** The metrics text of an instance. */
  metrics(instance: Instance): Promise<string>;
}

/** `storageClassMap` entry of class `name` on `node` of `e`, with `extra` settings. */
export function classEntry(
  e: Env,
  node: string,
  extra: Record<string, unknown> = {},
  hostDir = HOST_DIR,
): Record<string, unknown> {
  return { hostDir, mountDir: e.onNode(node, hostDir), ...extra };
}

/** A StorageClass as upstream's docs have it: no provisioner, WaitForFirstConsumer. */
export function storageClass(name: string, extra: Partial<V1StorageClass> = {}): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

/** Starts an environment on the running test's tier; everything stops after the test. */
export async function startEnv(nodes: NodeSpec[] = [{ name: 'node-1' }]): Promise<Env> {
  const tier = currentTier();
  const cluster = await tier.start({ nodes });
  const kc = cluster.kubeConfig;
  const mounts = new Mounts();
  const instances: Instance[] = [];
  // Last in, first out: the provisioners stop before the mounts go, the mounts before the nodes' disks are removed.
  tier.defer(() => mounts.cleanup());
  tier.defer(async () => {
    for (const i of instances) await i.stop();
  });
  const e: Env = {
    cluster,
    read: new ObjectReader(kc),
    core: kc.makeApiClient(CoreV1Api),
    storage: kc.makeApiClient(StorageV1Api),
    mounts,
    instances,
    onNode: (node, hostPath) => cluster.onNode(node, hostPath),
    async start(node, keys, extra = {}) {
      let state: ConfigState = buildConfig(keys);
      for (const cls of Object.values(state.config.storageClassMap)) mkdirSync(cls.mountDir, { recursive: true });
      const registry = new Registry();
      const provisioner = new LocalStaticProvisioner({
        kubeConfig: kc,
        nodeName: node,
        config: () => state,
        discoveryPeriodMs: extra.discoveryPeriodMs ?? PERIOD_MS,
        mountInfoPath: mounts.mountInfoPath,
        metrics: prometheusSink(registry),
        namespace: 'default',
        ...(extra.env === undefined ? {} : { env: extra.env }),
        ...(extra.jobImage === undefined ? {} : { jobImage: extra.jobImage }),
        ...(extra.clock === undefined ? {} : { clock: extra.clock }),
      });
      const abort = new AbortController();
      let started: () => void = () => undefined;
      const ready = new Promise<void>((resolve) => (started = resolve));
      const running = provisioner.run(abort.signal, started);
      const instance: Instance = {
        node,
        provisioner,
        registry,
        setConfig: (next) => (state = next),
        stop: async () => {
          abort.abort();
          await running.catch(() => undefined);
        },
      };
      instances.push(instance);
      await Promise.race([ready, running]);
      return instance;
    },
    metrics: async (instance) => (await renderRegistry(instance.registry)).body,
  };
  return e;
}

/** The config of `keys`, as the provisioner gets it. */
export function configOf(keys: Record<string, unknown>): ProvisionerConfig {
  return buildConfig(keys).config;
}

/** PVs whose local path is under `hostDir` (default {@link HOST_DIR}), by name. */
export async function localVolumes(e: Env): Promise<Map<string, V1PersistentVolume>> {
  const list = await e.read.volumes();
  return new Map(list.filter((pv) => pv.spec?.local !== undefined).map((pv) => [pv.metadata?.name ?? '', pv]));
}

/** Waits until `names` are exactly the local PVs, returns them. */
export async function waitVolumes(e: Env, names: string[]): Promise<Map<string, V1PersistentVolume>> {
  return vi.waitFor(async () => {
    const now = await localVolumes(e);
    const have = [...now.keys()].sort();
    if (JSON.stringify(have) !== JSON.stringify([...names].sort())) {
      const errors = e.instances.map((i) => `${i.node}: ${i.provisioner.readyError() ?? 'ready'}`).join('; ');
      throw new Error(`PVs are [${have.join(', ')}], want [${[...names].sort().join(', ')}] (${errors})`);
    }
    return now;
  }, WAIT);
}

/** Waits until the provisioner's readiness is `ok` (undefined) or matches `pattern`. */
export async function waitReady(instance: Instance, pattern?: RegExp): Promise<string | undefined> {
  return vi.waitFor(() => {
    const error = instance.provisioner.readyError();
    if (pattern === undefined) {
      if (error !== undefined) throw new Error(`not ready: ${error}`);
      return undefined;
    }
    if (error === undefined || !pattern.test(error))
      throw new Error(`readiness is ${error ?? 'ok'}, want ${String(pattern)}`);
    return error;
  }, WAIT);
}

/** A claim of `className` bound to `pvName` from the start (pre-bound, as an admin would). */
export function boundClaim(
  name: string,
  className: string,
  pvName: string,
  extra: Partial<V1PersistentVolumeClaim['spec']> = {},
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: className,
      volumeName: pvName,
      resources: { requests: { storage: '1Mi' } },
      ...extra,
    },
  };
}

/** Creates a pre-bound claim and waits until the PV is Bound to it. */
export async function bind(
  e: Env,
  claim: string,
  className: string,
  pvName: string,
  extra: Partial<V1PersistentVolumeClaim['spec']> = {},
): Promise<void> {
  await e.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: boundClaim(claim, className, pvName, extra),
  });
  await vi.waitFor(async () => {
    const pv = await e.read.volume(pvName);
    if (pv?.status?.phase !== 'Bound') throw new Error(`PV ${pvName} is ${pv?.status?.phase ?? 'missing'}`);
  }, WAIT);
}

/** Deletes a claim and waits until its PV is Released (or gone). */
export async function release(e: Env, claim: string, pvName: string): Promise<void> {
  await e.core.deleteNamespacedPersistentVolumeClaim({ name: claim, namespace: 'default' });
  await vi.waitFor(async () => {
    const pv = await e.read.volume(pvName);
    if (pv !== undefined && pv.status?.phase === 'Bound') throw new Error(`PV ${pvName} is still Bound`);
  }, WAIT);
}

/** Events about PV `name` (any incarnation), with `reason` if given. */
export async function volumeEvents(e: Env, name: string, reason?: string): Promise<CoreV1Event[]> {
  return e.read.events({ kind: 'PersistentVolume', name, ...(reason === undefined ? {} : { reason }) });
}

/** A pod using claim `claim` that runs `command` with the volume at `/data`. */
export function podWith(name: string, claim: string, command: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: 'busybox',
          command: ['sh', '-c', command],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    },
  };
}

/** The value of a metric series in a Prometheus text exposition (`name{labels} value`), or undefined. */
export function metricValue(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** Waits until `instance` has completed `n` more passes than now (so that whatever a pass would do has been done). */
export async function morePasses(instance: Instance, n = 2): Promise<void> {
  const target = instance.provisioner.completedPasses + n;
  await vi.waitFor(() => {
    if (instance.provisioner.completedPasses < target)
      throw new Error(`${instance.provisioner.completedPasses} passes, waiting for ${target}`);
  }, WAIT);
}
