import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor, writeKubeconfig } from './kubeconfig.js';
import { ApiServer, type ApiServerOptions } from './server/server.js';
import type { FaultInjector } from './server/faults.js';
import { ObjectStore, type StoreOptions } from './store/store.js';
import { startPvBinder, type PvBinderOptions } from './sim/binder.js';
import { startScheduler, type SchedulerOptions } from './sim/scheduler.js';
import { startStoreKubelet, type KubeletHandle } from './sim/kubelet/kubelet.js';
import { startGarbageCollector } from './sim/garbage-collector.js';
import { startJobController, type JobControllerOptions } from './sim/job-controller.js';
import { registerNode } from './sim/nodes.js';

/** A simulated node. */
export interface NodeSpec {
  /** Node name. */
  name: string;
  /** Directory on local disk that stands for the node's filesystem root. Default: a new temporary directory. */
  root?: string;
  /** Extra node labels (on top of `kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`). */
  labels?: Record<string, string>;
  /** Whether the node reports Ready. Default true. */
  ready?: boolean;
}

/** Options of {@link startApiServer}. */
export interface TestkitOptions {
  /** Port on 127.0.0.1; 0 picks a free one. Default 0. */
  port?: number;
  /** Simulated nodes. Default one node, `node-1`, with a temporary root. Pass `[]` for none. */
  nodes?: readonly NodeSpec[];
  /** PV binder (kube-controller-manager's PV controller). Default on. */
  binder?: boolean | PvBinderOptions;
  /** Scheduler for pods and WaitForFirstConsumer claims. Default on. */
  scheduler?: boolean | SchedulerOptions;
  /** Kubelet for the simulated nodes: runs pods as local processes. Default on. */
  kubelet?: boolean;
  /** Job controller: runs `batch/v1` Jobs' pods and reports their status. Default on. */
  jobs?: boolean | JobControllerOptions;
  /**
   * Garbage collector: deletes objects whose owners are gone and carries out Foreground and Orphan deletions (without
   * it, an object deleted with either keeps its finalizer). Default on.
   */
  garbageCollector?: boolean;
  /** Storage options (history window, initial namespaces). */
  storage?: StoreOptions;
  /** HTTP options (bookmark interval, default watch timeout). */
  http?: Omit<ApiServerOptions, 'port' | 'logs'>;
}

/** A running testkit: API server, store and simulations. */
export interface Testkit {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** A client-node KubeConfig for the server (namespace `default`). */
  readonly kubeConfig: KubeConfig;
  /** Writes a kubeconfig file for kubectl and other clients; returns its path. */
  writeKubeconfig(path: string): Promise<string>;
  /** Direct access to the stored objects, for assertions and setup without HTTP. */
  readonly store: ObjectStore;
  /** Fault injection for requests (errors, latency). */
  readonly faults: FaultInjector;
  /** The HTTP server: `restart()`, `dropWatches()`, `expireWatches()`, `requestCounts()`. */
  readonly server: ApiServer;
  /** The simulated nodes with their root directories. */
  readonly nodes: readonly { name: string; root: string }[];
  /** The kubelet simulation, when on (pod logs, processes). */
  readonly kubelet: KubeletHandle | undefined;
  /** Stops the simulations and the server, and removes temporary node roots. */
  stop(): Promise<void>;
}

/** Starts an in-process Kubernetes API server on 127.0.0.1 with the simulated control loops. */
export async function startApiServer(options: TestkitOptions = {}): Promise<Testkit> {
  const binderOn = options.binder !== false;
  const protection = binderOn && !(typeof options.binder === 'object' && options.binder.protection === false);
  // The admission side of storage-object-in-use protection goes with the controller that removes the finalizers.
  const store = new ObjectStore({ storageProtection: protection, ...options.storage });
  const created: string[] = [];
  const nodes: { name: string; root: string }[] = [];
  for (const spec of options.nodes ?? [{ name: 'node-1' }]) {
    let root = spec.root;
    if (root === undefined) {
      root = await mkdtemp(join(tmpdir(), `kprov-${spec.name}-`));
      created.push(root);
    }
    registerNode(store, {
      name: spec.name,
      ...(spec.labels ? { labels: spec.labels } : {}),
      ...(spec.ready === undefined ? {} : { ready: spec.ready }),
    });
    nodes.push({ name: spec.name, root });
  }
  const stoppers: { stop(): Promise<void> }[] = [];
  if (options.binder !== false)
    stoppers.push(startPvBinder(store, options.binder === true || options.binder === undefined ? {} : options.binder));
  if (options.scheduler !== false) {
    stoppers.push(
      startScheduler(store, options.scheduler === true || options.scheduler === undefined ? {} : options.scheduler),
    );
  }
  if (options.jobs !== false)
    stoppers.push(startJobController(store, options.jobs === true || options.jobs === undefined ? {} : options.jobs));
  if (options.garbageCollector !== false) stoppers.push(startGarbageCollector(store));
  const kubelet = options.kubelet === false ? undefined : startStoreKubelet(store, { nodes });
  if (kubelet !== undefined) stoppers.push(kubelet);
  const server = new ApiServer(store, {
    ...options.http,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(kubelet === undefined ? {} : { logs: kubelet }),
  });
  await server.listen();
  const url = server.url;
  return {
    url,
    kubeConfig: kubeConfigFor(url),
    writeKubeconfig: (path) => writeKubeconfig(url, path),
    store,
    faults: server.faults,
    server,
    nodes,
    kubelet,
    async stop() {
      for (const s of stoppers.reverse()) await s.stop();
      await server.close();
      for (const dir of created) await rm(dir, { recursive: true, force: true });
    },
  };
}
