/**
 * The capacity budget of node paths. A path of `nodePathMap` that declares a `capacity` (bytes, or `auto` for its
 * file system's size) takes only the claims that fit: the sum of the sizes of the PVs placed on it, plus those being
 * made, stays within its capacity. The PVs are read from a PV informer, its own or one shared with the program (so the
 * totals are rebuilt from the API after a restart); a volume being made holds a reservation, taken in the same synchronous step as the choice of its path,
 * so that concurrent provisions cannot over-commit a path, and dropped when the attempt fails or its PV appears.
 *
 * Paths without a capacity keep upstream's behaviour: they take any claim.
 *
 * @module
 */
import type { KubeConfig, V1PersistentVolume } from '@kubernetes/client-node';
import {
  describeError,
  informerFor,
  realClock,
  silentLogger,
  stripManagedFields,
  type Clock,
  type Informer,
  type Logger,
  type MetricsSink,
} from '@kprov/provisioner-lib';
import {
  storageModeOf,
  type BasePath,
  type Config,
  type PathCapacity,
  type RandomSource,
  type StorageClassConfig,
} from '../config/index.js';
import { allocationOf, Ledger } from './ledger.js';
import { CapacityMetrics } from './metrics.js';
import { configNodePaths, hasBudgets, nodePaths } from './paths.js';
import {
  checkAnyPathCanHold,
  choosePath,
  type Candidate,
  type PlaceRequest,
  type VolumePlacement,
} from './placement.js';
import type { FileSystemSize } from '../executor/executor.js';
import { measureFileSystem } from '../executor/node/statfs.js';
import { usageOf, type PathUsage } from './usage.js';

/** Measures the file system holding a base path of a node (`auto` capacities). */
export type MeasureFileSystem = (node: string, path: string, signal: AbortSignal) => Promise<FileSystemSize>;

/** How long a measurement of an `auto` path is used before the path is measured again, in ms. */
export const DEFAULT_MEASURE_TTL_MS = 5 * 60_000;

/** Options of {@link CapacityTracker}. */
export interface CapacityTrackerOptions {
  /** How to reach the API server: the tracker's own PV informer. Required unless `volumes` is given. */
  readonly kubeConfig?: KubeConfig | undefined;
  /**
   * A PV informer to share with the program, e.g. the one the `ProvisionController` is given as `volumesInformer`,
   * so that the PVs are watched and cached once. Its owner runs it: the tracker neither starts nor stops it; while
   * {@link CapacityTracker.run} runs, the tracker counts the PVs already cached and follows the informer's changes.
   * Default: the tracker's own, made from `kubeConfig` and run by {@link CapacityTracker.run}.
   */
  readonly volumes?: Informer<V1PersistentVolume> | undefined;
  /** `--provisioner-name`: only PVs it provisioned (`pv.kubernetes.io/provisioned-by`) count. */
  readonly provisionerName: string;
  /** The current config; `undefined` when none was ever loaded. */
  readonly config: () => Config | undefined;
  /**
   * Measures `auto` paths: a helper pod in default mode (`HelperPodStatfs`), `statfs` in-process in node mode.
   * Default: `statfs` in-process at the path itself.
   */
  readonly measure?: MeasureFileSystem | undefined;
  /** Where the path gauges go. Default: discarded. */
  readonly metrics?: MetricsSink | undefined;
  /** Where the PV informer's troubles go. Default: nowhere. */
  readonly logger?: Logger | undefined;
  /** Picks among the paths a claim fits. Default `Math.random`. */
  readonly random?: RandomSource | undefined;
  /** How long a measurement is used, in ms. Default {@link DEFAULT_MEASURE_TTL_MS}. */
  readonly measureTtlMs?: number | undefined;
  /** Time source of the measurements' age. Default the real clock. */
  readonly clock?: Clock | undefined;
}

const key = (node: string, path: string): string => `${node}\u0000${path}`;

