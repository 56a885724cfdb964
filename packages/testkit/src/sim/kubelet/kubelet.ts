/**
 * A kubelet for one or more simulated nodes, each with a root directory on local disk that stands for the node's
 * filesystem. Pods bound to these nodes run their containers as **local child processes, unsandboxed**: the image
 * is ignored and `command` + `args` run on this machine (so `sh`, `mkdir`, ... must exist here), init containers
 * in order, then the regular containers, restarted per `restartPolicy` with a short exponential backoff. Status is
 * reported like the kubelet's: Pending → Running → Succeeded/Failed, container states with exit codes and
 * reasons, conditions, host and pod IP (127.0.0.1), start time. A pod that gets a `deletionTimestamp` has its process
 * groups killed (SIGTERM, SIGKILL after the grace period, capped), its last status written and is then deleted for
 * good (grace period 0, uid precondition), as the kubelet's final delete; a pod deleted at once just has its
 * processes killed.
 *
 * The loop reads and writes the cluster through a {@link KubeletCluster}: the in-process store
 * ({@link startStoreKubelet}) or any API server (a hollow node, `src/hollow-node/`), so the same code serves both.
 *
 * Volumes (see `volumes.ts`): `hostPath` `P` is `<root>/P`; `persistentVolumeClaim` follows the bound PV
 * to its `hostPath.path` or `local.path` under the same root; `emptyDir`, `configMap` and `secret` (files per
 * key, `items`, `defaultMode`/`mode`, secret values decoded), `downwardAPI` and `projected` (configMap, secret,
 * downwardAPI and serviceAccountToken sources) live in the pod's directory under `<root>/var/lib/kubelet/pods/<uid>/`
 * (the `openshift-service-ca.crt` source that OpenShift's kube-apiserver adds to service account volumes may be
 * missing: nothing publishes it outside OpenShift).
 * A volume that cannot be set up yet (claim not bound, object missing, hostPath type check) keeps the pod
 * Pending with its containers waiting in ContainerCreating, and is retried.
 *
 * **Path mapping.** Because the processes see the host filesystem, every occurrence of one of the container's
 * `volumeMounts[].mountPath` is rewritten to the host directory of that mount (plus `subPath`/`subPathExpr`) in
 * the `command`, the `args`, every environment variable value (after `$(VAR)` expansion), the `workingDir`, and the
 * text content of files written out for configMap and secret volumes. A match must start at the beginning of a
 * path (not after `/` or a name character) and end at a path boundary (end, `/`, or a character that cannot be part
 * of a file name such as a space, quote, `:`, `=`, `;`); the longest mount path wins; rewritten text is never
 * rewritten again. Limits: only literal occurrences are mapped: a path assembled at run time (`"/da""ta"`,
 * `$BASE/data` where BASE is not a mapped path), read from another file, from stdin or from the API is not; a
 * mount at `/` is never mapped; absolute paths outside every mount (`/tmp`, `/etc`) are the host's own; binary
 * configMap/secret content is not rewritten; `readOnly`, users, capabilities, resources, probes, ports, image
 * entrypoints (a container without `command` runs its `args` as the command line, as for images without an
 * ENTRYPOINT; with neither it just stays Running until stopped) and network isolation are not simulated.
 */
import { badRequest } from '../../api/status.js';
import type { ObjectStore } from '../../store/store.js';
import { storeCluster, type KubeletCluster } from './cluster.js';
import { lookupLog, tail, type LogLookup } from './logs.js';
import { sameStatus } from './status.js';
import { PodWorker, type WorkerContext } from './pod-worker.js';
import { registerNode } from '../nodes.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from '../queue.js';
import { view, viewOpt, type Node, type Pod } from '../types.js';

/** A node the kubelet runs pods for. */
export interface KubeletNode {
  /** Node name: pods with this `spec.nodeName` run here. */
  name: string;
  /** Directory standing for the node's filesystem (`/` of the node). Must exist or be creatable. */
  root: string;
}

/** Something the kubelet would report as an Event (here only volume setup failures). */
export interface KubeletEvent {
  namespace: string;
  pod: string;
  node: string;
  type: 'Warning';
  reason: 'FailedMount';
  message: string;
}

/** How the kubelet runs pods, whatever cluster it serves. */
export interface PodRunOptions {
  /**
   * Environment every container starts with, before its own variables (and `HOSTNAME`, the pod name, and `HOME`, the
   * pod's sandbox directory), e.g. `KUBERNETES_SERVICE_HOST`/`PORT` pointing at the test API server. `PATH` is this
   * process's unless given here. The rest of this process's environment is not passed on. Default none.
   */
  env?: Record<string, string>;
  /** First restart back-off, in ms; doubles per restart. Default 100. */
  restartBackoffMs?: number;
  /** Cap of the restart back-off, in ms. Default 2000. */
  maxRestartBackoffMs?: number;
  /** Cap of the grace period between SIGTERM and SIGKILL when a pod is deleted, in ms (the pod's own is used if shorter). Default 2000. */
  maxGracePeriodMs?: number;
  /** Output kept per container instance, in bytes (the newest). Default 1 MiB. */
  maxLogBytes?: number;
  /** What a `serviceAccountToken` volume projection contains (e.g. a token the test server accepts). Default `sim-service-account-token`. */
  serviceAccountToken?: string;
  /** Called with volume setup failures (the real kubelet's `FailedMount` events), once per distinct message. */
  onEvent?: (event: KubeletEvent) => void;
}

