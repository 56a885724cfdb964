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
import { pathsForNode, storageModeOf, type Config } from '../../config/index.js';
import { OrphanReconciler, orphanState, type OrphanReconcilerOptions } from '../orphans.js';
import { NodeExecutor } from './executor.js';
import { listPending, type PendingRecord } from './pending.js';

/** Options of {@link NodeOrphanReconciler}; its `provisioner` is a node-mode one (its executor a {@link NodeExecutor}). */
export interface NodeOrphanReconcilerOptions extends OrphanReconcilerOptions {
  /** This node. */
  readonly nodeName: string;
  /** `--host-root` (`""`: none). */
  readonly hostRoot: string;
  /** The current config: its base paths for this node are searched. */
  readonly config: () => Config | undefined;
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
export class NodeOrphanReconciler extends OrphanReconciler<NodeReconcileReport> {
  constructor(private readonly options: NodeOrphanReconcilerOptions) {
    super(options, 'Orphan reconcile failed; retrying at the next pass');
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
      const state = await orphanState(this.core, record.pvName, record.claim, signal);
      if (state === 'saved') {
        await executor.forget(record.pvName, record.basePath);
        report.saved.push(record.pvName);
      } else if (state === 'orphaned') await this.tearDown(record, executor, report, signal);
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
    const log = this.logger.child({ pv: record.pvName });
    if (!(await this.teardowns.tearDown(record, record.pvName, log, signal))) {
      report.failed.push(record.pvName);
      return;
    }
    await executor.forget(record.pvName, record.basePath);
    report.tornDown.push(record.pvName);
  }
}
