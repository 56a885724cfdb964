/**
 * A cluster of either tier (the testkit, or a real control plane with the simulated kubelet) with upstream's
 * `local-path-config` ConfigMap (or a chosen `config.json`), and a real ProvisionController running
 * {@link LocalPathProvisioner} (leader election off) that a test can stop and start again. Everything a test looks
 * at is read through the API, so the same assertions hold on both tiers.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ObjectReader, recordWatch, type Cluster, type NodeSpec } from '@kprov/testkit';
import { currentTier, WAIT, type TierContext } from '@kprov/testkit/vitest';
import {
  CoreV1Api,
  StorageV1Api,
  type CoreV1Event,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StorageClass,
} from '@kubernetes/client-node';
import {
  EventRecorder,
  ItemExponentialFailureRateLimiter,
  ProvisionController,
  type Clock,
  type MetricsSink,
} from '@kprov/provisioner-lib';
import { VolumeExpander } from '../../src/capacity/expansion.js';
import { HelperPodStatfs } from '../../src/executor/helper-pod/statfs.js';
import { CapacityTracker } from '../../src/capacity/tracker.js';
import { vi } from 'vitest';
import { parseConfig, type RandomSource } from '../../src/config/index.js';
import { loadHelperPodTemplate } from '../../src/executor/helper-pod/template.js';
import { LocalPathProvisioner } from '../../src/provisioner/provisioner.js';
import { HelperPodReconciler } from '../../src/executor/helper-pod/reconciler.js';
import { DEFAULT_TEMPLATE } from '../helper-pod/fixtures.js';

export const NAMESPACE = 'local-path-storage';
export const PROVISIONER_NAME = 'rancher.io/local-path';
export const BASE_PATH = '/opt/local-path-provisioner';
/** The provisioner's (and its helper pods') ServiceAccount in deploy/local-path-storage.yaml. */
export const SERVICE_ACCOUNT = 'local-path-provisioner-service-account';

/** `config.json` of deploy/local-path-storage.yaml, with an optional timeout. */
export function configJson(cmdTimeoutSeconds?: number): string {
  return JSON.stringify(defaultConfig(cmdTimeoutSeconds));
}

/** The object behind {@link configJson}. */
export function defaultConfig(cmdTimeoutSeconds?: number): Record<string, unknown> {
  return {
    nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [BASE_PATH] }],
    ...(cmdTimeoutSeconds === undefined ? {} : { cmdTimeoutSeconds }),
  };
}

/** `setup` of deploy/local-path-storage.yaml: upstream's, refusing a path through a symbolic link. */
export const SETUP_SCRIPT = [
  '#!/bin/sh',
  'set -eu',
  '# Refuse a path through a symbolic link below the base path ($VOL_BASE): a link left in a retained volume would',
  '# send this volume elsewhere.',
  'base="${VOL_BASE:-$(dirname "$VOL_DIR")}"',
  'd="$VOL_DIR"',
  'while [ ! -e "$d" ] && [ ! -L "$d" ]; do d="$(dirname "$d")"; done',
  'want="$(readlink -f "$base")${d#"$base"}"',
  'real="$(readlink -f "$d" || true)"',
  'if [ "$real" != "$want" ]; then',
  '  echo "refusing $VOL_DIR: $d resolves to ${real:-nothing}" >&2',
  '  exit 1',
  'fi',
  'mkdir -m 0777 -p "$VOL_DIR"',
  '',
].join('\n');
/** `teardown` of deploy/local-path-storage.yaml: upstream's, refusing a path through a symbolic link. */
export const TEARDOWN_SCRIPT = [
  '#!/bin/sh',
  'set -eu',
  '# Refuse a path through a symbolic link below the base path ($VOL_BASE): rm -rf would follow it.',
  'base="${VOL_BASE:-$(dirname "$VOL_DIR")}"',
  'if [ -e "$VOL_DIR" ] || [ -L "$VOL_DIR" ]; then',
  '  want="$(readlink -f "$base")${VOL_DIR#"$base"}"',
  '  real="$(readlink -f "$VOL_DIR" || true)"',
  '  if [ "$real" != "$want" ]; then',
  '    echo "refusing $VOL_DIR: it resolves to ${real:-nothing}" >&2',
  '    exit 1',
  '  fi',
  'fi',
  'rm -rf "$VOL_DIR"',
  '',
].join('\n');
/** The helper pod template shipped in deploy/local-path-storage.yaml. */
export const HELPER_POD_YAML = DEFAULT_TEMPLATE;