/** Options of {@link startKubeletLoop}. */
export interface KubeletLoopOptions extends LoopOptions, PodRunOptions {
  /** The nodes to run pods for. */
  nodes: readonly KubeletNode[];
}

/** Options of {@link startStoreKubelet}. */
export interface StoreKubeletOptions extends KubeletLoopOptions {
  /** Register every node that does not exist yet (Ready, with `registerNode`'s defaults). Default true. */
  registerNodes?: boolean;
}

/** Options of {@link KubeletHandle.readLog}, as the `pods/log` subresource takes them. */
export interface ReadLogOptions {
  /** Only the last this many lines. */
  tailLines?: number;
  /** The previous instance of a restarted container. */
  previous?: boolean;
}

/** A running simulated kubelet. */
export interface KubeletHandle extends Stoppable {
  /**
   * A container's combined stdout and stderr, for `pods/log`. `container` may be left out when the pod has one
   * container. `undefined` when the pod is not running here (or is gone) or the container (or, with `previous`,
   * its previous instance) has not started. Throws a 400 `StatusError` like the API server for a missing or wrong
   * container name.
   */
  readLog(namespace: string, pod: string, container?: string, options?: ReadLogOptions): string | undefined;
  /** Stops the loop and SIGKILLs every container process; resolves when they are gone. */
  stop(): Promise<void>;
}

/** The kubelet loop's handle, with the lookup its log endpoint needs. */
export interface KubeletLoop extends KubeletHandle {
  /** The output a kubelet's `/containerLogs/{namespace}/{pod}/{container}` request means, or the kubelet's error for it. */
  findLog(namespace: string, pod: string, container: string, previous: boolean): LogLookup;
}

const WATCHED_FOR_SETUP = new Set(['persistentvolumeclaims', 'persistentvolumes', 'configmaps', 'secrets']);

/** Starts the simulated kubelet on a store: registers its nodes (unless told not to), then runs their pods; see the module comment. */
export function startStoreKubelet(store: ObjectStore, options: StoreKubeletOptions): KubeletLoop {
  if (options.registerNodes ?? true) {
    for (const n of options.nodes)
      if (store.peekObject('nodes', undefined, n.name) === undefined) registerNode(store, { name: n.name });
  }
  return startKubeletLoop(storeCluster(store), options);
}