/** Keeps the budget of every node path; see the module comment. */
export class CapacityTracker implements VolumePlacement {
  /** The PVs and reservations counted. */
  readonly ledger = new Ledger();
  private readonly informer: Informer<V1PersistentVolume>;
  /** Whether {@link informer} is the tracker's own (run by {@link run}) rather than a shared one. */
  private readonly ownInformer: boolean;
  private readonly measurements = new Map<string, { size: FileSystemSize; at: number }>();
  private readonly measuring = new Map<string, Promise<FileSystemSize>>();
  private readonly metrics: CapacityMetrics;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly measure: MeasureFileSystem;

  constructor(private readonly options: CapacityTrackerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? realClock;
    this.measure = options.measure ?? ((_node, path) => measureFileSystem('', path));
    this.metrics = new CapacityMetrics(options.metrics);
    if (options.volumes !== undefined) {
      this.informer = options.volumes;
      this.ownInformer = false;
    } else {
      const kubeConfig = options.kubeConfig;
      if (kubeConfig === undefined)
        throw new TypeError('CapacityTracker: kubeConfig is required unless volumes is given');
      this.informer = informerFor(kubeConfig, 'PersistentVolume', {
        logger: this.logger,
        transform: stripManagedFields,
      });
      this.ownInformer = true;
    }
  }