/** What a test may change. */
export interface Setup {
  nodes?: NodeSpec[];
  /** `setup` of the ConfigMap. Default {@link SETUP_SCRIPT}. */
  setup?: string;
  /** `teardown` of the ConfigMap. Default {@link TEARDOWN_SCRIPT}. */
  teardown?: string;
  /** `config.json` as an object. Default deploy/local-path-storage.yaml's ({@link defaultConfig}). */
  config?: unknown;
  /** Added to `config.json` when given. */
  cmdTimeoutSeconds?: number;
  /** Picks among a node's paths. Default `Math.random`. */
  random?: RandomSource;
  /** A failed claim or volume is retried after this many ms, every time. Default: the controller's 15 s doubling. */
  retryMs?: number;
  /** Interval of the helper pod reconciler, which also runs when the controller starts. Default 60 s. */
  reconcileIntervalMs?: number;
  /** Whether the reconciler runs at all. Default true. */
  reconcile?: boolean;
  /** `helperPod.yaml` of the ConfigMap. Default {@link HELPER_POD_YAML}. */
  helperPodYaml?: string;
  /** Time source of the provisioner's helper pod waits. Default the real clock. */
  clock?: Clock;
  /**
   * Capacity budgets as the program runs them: a tracker given to the provisioner (`auto` paths measured by helper
   * pods), and volume expansion once the controller started. Default off.
   */
  capacity?: { metrics?: MetricsSink };
}

/** A running environment. */
export interface Env {
  cluster: Cluster;
  /** Reads of claims, volumes, pods and Events. */
  read: ObjectReader;
  core: CoreV1Api;
  storage: StorageV1Api;
  /** The controller running now (a new one after {@link Env.startController}). */
  readonly controller: ProvisionController;
  /** `warn(pv, message, reason)` calls of the provisioner. */
  warnings: { pv: string; message: string; reason: string }[];
  /** The reconciler of the controller running now. */
  readonly reconciler: HelperPodReconciler;
  /** Names of every pod ever created in the provisioner's namespace. */
  readonly helperPods: Set<string>;
  /** `ADDED <name>` / `DELETED <name>` for every pod created or removed in the provisioner's namespace, in order. */
  readonly helperPodChanges: string[];
  /** Every pod created in the provisioner's namespace, as created. */
  readonly helperPodsCreated: V1Pod[];
  /** Where a node path is on a simulated node's disk. */
  onNode: (node: string, nodePath: string) => string;
  /** Stops the controller as a shutdown does and waits until it has returned; the API server keeps running. */
  stopController: () => Promise<void>;
  /** Starts a new controller (and provisioner) after {@link Env.stopController}, as a restarted process would. */
  startController: () => void;
  stop: () => Promise<void>;
}