/** Runs the pods bound to `options.nodes` as local processes and reports their status to `cluster`; see the module comment. */
export function startKubeletLoop(cluster: KubeletCluster, options: KubeletLoopOptions): KubeletLoop {
  const nodes = new Map(options.nodes.map((n) => [n.name, n]));
  const workers = new Map<string, PodWorker>();
  const retiring = new Set<Promise<void>>();
  const reported = new Map<string, string>();
  /** Pods (by key) whose final delete was sent, with their uid: sent once. */
  const deleted = new Map<string, string>();
  const maxGraceMs = options.maxGracePeriodMs ?? 2000;
  /** The pod's grace period, or the shorter one its delete asked for (`--grace-period`), capped. */
  const graceOf = (w: PodWorker, pod?: Pod): number => {
    const asked = pod?.metadata.deletionGracePeriodSeconds;
    // 0 is what a store puts on an object deleted while it has finalizers, not a request for SIGKILL.
    const ms = asked !== undefined && asked > 0 ? Math.min(asked * 1000, w.gracePeriodMs) : w.gracePeriodMs;
    return Math.min(ms, maxGraceMs);
  };

  const retire = (key: string, worker: PodWorker): void => {
    workers.delete(key);
    reported.delete(key);
    const p = worker
      .terminate(graceOf(worker))
      .then(async () => worker.removeDir())
      .catch(() => undefined)
      .finally(() => retiring.delete(p));
    retiring.add(p);
  };

  /** The kubelet's final delete of a pod whose containers are gone; the pod's DELETED change then retires its worker. */
  const finalDelete = async (key: string, pod: Pod): Promise<void> => {
    const { namespace = '', name = '', uid = '' } = pod.metadata;
    if (deleted.get(key) === uid) return;
    await cluster.deletePod(namespace, name, uid);
    deleted.set(key, uid);
  };

  const reconcile = async (key: string): Promise<void> => {
    if (key === RESYNC_KEY) {
      for (const o of cluster.pods())
        if (nodes.has(view<Pod>(o).spec?.nodeName ?? '')) queue.add(nsKey(o.metadata.namespace, o.metadata.name));
      for (const k of workers.keys()) queue.add(k);
      return;
    }
    const [ns, name] = splitKey(key);
    // The held object, not a copy: only read here and by the worker, which keeps the version it was started with.
    const pod = viewOpt<Pod>(cluster.get('pods', ns, name));
    const existing = workers.get(key);
    if (existing !== undefined && (pod === undefined || pod.metadata.uid !== existing.uid)) retire(key, existing);
    if (pod === undefined) {
      deleted.delete(key);
      return;
    }
    const nodeName = pod.spec?.nodeName ?? '';
    const node = nodes.get(nodeName);
    if (node === undefined) return;
    // Its final delete is on its way: there is nothing more to say about it.
    if (deleted.get(key) === pod.metadata.uid) return;
    const deleting = pod.metadata.deletionTimestamp !== undefined;
    let worker = workers.get(key);
    if (worker === undefined) {
      // Nothing runs here for it (finished before, or before this kubelet started): a deleted one can go at once.
      if (deleting) return finalDelete(key, pod);
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') return;
      const nodeObj = viewOpt<Node>(cluster.get('nodes', undefined, nodeName));
      const hostIP = nodeObj?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
      const ctx: WorkerContext = {
        cluster,
        root: node.root,
        hostIP,
        baseEnv: {
          PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          ...options.env,
        },
        restartBackoffMs: options.restartBackoffMs ?? 100,
        maxRestartBackoffMs: options.maxRestartBackoffMs ?? 2000,
        maxLogBytes: options.maxLogBytes ?? 1024 * 1024,
        serviceAccountToken: options.serviceAccountToken ?? 'sim-service-account-token',
        notify: () => queue.add(key),
      };
      worker = new PodWorker(ctx, pod);
      workers.set(key, worker);
    }
    if (deleting) {
      // Once the processes are gone the pod comes back here for its last status and the final delete.
      if (!worker.terminated) void worker.terminate(graceOf(worker, pod)).then(() => queue.add(key));
    } else {
      // Volume setup runs in the background and calls notify when done, which brings the pod back here.
      worker.requestStart();
      const problem = worker.volumeProblem;
      if (!worker.started && problem !== undefined && reported.get(key) !== problem) {
        reported.set(key, problem);
        options.onEvent?.({
          namespace: ns,
          pod: name,
          node: nodeName,
          type: 'Warning',
          reason: 'FailedMount',
          message: problem,
        });
      }
    }
    // Until the first setup attempt is over there is nothing new to say (the pod would only flip to Pending).
    if (worker.reportable) {
      const next = worker.status(pod);
      if (!sameStatus(next, pod.status ?? {})) await cluster.updatePodStatus(pod, next);
    }
    if (deleting && worker.terminated) await finalDelete(key, pod);
  };

  const queue = new WorkQueue(reconcile, options);
  const unsubscribe = cluster.subscribe((resource, object) => {
    if (resource === 'pods') {
      const key = nsKey(object.metadata.namespace, object.metadata.name);
      if (nodes.has(view<Pod>(object).spec?.nodeName ?? '') || workers.has(key)) queue.add(key);
    } else if (WATCHED_FOR_SETUP.has(resource)) {
      for (const [key, w] of workers) if (!w.started) queue.add(key);
    }
  });
  queue.add(RESYNC_KEY);

  /** The worker of a pod that runs here, if the pod is still the one it runs. */
  const workerOf = (namespace: string, podName: string): { worker: PodWorker; pod: Pod } | undefined => {
    const worker = workers.get(nsKey(namespace, podName));
    const pod = viewOpt<Pod>(cluster.get('pods', namespace, podName));
    if (worker === undefined || pod === undefined || pod.metadata.uid !== worker.uid) return undefined;
    return { worker, pod };
  };

  return {
    readLog(namespace, podName, container, opts = {}) {
      const found = workerOf(namespace, podName);
      if (found === undefined) return undefined;
      const { worker, pod } = found;
      const names = (pod.spec?.containers ?? []).map((c) => c.name);
      const initNames = (pod.spec?.initContainers ?? []).map((c) => c.name);
      let name = container ?? '';
      if (name === '') {
        if (names.length !== 1) {
          let msg = `a container name must be specified for pod ${podName}, choose one of: [${names.join(' ')}]`;
          if (initNames.length > 0) msg += ` or one of the init containers: [${initNames.join(' ')}]`;
          throw badRequest(msg);
        }
        name = names[0] ?? '';
      }
      const record = worker.container(name);
      if (record === undefined) throw badRequest(`container ${name} is not valid for pod ${podName}`);
      const log = lookupLog(podName, name, record, opts.previous === true);
      return 'buffer' in log ? tail(log.buffer.text(), opts.tailLines) : undefined;
    },
    findLog(namespace, podName, container, previous) {
      const found = workerOf(namespace, podName);
      if (found === undefined) return { code: 404, message: `pod "${podName}" does not exist` };
      return lookupLog(podName, container, found.worker.container(container), previous);
    },
    async stop() {
      unsubscribe();
      await queue.stop();
      await Promise.all([...[...workers.values()].map((w) => w.terminate(0)), ...retiring]);
    },
  };
}
