/**
 * Finishes what a crash interrupted. Every helper pod records its operation, claim, volume, node, path and
 * provisioner (`labels.ts`); the setup pod is kept until the PV is saved. A pass of {@link HelperPodReconciler}
 * looks at the helper pods no operation of this process is using:
 *
 * - a setup pod whose PV exists: its volume is saved, the pod is deleted;
 * - a setup pod whose claim still exists (same uid) and has no PV yet: left alone, the claim's provisioning goes on
 *   (and replaces the pod);
 * - a setup pod whose claim and PV are gone: the directory it made is orphaned. Once the pod has ended (or its
 *   `cmdTimeoutSeconds` passed), the teardown runs, with the checks of a PV deletion, and then the pod is deleted.
 *   Until the teardown succeeded the pod stays, so a crash during this is finished by the next pass;
 * - a teardown pod: deleted (a PV still Released is torn down again by the controller, teardown is idempotent).
 *
 * Only this provisioner's helper pods: one that records another provisioner (another `--provisioner-name` in the
 * same namespace, e.g. one per disk) is left alone, as its operations and config are that provisioner's. A pod that
 * records none was made by an earlier version, which did not record it, and is handled as before.
 *
 * Upstream leaves such directories and Completed pods behind for good.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describeError, withSignal } from '@kprov/provisioner-lib';
import { DEFAULT_CMD_TIMEOUT_SECONDS } from '../../config/index.js';
import type { VolumeRecord } from '../executor.js';
import { OrphanReconciler, orphanState, type OrphanReconcilerOptions } from '../orphans.js';
import { HelperPodExecutor } from './executor.js';
import {
  ANNOTATION_CLAIM,
  ANNOTATION_NODE,
  ANNOTATION_PATH,
  ANNOTATION_STORAGE_CLASS,
  ANNOTATION_VOLUME,
  LABEL_CLAIM_UID,
  LABEL_OPERATION,
} from './labels.js';
import { waitForPod } from './pod-watch.js';

/** Default interval between two passes, in ms. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 5 * 60_000;

/** Options of {@link HelperPodReconciler}; its `provisioner`'s executor is a {@link HelperPodExecutor}. */
export interface HelperPodReconcilerOptions extends OrphanReconcilerOptions {
  /** The provisioner's namespace, where the helper pods run. */
  readonly namespace: string;
  /** The helper pod timeout in seconds (`cmdTimeoutSeconds`), a getter for reloads. Default 120. */
  readonly timeoutSeconds?: (() => number) | undefined;
}

/** What one pass did, by pod name. */
export interface ReconcileReport {
  /** Leftover helper pods deleted. */
  readonly deleted: string[];
  /** Setup pods whose orphaned directory was torn down (then deleted). */
  readonly tornDown: string[];
  /** Setup pods whose teardown was refused or failed; kept for the next pass. */
  readonly failed: string[];
}

function isFinished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Deletes leftover helper pods and tears down the directories of setups whose claim and PV are gone. */
export class HelperPodReconciler extends OrphanReconciler<ReconcileReport> {
  constructor(private readonly options: HelperPodReconcilerOptions) {
    super(options, 'Helper pod reconcile failed; retrying at the next pass');
  }

  private get executor(): HelperPodExecutor {
    const executor = this.options.provisioner.executor;
    if (!(executor instanceof HelperPodExecutor))
      throw new Error('HelperPodReconciler: the provisioner does not run helper pods');
    return executor;
  }

  /** One pass over the helper pods (see the module). */
  async reconcile(signal: AbortSignal): Promise<ReconcileReport> {
    const { namespace } = this.options;
    const executor = this.executor;
    const report: ReconcileReport = { deleted: [], tornDown: [], failed: [] };
    const pods = await this.core.listNamespacedPod({ namespace, labelSelector: LABEL_OPERATION }, withSignal(signal));
    for (const pod of pods.items) {
      const name = pod.metadata?.name ?? '';
      if (executor.runner.isRunning(namespace, name) || pod.metadata?.deletionTimestamp !== undefined) continue;
      // Another provisioner's pod (an unmarked one, from an earlier version, is taken as ours: see the module).
      if (!executor.owns(pod)) continue;
      const annotations = pod.metadata?.annotations ?? {};
      const pvName = annotations[ANNOTATION_VOLUME] ?? '';
      const operation = pod.metadata?.labels?.[LABEL_OPERATION];
      if (operation === 'create') {
        if (pvName === '' || executor.isBusy(pvName)) continue;
        const record = recordOf(pod);
        const state = await orphanState(this.core, pvName, record.claim, signal);
        if (state === 'saved') await this.remove(name, report, signal);
        else if (state === 'orphaned') await this.tearDownOrphan(pod, record, report, signal);
      } else if (operation === 'delete') {
        await this.remove(name, report, signal);
      }
    }
    if (report.deleted.length + report.tornDown.length + report.failed.length > 0) {
      this.logger.info(
        { deleted: report.deleted, tornDown: report.tornDown, failed: report.failed },
        'Reconciled helper pods',
      );
    }
    return report;
  }

  private async remove(name: string, report: ReconcileReport, signal: AbortSignal): Promise<void> {
    await this.executor.runner.remove(this.options.namespace, name, signal);
    this.logger.info({ pod: `${this.options.namespace}/${name}` }, 'Deleted a leftover helper pod');
    report.deleted.push(name);
  }

  /** Waits for a setup pod to end, runs the teardown of its directory, then deletes the pod. */
  private async tearDownOrphan(
    pod: V1Pod,
    record: VolumeRecord,
    report: ReconcileReport,
    signal: AbortSignal,
  ): Promise<void> {
    const { namespace } = this.options;
    const name = pod.metadata?.name ?? '';
    const log = this.logger.child({ pod: `${namespace}/${name}` });
    if (!isFinished(pod)) {
      // A setup still running could make the directory after the teardown removed it: let it end first.
      const timeoutSeconds = this.options.timeoutSeconds?.() ?? DEFAULT_CMD_TIMEOUT_SECONDS;
      log.info({}, 'Waiting for an interrupted setup to end before removing its directory');
      try {
        await waitForPod({
          kubeConfig: this.options.kubeConfig,
          core: this.core,
          namespace,
          name,
          until: isFinished,
          deadline: this.clock.now() + timeoutSeconds * 1000,
          onTimeout: () => new Error(`setup pod ${namespace}/${name} did not end within ${timeoutSeconds} seconds`),
          signal,
          clock: this.clock,
          logger: log,
        });
      } catch (err) {
        if (signal.aborted) throw err;
        log.warn({ err: describeError(err) }, 'The interrupted setup did not end; removing its directory anyway');
      }
    }
    if (!(await this.teardowns.tearDown(record, name, log, signal))) {
      report.failed.push(name);
      return;
    }
    report.tornDown.push(name);
    await this.remove(name, report, signal);
  }
}

/** The volume a setup pod records (its labels and annotations, see `labels.ts`). */
function recordOf(pod: V1Pod): VolumeRecord {
  const annotations = pod.metadata?.annotations ?? {};
  const [namespace = '', name = ''] = (annotations[ANNOTATION_CLAIM] ?? '').split('/');
  return {
    pvName: annotations[ANNOTATION_VOLUME] ?? '',
    claim: { namespace, name, uid: pod.metadata?.labels?.[LABEL_CLAIM_UID] },
    path: annotations[ANNOTATION_PATH] ?? '',
    node: annotations[ANNOTATION_NODE] ?? pod.spec?.nodeName ?? '',
    storageClassName: annotations[ANNOTATION_STORAGE_CLASS] ?? '',
  };
}