export async function startEnv(tier: TierContext, setup: Setup = {}): Promise<Env> {
  const cluster = await tier.start({ nodes: setup.nodes ?? [{ name: 'node-1' }], namespaces: [NAMESPACE] });
  const kc = cluster.kubeConfig;
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  // The helper pods' account: a real server refuses pods whose ServiceAccount does not exist.
  await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: SERVICE_ACCOUNT } } });
  const helperPodWatch = await recordWatch<V1Pod>(kc, `/api/v1/namespaces/${NAMESPACE}/pods`);
  const configObject = {
    ...((setup.config ?? defaultConfig()) as Record<string, unknown>),
    ...(setup.cmdTimeoutSeconds === undefined ? {} : { cmdTimeoutSeconds: setup.cmdTimeoutSeconds }),
  };
  const configText = JSON.stringify(configObject);
  await core.createNamespacedConfigMap({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'local-path-config', namespace: NAMESPACE },
      data: {
        'config.json': configText,
        setup: setup.setup ?? SETUP_SCRIPT,
        teardown: setup.teardown ?? TEARDOWN_SCRIPT,
        'helperPod.yaml': setup.helperPodYaml ?? HELPER_POD_YAML,
      },
    },
  });
  const config = parseConfig(configText);
  const template = loadHelperPodTemplate(setup.helperPodYaml ?? HELPER_POD_YAML, false);
  const warnings: Env['warnings'] = [];
  const launch = (): {
    controller: ProvisionController;
    reconciler: HelperPodReconciler;
    abort: AbortController;
    running: Promise<void>;
  } => {
    const abort = new AbortController();
    let capacity: CapacityTracker | undefined;
    const background: Promise<unknown>[] = [];
    if (setup.capacity !== undefined) {
      const statfs = new HelperPodStatfs({
        kubeConfig: kc,
        namespace: NAMESPACE,
        helperPodTemplate: () => template,
        serviceAccountName: SERVICE_ACCOUNT,
        configMapName: 'local-path-config',
        provisionerName: PROVISIONER_NAME,
        timeoutSeconds: () => config.cmdTimeoutSeconds,
      });
      capacity = new CapacityTracker({
        kubeConfig: kc,
        provisionerName: PROVISIONER_NAME,
        config: () => config,
        measure: (node, path, signal) => statfs.measure(node, path, signal),
        metrics: setup.capacity.metrics,
        random: setup.random,
      });
      background.push(capacity.run(abort.signal));
    }
    const provisioner = new LocalPathProvisioner({
      capacity,
      kubeConfig: kc,
      namespace: NAMESPACE,
      config: () => config,
      helperPodTemplate: () => template,
      serviceAccountName: SERVICE_ACCOUNT,
      provisionerName: PROVISIONER_NAME,
      pollIntervalMs: 50,
      random: setup.random,
      clock: setup.clock,
      warn: (pv, message, reason) => warnings.push({ pv: pv.metadata?.name ?? '', message, reason }),
    });
    const controller = new ProvisionController({
      kubeConfig: kc,
      provisionerName: PROVISIONER_NAME,
      provisioner,
      leaderElection: false,
      ...(setup.retryMs === undefined
        ? {}
        : { rateLimiter: new ItemExponentialFailureRateLimiter<string>(setup.retryMs, setup.retryMs) }),
    });
    const reconciler = new HelperPodReconciler({
      kubeConfig: kc,
      namespace: NAMESPACE,
      provisioner,
      timeoutSeconds: () => config.cmdTimeoutSeconds,
    });
    controller.on('provisioned', (_claim, pv) => void provisioner.volumeSaved(pv));
    let reconciling: Promise<void> = Promise.resolve();
    if (setup.reconcile !== false) {
      controller.once('started', () => {
        reconciling = reconciler.run(setup.reconcileIntervalMs ?? 60_000, abort.signal);
      });
    }
    if (capacity !== undefined) {
      const events = new EventRecorder({ source: { component: PROVISIONER_NAME }, kubeConfig: kc });
      const expander = new VolumeExpander({
        kubeConfig: kc,
        tracker: capacity,
        config: () => config,
        event: (ref, type, reason, message) => events.event(ref, type, reason, message),
      });
      controller.once('started', () => background.push(expander.run(abort.signal)));
      background.push(
        new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true })).then(
          async () => {
            events.shutDown();
            await events.flush();
          },
        ),
      );
    }
    const running = controller
      .run(abort.signal)
      .finally(() => reconciling)
      .finally(() => Promise.all(background));
    return { controller, reconciler, abort, running };
  };
  let current = launch();
  let stopped = false;
  const stopController = async (): Promise<void> => {
    stopped = true;
    current.abort.abort();
    await current.running.catch(() => undefined);
  };
  const changes = (): string[] =>
    helperPodWatch.names().filter((c) => c.startsWith('ADDED ') || c.startsWith('DELETED '));
  return {
    cluster,
    read: new ObjectReader(kc),
    core,
    storage,
    get controller() {
      return current.controller;
    },
    get reconciler() {
      return current.reconciler;
    },
    warnings,
    get helperPods() {
      return new Set(
        changes()
          .filter((c) => c.startsWith('ADDED '))
          .map((c) => c.slice('ADDED '.length)),
      );
    },
    get helperPodChanges() {
      return changes();
    },
    get helperPodsCreated() {
      return helperPodWatch.events.filter((ev) => ev.type === 'ADDED').map((ev) => ev.object);
    },
    onNode: (node, nodePath) => cluster.onNode(node, nodePath),
    stopController,
    startController: () => {
      if (!stopped) throw new Error('startController: stop the running controller first');
      stopped = false;
      current = launch();
    },
    stop: async () => {
      await stopController();
      helperPodWatch.stop();
    },
  };
}