  /**
   * Counts the PVs of the informer until `signal` aborts: those already cached at once, then every change. Runs the
   * tracker's own informer; a shared one (`volumes`) is its owner's to run.
   */
  run(signal: AbortSignal): Promise<void> {
    const count = (pv: V1PersistentVolume): void => {
      const name = pv.metadata?.name ?? '';
      const allocation = allocationOf(pv, this.options.provisionerName);
      if (allocation === undefined) this.ledger.remove(name);
      else this.ledger.put(name, allocation);
    };
    const put = (pv: V1PersistentVolume): void => {
      count(pv);
      this.refreshMetrics();
    };
    const remove = this.informer.addEventHandler({
      add: put,
      // A resync (the same object again) changes no allocation.
      update: (old, pv) => {
        if (old !== pv) put(pv);
      },
      delete: (pv) => {
        this.ledger.remove(pv.metadata?.name ?? '');
        this.refreshMetrics();
      },
    });
    // A shared informer may have listed already: its cache is counted as the adds it will not repeat.
    const cached = this.informer.store.list();
    for (const pv of cached) count(pv);
    if (cached.length > 0) this.refreshMetrics();
    const stopped = this.ownInformer
      ? this.informer.run(signal)
      : new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          else signal.addEventListener('abort', () => resolve(), { once: true });
        });
    return stopped.finally(remove);
  }

  /** A PV as last read from the API. */
  volume(name: string): V1PersistentVolume | undefined {
    return this.informer.store.get(name);
  }

  /** Resolves once every PV was read (the budgets are complete). */
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.informer.waitForSync(signal);
  }

  /**
   * The base path for a claim on its selected node, among the paths where it fits, with its reservation taken; or
   * `undefined` when no budget applies (no selected node, a shared class, or no capacity declared on the node's
   * paths), leaving the choice to upstream's rules.
   *
   * @throws ProvisioningError with state Reschedule when the claim fits on none of the node's paths;
   *   InfeasibleError when it is larger than every path of the class.
   */
  async place(request: PlaceRequest, signal: AbortSignal): Promise<BasePath | undefined> {
    const { classConfig, nodeName } = request;
    if (nodeName === '' || !hasBudgets(classConfig) || storageModeOf(classConfig) !== 'local') return undefined;
    const all = nodePaths(classConfig, nodeName);
    if (all === undefined) return undefined;
    const wanted = request.nodePath ?? '';
    const paths = wanted === '' ? all : all.filter((p) => p.path === wanted);
    if (paths.length === 0 || paths.every((p) => p.capacity === undefined)) return undefined;
    checkAnyPathCanHold(largestCapacity(classConfig), request.requestBytes, request);
    await this.waitForSync(signal);
    const capacities = await Promise.all(paths.map((p) => this.capacityBytes(nodeName, p.path, p.capacity, signal)));
    // From here to the reservation nothing awaits: no other provision can take the same space in between.
    const candidates: Candidate[] = paths.map((p, i) => {
      const { bytes, volumes } = this.ledger.allocated(nodeName, p.path);
      return { path: p.path, capacity: capacities[i], allocated: bytes, volumes };
    });
    const path = choosePath(
      candidates,
      request.requestBytes,
      { node: nodeName, claim: request.claim },
      this.options.random,
    );
    this.ledger.reserve(request.pvName, {
      node: nodeName,
      path: `${path}/${request.pvName}`,
      bytes: request.requestBytes,
    });
    this.refreshMetrics();
    return { mode: 'local', path, fromDefault: !classConfig.nodePathMap.has(nodeName) };
  }

  /** Drops the reservation of a volume (its provisioning failed, or its volume is deleted). */
  release(pvName: string): void {
    if (this.ledger.get(pvName) === undefined) return;
    this.ledger.release(pvName);
    this.refreshMetrics();
  }

  /**
   * The capacity in bytes of a base path of a node: the declared number, the measured size for `auto` (measured
   * again after {@link DEFAULT_MEASURE_TTL_MS}; a failed measurement is an error), `undefined` for none.
   */
  async capacityBytes(
    node: string,
    path: string,
    declared: PathCapacity | undefined,
    signal: AbortSignal,
  ): Promise<bigint | undefined> {
    if (declared !== 'auto') return declared;
    return (await this.measured(node, path, signal)).size;
  }

  private async measured(node: string, path: string, signal: AbortSignal): Promise<FileSystemSize> {
    const k = key(node, path);
    const last = this.measurements.get(k);
    const ttl = this.options.measureTtlMs ?? DEFAULT_MEASURE_TTL_MS;
    if (last !== undefined && this.clock.now() - last.at < ttl) return last.size;
    let running = this.measuring.get(k);
    if (running === undefined) {
      running = this.measure(node, path, signal).then(
        (size) => {
          this.measurements.set(k, { size, at: this.clock.now() });
          this.measuring.delete(k);
          this.refreshMetrics();
          return size;
        },
        (err: unknown) => {
          this.measuring.delete(k);
          throw new Error(
            `could not measure the file system of ${path} on node ${node} (capacity auto): ${describeError(err)}`,
            {
              cause: err,
            },
          );
        },
      );
      this.measuring.set(k, running);
    }
    return running;
  }

  /** The usage of every node path of the config (listed nodes, and nodes holding volumes for the default entry). */
  usage(): PathUsage[] {
    const config = this.options.config();
    if (config === undefined) return [];
    const nodes = new Set(this.ledger.entries().map(([, a]) => a.node));
    for (const k of this.measurements.keys()) nodes.add(k.split('\u0000')[0]!);
    return usageOf(
      configNodePaths(config, nodes),
      this.ledger,
      (node, path) => this.measurements.get(key(node, path))?.size,
    );
  }

  private refreshMetrics(): void {
    try {
      this.metrics.update(this.usage());
    } catch (err) {
      this.logger.debug({ err: describeError(err) }, 'Could not update the capacity metrics');
    }
  }
}

/**
 * The largest capacity among the paths of a class, when every path declares a number of bytes; `undefined` when a
 * path has no capacity or `auto` (its size is not known for every node).
 */
function largestCapacity(classConfig: StorageClassConfig): bigint | undefined {
  let largest = 0n;
  for (const [entry, paths] of classConfig.nodePathMap) {
    for (const path of paths) {
      const c = classConfig.capacities?.get(entry)?.get(path);
      if (c === undefined || c === 'auto') return undefined;
      if (c > largest) largest = c;
    }
  }
  return largest;
}
