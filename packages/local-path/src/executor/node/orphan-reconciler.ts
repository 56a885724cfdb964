/**
 * Node mode's counterpart of the helper pod reconciler: finishes what a crash interrupted on this node, from the
 * pending records (`pending.ts`) in this node's base paths, which stand where default mode keeps the setup pod. A
 * pass looks at each record no operation of this process is using:
 *
 * - its PV exists: the volume was saved, the record goes;
 * - its claim still exists (same uid): left alone, the claim's provisioning goes on (and its save drops the record);
 * - its claim and PV are gone: the directory is orphaned and torn down, with the checks of a PV deletion
 *   (the provisioner's `teardownOrphan`), then the record goes. A refused or failed teardown keeps the record
 *   for the next pass.
 *
 * @module
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  describeError,
  isNotFound,
  makeApiClient,
  realClock,
  silentLogger,
  withSignal,
  type Clock,
  type Logger,
} from '@kprov/provisioner-lib';
import { pathsForNode, storageModeOf, type Config } from '../../config/index.js';
import { TeardownRefusedError } from '../../volume/teardown-guard.js';
import type { OrphanTeardown } from '../executor.js';
import { runPasses } from '../passes.js';
import { NodeExecutor } from './executor.js';
import { listPending, type PendingRecord } from './pending.js';

/** Options of {@link NodeOrphanReconciler}. */
export interface NodeOrphanReconcilerOptions {
  readonly kubeConfig: KubeConfig;
  /** A node-mode provisioner: its executor is a {@link NodeExecutor}. */
  readonly provisioner: OrphanTeardown;
  /** This node. */
  readonly nodeName: string;
  /** `--host-root` (`""`: none). */
  readonly hostRoot: string;
  /** The current config: its base paths for this node are searched. */
  readonly config: () => Config | undefined;
  readonly logger?: Logger | undefined;
  /** Time source of the passes. Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** What one pass did, by PV name. */
export interface NodeReconcileReport {
  /** Records of saved volumes dropped. */
  readonly saved: string[];
  /** Orphaned directories torn down. */
  readonly tornDown: string[];
  /** Orphans whose teardown was refused or failed; kept for the next pass. */
  readonly failed: string[];
}

/** Every node-local base path the config gives `node`, over every class. */
export function basePathsOf(config: Config | undefined, node: string): string[] {
  if (config === undefined) return [];
  const paths: string[] = [];
  for (const classConfig of [config.defaultConfig, ...config.storageClassConfigs.values()]) {
    if (classConfig === undefined) continue;
    try {
      if (storageModeOf(classConfig) === 'local') paths.push(...pathsForNode(classConfig, node).paths);
    } catch {
      // A class that cannot be used, or does not list the node.
    }
  }
  return [...new Set(paths)];
}

/** Tears down the directories of this node's setups whose claim and PV are gone; see the module. */
export class NodeOrphanReconciler {
  private readonly core: CoreV1Api;
  private readonly logger: Logger;
  /** Records whose refused teardown was reported already. */
  private readonly reported = new Set<string>();

  constructor(private readonly options: NodeOrphanReconcilerOptions) {
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.logger = (options.logger ?? silentLogger).child({ component: 'reconciler' });
  }

  /** Runs a pass at once, then one every `intervalMs`, until `signal` aborts. Errors of a pass are logged. */
  run(intervalMs: number, signal: AbortSignal): Promise<void> {
    return runPasses(
      (s) => this.reconcile(s),
      intervalMs,
      signal,
      this.logger,
      'Orphan reconcile failed; retrying at the next pass',
      this.options.clock ?? realClock,
    );
  }

  /** One pass over the pending records of this node (see the module). */
  async reconcile(signal: AbortSignal): Promise<NodeReconcileReport> {
    const { provisioner, hostRoot, nodeName } = this.options;
    const executor = provisioner.executor;
    if (!(executor instanceof NodeExecutor))
      throw new Error('NodeOrphanReconciler: the provisioner is not in node mode');
    const report: NodeReconcileReport = { saved: [], tornDown: [], failed: [] };
    const records = await listPending(hostRoot, basePathsOf(this.options.config(), nodeName));
    for (const record of records) {
      if (record.node !== nodeName || executor.isBusy(record.pvName)) continue;
      if (await this.volumeExists(record.pvName, signal)) {
        await executor.forget(record.pvName, record.basePath);
        report.saved.push(record.pvName);
        continue;
      }
      if (await this.claimExists(record, signal)) continue;
      await this.tearDown(record, executor, report, signal);
    }
    if (report.saved.length + report.tornDown.length + report.failed.length > 0)
      this.logger.info({ ...report }, 'Reconciled pending volumes');
    return report;
  }

  private async tearDown(
    record: PendingRecord,
    executor: NodeExecutor,
    report: NodeReconcileReport,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await this.options.provisioner.teardownOrphan(record, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      report.failed.push(record.pvName);
      const message = `The directory of an interrupted setup was not removed: ${describeError(err)}`;
      if (err instanceof TeardownRefusedError) {
        if (!this.reported.has(record.pvName)) this.logger.error({ pv: record.pvName }, message);
        this.reported.add(record.pvName);
      } else this.logger.warn({ pv: record.pvName }, message);
      return;
    }
    await executor.forget(record.pvName, record.basePath);
    report.tornDown.push(record.pvName);
  }

  private async volumeExists(name: string, signal: AbortSignal): Promise<boolean> {
    try {
      await this.core.readPersistentVolume({ name }, withSignal(signal));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Whether the record's claim exists with the uid it was set up for. */
  private async claimExists(record: PendingRecord, signal: AbortSignal): Promise<boolean> {
    const { namespace, name, uid } = record.claim;
    try {
      const claim = await this.core.readNamespacedPersistentVolumeClaim({ namespace, name }, withSignal(signal));
      return uid === undefined || claim.metadata?.uid === uid;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