/** upstream's StorageClass `local-path` (WaitForFirstConsumer, Delete), with optional changes. */
export function storageClass(name = 'local-path', extra: Partial<V1StorageClass> = {}): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: PROVISIONER_NAME,
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Delete',
    ...extra,
  };
}

/** examples/pod's claim: `local-path-pvc`, 128Mi, ReadWriteOnce. */
export function claim(
  name = 'local-path-pvc',
  className = 'local-path',
  extra: Partial<V1PersistentVolumeClaim['spec']> = {},
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: className,
      resources: { requests: { storage: '128Mi' } },
      ...extra,
    },
  };
}

/** A pod writing `local-path-test` into `/data/test` of the claim, then exiting. */
export function volumeTestPod(
  claimName = 'local-path-pvc',
  name = 'volume-test',
  nodeSelector?: Record<string, string>,
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      ...(nodeSelector === undefined ? {} : { nodeSelector }),
      containers: [
        {
          name: 'volume-test',
          image: 'busybox',
          // Loaded on the node tier's nodes, which have no registry to pull from.
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'echo local-path-test > /data/test'],
          volumeMounts: [{ name: 'volv', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'volv', persistentVolumeClaim: { claimName } }],
    },
  };
}

/**
 * How long a test waits for a condition before it fails, and how often it looks (the testkit's: less often on the
 * node tier, where real helper and consumer pods take seconds); a wait ends as soon as its condition holds.
 */
export { WAIT };

/** Anything that reads through the API: an {@link Env}, or main()'s test harness. */
export interface Reads {
  read: ObjectReader;
}

export function getClaim(e: Reads, name: string): Promise<V1PersistentVolumeClaim | undefined> {
  return e.read.claim(name);
}

export function getVolume(e: Reads, name: string): Promise<V1PersistentVolume | undefined> {
  return e.read.volume(name);
}

export function volumes(e: Reads): Promise<V1PersistentVolume[]> {
  return e.read.volumes();
}

export function getPod(e: Reads, name: string, namespace = 'default'): Promise<V1Pod | undefined> {
  return e.read.pod(name, namespace);
}

/** Pods in the provisioner's namespace now (helper pods). */
export function helperPodsNow(e: Reads): Promise<V1Pod[]> {
  return e.read.pods(NAMESPACE);
}

/** The uid of the object an Event would be about, when it exists (claims and pods in `default`). */
async function uidOf(e: Reads, kind: string, name: string): Promise<string | undefined> {
  const obj =
    kind === 'PersistentVolumeClaim'
      ? await e.read.claim(name)
      : kind === 'PersistentVolume'
        ? await e.read.volume(name)
        : kind === 'Pod'
          ? await e.read.pod(name)
          : undefined;
  return obj?.metadata?.uid;
}

/**
 * core/v1 Events about an object; about the one that exists now when it does (a real server's controllers may still
 * write about an object of the same name that an earlier test deleted).
 */
