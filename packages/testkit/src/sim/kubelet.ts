/**
 * A kubelet for one or more simulated nodes, each with a root directory on local disk that stands for the node's
 * filesystem. Pods bound to these nodes run their containers as **local child processes, unsandboxed**: the image
 * is ignored and `command` + `args` run on this machine (so `sh`, `mkdir`, ... must exist here), init containers
 * in order, then the regular containers, restarted per `restartPolicy` with a short exponential backoff. Status is
 * reported like the kubelet's: Pending → Running → Succeeded/Failed, container states with exit codes and
 * reasons, conditions, host and pod IP (127.0.0.1), start time. Deleting a pod kills its process groups.
 *
 * Volumes (see `kubelet/volumes.ts`): `hostPath` `P` is `<root>/P`; `persistentVolumeClaim` follows the bound PV
 * to its `hostPath.path` or `local.path` under the same root; `emptyDir`, `configMap` and `secret` (files per
 * key, `items`, `defaultMode`/`mode`, secret values decoded), `downwardAPI` and `projected` (configMap, secret,
 * downwardAPI and serviceAccountToken sources) live in the pod's directory under `<root>/var/lib/kubelet/pods/<uid>/`.
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
import { badRequest } from '../api/status.js';
import type { ObjectStore } from '../store/store.js';
import { PodWorker, type WorkerContext } from './kubelet/worker.js';
import { registerNode } from './nodes.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from './queue.js';
import { view, viewOpt, type Node, type Pod } from './types.js';

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

/** Options of {@link startKubelet}. */
export interface KubeletOptions extends LoopOptions {
  /** The nodes to run pods for. */
  nodes: readonly KubeletNode[];
  /** Register every node that does not exist yet (Ready, with `registerNode`'s defaults). Default true. */
  registerNodes?: boolean;
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

/** The handle {@link startKubelet} returns (alias of {@link KubeletHandle}). */
export type Kubelet = KubeletHandle;

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

const WATCHED_FOR_SETUP = new Set(['persistentvolumeclaims', 'persistentvolumes', 'configmaps', 'secrets']);

/** Starts the simulated kubelet; see the module comment. */
export function startKubelet(store: ObjectStore, options: KubeletOptions): KubeletHandle {
  const nodes = new Map(options.nodes.map((n) => [n.name, n]));
  if (options.registerNodes ?? true) {
    for (const n of options.nodes) if (store.get('nodes', undefined, n.name) === undefined) registerNode(store, { name: n.name });
  }
  const workers = new Map<string, PodWorker>();
  const retiring = new Set<Promise<void>>();
  const reported = new Map<string, string>();
  const maxGraceMs = options.maxGracePeriodMs ?? 2000;

  const retire = (key: string, worker: PodWorker): void => {
    workers.delete(key);
    reported.delete(key);
    const p = worker
      .terminate(Math.min(worker.gracePeriodMs, maxGraceMs))
      .then(async () => worker.removeDir())
      .catch(() => undefined)
      .finally(() => retiring.delete(p));
    retiring.add(p);
  };

  const reconcile = (key: string): void => {
    if (key === RESYNC_KEY) {
      for (const o of store.peek('pods')) if (nodes.has(view<Pod>(o).spec?.nodeName ?? '')) queue.add(nsKey(o.metadata.namespace, o.metadata.name));
      for (const k of workers.keys()) queue.add(k);
      return;
    }
    const [ns, name] = splitKey(key);
    // The stored object, not a copy: only read here and by the worker, which keeps the version it was started with.
    const pod = viewOpt<Pod>(store.peekObject('pods', ns, name));
    const existing = workers.get(key);
    if (existing !== undefined && (pod === undefined || pod.metadata.uid !== existing.uid)) retire(key, existing);
    if (pod === undefined) return;
    const nodeName = pod.spec?.nodeName ?? '';
    const node = nodes.get(nodeName);
    if (node === undefined) return;
    let worker = workers.get(key);
    if (worker === undefined) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') return;
      const nodeObj = viewOpt<Node>(store.peekObject('nodes', undefined, nodeName));
      const hostIP = nodeObj?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
      const ctx: WorkerContext = {
        store,
        root: node.root,
        hostIP,
        baseEnv: { PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...options.env },
        restartBackoffMs: options.restartBackoffMs ?? 100,
        maxRestartBackoffMs: options.maxRestartBackoffMs ?? 2000,
        maxLogBytes: options.maxLogBytes ?? 1024 * 1024,
        serviceAccountToken: options.serviceAccountToken ?? 'sim-service-account-token',
        notify: () => queue.add(key),
      };
      worker = new PodWorker(ctx, pod);
      workers.set(key, worker);
    }
    if (pod.metadata.deletionTimestamp !== undefined) {
      void worker.terminate(Math.min(worker.gracePeriodMs, maxGraceMs));
    } else {
      // Volume setup runs in the background and calls notify when done, which brings the pod back here.
      worker.requestStart();
      const problem = worker.volumeProblem;
      if (!worker.started && problem !== undefined && reported.get(key) !== problem) {
        reported.set(key, problem);
        options.onEvent?.({ namespace: ns, pod: name, node: nodeName, type: 'Warning', reason: 'FailedMount', message: problem });
      }
    }
    // Until the first setup attempt is over there is nothing new to say (the pod would only flip to Pending).
    if (!worker.reportable) return;
    const next = worker.status(pod);
    if (JSON.stringify(next) === JSON.stringify(pod.status ?? {})) return;
    const { namespace, uid, resourceVersion } = pod.metadata;
    store.update('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid, resourceVersion }, status: next }, { subresource: 'status' });
  };

  const queue = new WorkQueue(reconcile, options);
  const unsubscribe = store.subscribe((c) => {
    if (c.resource === 'pods') {
      const key = nsKey(c.object.metadata.namespace, c.object.metadata.name);
      if (nodes.has(view<Pod>(c.object).spec?.nodeName ?? '') || workers.has(key)) queue.add(key);
    } else if (WATCHED_FOR_SETUP.has(c.resource)) {
      for (const [key, w] of workers) if (!w.started) queue.add(key);
    }
  });
  queue.add(RESYNC_KEY);

  return {
    readLog(namespace, podName, container, opts = {}) {
      const worker = workers.get(nsKey(namespace, podName));
      const pod = viewOpt<Pod>(store.peekObject('pods', namespace, podName));
      if (worker === undefined || pod === undefined || pod.metadata.uid !== worker.uid) return undefined;
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
      const buffer = opts.previous === true ? (record.logs.length > 1 ? record.logs[0] : undefined) : record.logs[record.logs.length - 1];
      if (buffer === undefined) return undefined;
      return tail(buffer.text(), opts.tailLines);
    },
    async stop() {
      unsubscribe();
      await queue.stop();
      await Promise.all([...[...workers.values()].map((w) => w.terminate(0)), ...retiring]);
    },
  };
}

/** The last `n` lines of a log (a trailing newline does not count as a line). */
function tail(text: string, n: number | undefined): string {
  if (n === undefined || n < 0) return text;
  if (n === 0) return '';
  const lines = text.split('\n');
  const trailing = lines[lines.length - 1] === '';
  if (trailing) lines.pop();
  const kept = lines.slice(-n).join('\n');
  return trailing && kept !== '' ? `${kept}\n` : kept;
}
