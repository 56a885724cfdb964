/**
 * The executor of a provisioner for the whole cluster: each volume directory is made and removed by a helper pod on
 * its node, built from the helper pod template, which runs the ConfigMap's `setup` or `teardown` script behind the
 * path guard (see `build.ts`). The setup pod is kept until the PV is saved: if the process dies in between, it tells
 * the reconciler that a directory was made for the claim.
 *
 * @module
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { describeError, realClock, silentLogger, type Clock, type Logger } from '@kprov/provisioner-lib';
import { DEFAULT_CMD_TIMEOUT_SECONDS, DEFAULT_CONFIGMAP_NAME, type Config } from '../../config/index.js';
import { baseHolding, EVERY_NODE, type VolumeDirectory, type VolumeExecutor, type VolumeSetup } from '../executor.js';
import type { VolumeAction } from '../script.js';
import { UnsavedVolumes } from '../unsaved.js';
import { buildHelperPod } from './build.js';
import { labelsOf, madeByAnotherProvisioner } from './labels.js';
import { HelperPodRunner } from './runner.js';
import { validateHelperPodTemplate } from './template.js';

/** Options of {@link HelperPodExecutor}. */
export interface HelperPodExecutorOptions {
  /** How to reach the API server. */
  readonly kubeConfig: KubeConfig;
  /** The provisioner's namespace: helper pods run here. */
  readonly namespace: string;
  /** The current helper pod template (a getter, for reloads); checked again before each use. */
  readonly helperPodTemplate: () => V1Pod;
  /** `--service-account-name`, set on every helper pod. */
  readonly serviceAccountName: string;
  /**
   * `--provisioner-name`, recorded on every helper pod (`local.path.provisioner/provisioner`): the helper pods of
   * another provisioner in the namespace are left alone ({@link HelperPodExecutor.owns}). Default none: the pods
   * record no provisioner, and those that record one are all another's.
   */
  readonly provisionerName?: string | undefined;
  /** `--configmap-name`, whose `setup` and `teardown` the pods mount. Default {@link DEFAULT_CONFIGMAP_NAME}. */
  readonly configMapName?: string | undefined;
  /** `--allow-unsafe-helper-pod-template`: skip the template checks. Default false. */
  readonly allowUnsafeHelperPodTemplate?: boolean | undefined;
  /** The current config (`setupCommand`, `teardownCommand`, `cmdTimeoutSeconds`). */
  readonly config: () => Config | undefined;
  /** Where the helper pods, their logs and the pods that could not be deleted are logged. Default: nowhere. */
  readonly logger?: Logger | undefined;
  /** Interval between looks at a leftover helper pod being deleted, in ms. Default the runner's. */
  readonly pollIntervalMs?: number | undefined;
  /** Time source of the pods' waits and of the unsaved grace. Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** Makes and removes volume directories with helper pods; see the module. */
export class HelperPodExecutor implements VolumeExecutor {
  readonly scope = EVERY_NODE;
  /** Runs the helper pods; the reconciler asks it which pods are in use. */
  readonly runner: HelperPodRunner;
  private readonly logger: Logger;
  /** PV name → the setup pod kept until the PV is saved. */
  private readonly unsaved: UnsavedVolumes<string>;
  /** PV names whose setup or teardown runs now. */
  private readonly busy = new Set<string>();

  constructor(private readonly options: HelperPodExecutorOptions) {
    this.logger = options.logger ?? silentLogger;
    const clock = options.clock ?? realClock;
    this.unsaved = new UnsavedVolumes(clock);
    this.runner = new HelperPodRunner({
      kubeConfig: options.kubeConfig,
      logger: this.logger,
      pollIntervalMs: options.pollIntervalMs,
      clock,
    });
  }

  async setUp(setup: VolumeSetup, signal: AbortSignal): Promise<void> {
    const pod = this.pod('create', setup);
    await this.run('create', setup.pvName, pod, signal, true);
    this.unsaved.add(setup.pvName, pod.metadata?.name ?? '');
  }

  async tearDown(teardown: VolumeDirectory, signal: AbortSignal): Promise<void> {
    await this.run('delete', teardown.pvName, this.pod('delete', teardown), signal, false);
  }

  /** The setup pod, kept as a record until the PV was saved, is deleted (else the reconciler deletes it). */
  async saved(pvName: string): Promise<void> {
    const pod = this.unsaved.take(pvName);
    if (pod === undefined) return;
    try {
      await this.runner.remove(this.options.namespace, pod);
    } catch (err) {
      this.logger.warn(
        { pv: pvName, err: describeError(err) },
        `unable to delete the helper pod ${pod}; the reconciler will`,
      );
    }
  }

  isBusy(pvName: string): boolean {
    return this.busy.has(pvName) || this.unsaved.waiting(pvName);
  }

  /**
   * Whether a helper pod is this provisioner's to finish or delete: not one that records another provisioner. A pod
   * that records none (made by an earlier version) is, as before.
   */
  owns(pod: V1Pod): boolean {
    return !madeByAnotherProvisioner(pod, this.options.provisionerName);
  }

  /** The helper pod of `action` for the directory, from the current template (checked again). */
  private pod(action: VolumeAction, directory: VolumeDirectory): V1Pod {
    const template = this.options.helperPodTemplate();
    validateHelperPodTemplate(template, this.options.allowUnsafeHelperPodTemplate ?? false);
    const config = this.options.config();
    return buildHelperPod({
      ...directory,
      action,
      template,
      namespace: this.options.namespace,
      serviceAccountName: this.options.serviceAccountName,
      configMapName: this.options.configMapName ?? DEFAULT_CONFIGMAP_NAME,
      setupCommand: config?.setupCommand,
      teardownCommand: config?.teardownCommand,
      // An unsafe pattern may leave the base path: then only the parent is mounted, as upstream.
      basePath: baseHolding(directory.path, directory.basePath),
      ...labelsOf(action, directory, this.options.provisionerName),
    });
  }

  private async run(
    action: VolumeAction,
    pvName: string,
    pod: V1Pod,
    signal: AbortSignal,
    keepOnSuccess: boolean,
  ): Promise<void> {
    const timeoutSeconds = this.options.config()?.cmdTimeoutSeconds ?? DEFAULT_CMD_TIMEOUT_SECONDS;
    this.busy.add(pvName);
    try {
      await this.runner.run({ pod, timeoutSeconds, signal, keepOnSuccess });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`failed to ${action} volume ${pvName}: ${describeError(err)}`, { cause: err });
    } finally {
      this.busy.delete(pvName);
    }
  }
}