export async function eventsFor(e: Reads, kind: string, name: string, reason?: string): Promise<CoreV1Event[]> {
  const uid = await uidOf(e, kind, name);
  return e.read.events({
    kind,
    name,
    ...(uid === undefined ? {} : { uid }),
    ...(reason === undefined ? {} : { reason }),
  });
}

/** Waits until the claim is Bound and returns its PV name. */
export async function waitBound(e: Reads, claimName = 'local-path-pvc'): Promise<string> {
  return vi.waitFor(async () => {
    const c = await getClaim(e, claimName);
    if (c?.status?.phase !== 'Bound') throw new Error(`claim ${claimName} is ${c?.status?.phase ?? 'missing'}`);
    return c.spec!.volumeName!;
  }, WAIT);
}

/** Waits until the pod Succeeded. */
export async function waitSucceeded(e: Reads, name = 'volume-test'): Promise<void> {
  await vi.waitFor(async () => {
    const phase = (await getPod(e, name))?.status?.phase;
    if (phase !== 'Succeeded') throw new Error(`pod ${name} is ${phase ?? 'missing'}`);
  }, WAIT);
}

/**
 * Per-test environments for a test file whose suites are declared with `describeTiers`: `env(setup)` starts an
 * environment on the running test's tier, stopped after the test; `defer(fn)` runs `fn` after the test; newest
 * first, before the cluster stops.
 */
export function perTest(): { env: (setup?: Setup) => Promise<Env>; defer: (cleanup: () => unknown) => void } {
  return {
    defer: (cleanup) => currentTier().defer(cleanup),
    env: async (setup) => {
      const tier = currentTier();
      const e = await startEnv(tier, setup);
      tier.defer(e.stop);
      return e;
    },
  };
}

/** Waits for the claim's first `ProvisioningFailed` event, checks it is a Warning, and returns its message. */
export async function provisioningFailure(e: Reads, claimName = 'local-path-pvc'): Promise<string> {
  return vi.waitFor(async () => {
    // The provisioner's own (its source is `<provisioner name>_<identity>`): on a real control plane
    // kube-controller-manager records ProvisioningFailed on a claim too, e.g. `Error saving claim: … the object has
    // been modified` when its write raced the provisioner's.
    const [event] = (await eventsFor(e, 'PersistentVolumeClaim', claimName, 'ProvisioningFailed')).filter((ev) =>
      ev.source?.component?.startsWith(`${PROVISIONER_NAME}_`),
    );
    if (event === undefined) throw new Error(`no ProvisioningFailed event for ${claimName} yet`);
    if (event.type !== 'Warning') throw new Error(`ProvisioningFailed event of type ${event.type}`);
    return event.message ?? '';
  }, WAIT);
}

/** Deletes the pod and the claim, then waits until the PV and `dir` (a path on a node's disk) are gone. */
export async function deleteAndWaitCleanedUp(
  e: Env,
  pvName: string,
  dir: string,
  pod = 'volume-test',
  pvc = 'local-path-pvc',
): Promise<void> {
  await e.core.deleteNamespacedPod({ name: pod, namespace: 'default' });
  await e.core.deleteNamespacedPersistentVolumeClaim({ name: pvc, namespace: 'default' });
  await vi.waitFor(async () => {
    if ((await getVolume(e, pvName)) !== undefined) throw new Error(`PV ${pvName} still exists`);
    if (existsSync(dir)) throw new Error(`${dir} still exists`);
  }, WAIT);
}

export { settle } from '@kprov/provisioner-lib/testing';

/**
 * A PV as anyone allowed to create PVs can make it: ours by annotation, Delete, on `node-1`, bound to a claim of
 * `default` that does not exist (or, named after an existing one, whose uid differs: released at once).
 */
export function forgedVolume(name: string, path: string, claimName = 'no-such-claim'): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'local-path',
      hostPath: { path, type: 'DirectoryOrCreate' },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: claimName,
        uid: randomUUID(),
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
          ],
        },
      },
    },
  };
}
