/**
 * The local-path provisioner on `@kprov/provisioner-lib`: provision (reference 3.5) and delete (4.2) of
 * local-path-provisioner v0.0.37, with these fixes over upstream:
 *
 * - every StorageClass parameter and annotation (including `volumeType` and the rendered patterns) is validated
 *   and the helper pod is built before anything is created, so a bad class never leaves a directory behind;
 * - a failed helper pod fails at once with its last log lines (see {@link HelperPodRunner});
 * - delete finds the node from the PV's `local.path.provisioner/selected-node` annotation, so PVs with a custom
 *   `nodeAffinityKey` (or a hostname label that is not the node name) are cleaned on the right node;
 * - when the node is gone, the skipped cleanup is reported as a warning (logger and `warn` callback).
 *
 * @module
 */
import { CoreV1Api, type KubeConfig, type V1Node, type V1PersistentVolume, type V1Pod } from '@kubernetes/client-node';
import {
  describeError,
  isNotFound,
  makeApiClient,
  ProvisioningError,
  ProvisioningState,
  silentLogger,
  withSignal,
  type Logger,
  type ProvisionOptions,
  type ProvisionResult,
  type Provisioner,
} from '@kprov/provisioner-lib';
import { chooseBasePath, selectClassConfig, storageModeOf, type Config, type RandomSource } from '../config/index.js';
import { buildHelperPod, type HelperPodAction } from '../helper-pod/build.js';
import { validateHelperPodTemplate } from '../helper-pod/template.js';
import { resolveVolume } from '../volume/parameters.js';
import { volumePath } from '../volume/path-pattern.js';
import { HelperPodRunner } from './helper-runner.js';
import { affinityTermOf, buildPersistentVolume, SELECTED_NODE_ANNOTATION, volumePathOf } from './persistent-volume.js';
import { quantityToBytes } from './quantity.js';

/** Upstream's default `--configmap-name`: the ConfigMap whose `setup`/`teardown` the helper pods mount. */
export const DEFAULT_CONFIGMAP_NAME = 'local-path-config';

/** Access modes a node-local volume supports. */
const NODE_LOCAL_ACCESS_MODES: ReadonlySet<string> = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/** Options of {@link LocalPathProvisioner}. */
export interface LocalPathProvisionerOptions {
  /** How to reach the API server; clients are made with `makeApiClient` and `watchWithAgent` (shared keep-alive agent). */
  readonly kubeConfig: KubeConfig;
  /** The provisioner's namespace: helper pods run here. */
  readonly namespace: string;
  /** The current config (a getter, so that a reload can swap it); `undefined` when none was ever loaded. */
  readonly config: () => Config | undefined;
  /** The current helper pod template (`loadHelperPodTemplate`), also a getter for reloads. */
  readonly helperPodTemplate: () => V1Pod;
  /** `--service-account-name`, set on every helper pod. */
  readonly serviceAccountName: string;
  /** `--provisioner-name`, for messages. */
  readonly provisionerName: string;
  /** `--configmap-name`. Default {@link DEFAULT_CONFIGMAP_NAME}. */
  readonly configMapName?: string | undefined;
  /** `--allow-unsafe-helper-pod-template`: skip the template checks (repeated before each use). Default false. */
  readonly allowUnsafeHelperPodTemplate?: boolean | undefined;
  readonly logger?: Logger | undefined;
  /** Receives warnings about a volume that the caller may want to surface, e.g. as an Event on the PV. */
  readonly warn?: ((volume: V1PersistentVolume, message: string) => void) | undefined;
  /** Picks among a node's paths. Default `Math.random`. */
  readonly random?: RandomSource | undefined;
  /** Interval between looks at a leftover helper pod being deleted, in ms (helper pods are watched). Default 200. */
  readonly pollIntervalMs?: number | undefined;
}

function hinted(upstream: string, hint: string): Error {
  return new Error(`${upstream}; ${hint}`);
}

/** Provisions directories on nodes (or a shared file system) through helper pods. */
export class LocalPathProvisioner implements Provisioner {
  private readonly core: CoreV1Api;
  private readonly runner: HelperPodRunner;
  private readonly logger: Logger;
  private readonly options: LocalPathProvisionerOptions;

  constructor(options: LocalPathProvisionerOptions) {
    if ((options.kubeConfig as KubeConfig | undefined) === undefined) throw new TypeError('LocalPathProvisioner: kubeConfig is required');
    for (const key of ['namespace', 'serviceAccountName', 'provisionerName'] as const) {
      if (options[key] === '') throw new TypeError(`LocalPathProvisioner: ${key} must not be empty`);
    }
    this.options = options;
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.logger = options.logger ?? silentLogger;
    this.runner = new HelperPodRunner({ kubeConfig: options.kubeConfig, logger: this.logger, pollIntervalMs: options.pollIntervalMs });
  }

  /** Block volumes are not supported (the controller rejects Block claims before calling {@link provision}). */
  supportsBlock(): boolean {
    return false;
  }

  /**
   * Creates the volume directory with the setup helper pod and returns its PV. Everything that can be checked is
   * checked first (volume mode, class config, access modes, selected node, base path, parameters, helper pod); only
   * then is the helper pod created.
   */
  async provision(options: ProvisionOptions, signal: AbortSignal): Promise<ProvisionResult> {
    const { pvName, pvc, storageClass, selectedNodeName } = options;
    const className = storageClass.metadata?.name ?? '';
    if (pvc.spec?.volumeMode === 'Block') {
      throw hinted(`${this.options.provisionerName} does not support block volume provisioning`, 'use volumeMode Filesystem');
    }
    const node = selectedNodeName === '' ? undefined : await this.readSelectedNode(selectedNodeName, signal);

    const config = this.options.config();
    const classConfig = selectClassConfig(config, className);
    const mode = storageModeOf(classConfig);
    if (mode === 'local') {
      if (pvc.spec?.selector !== undefined) {
        throw hinted('claim.Spec.Selector is not supported', 'remove spec.selector from the claim');
      }
      const bad = (pvc.spec?.accessModes ?? []).filter((m) => !NODE_LOCAL_ACCESS_MODES.has(m));
      if (bad.length > 0) {
        throw hinted(
          'NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes',
          `the claim asks for ${bad.join(', ')}; ReadWriteMany and ReadOnlyMany need a class with sharedFileSystemPath`,
        );
      }
      if (node === undefined) {
        throw hinted(
          'configuration error, no node was specified',
          `StorageClass "${className}" binds Immediate: use volumeBindingMode WaitForFirstConsumer, or set the claim annotation volume.kubernetes.io/selected-node`,
        );
      }
    }
    const nodeName = node?.metadata?.name ?? '';
    const base = chooseBasePath(classConfig, {
      nodeName,
      nodePath: storageClass.parameters?.nodePath,
      random: this.options.random,
      debug: (message) => this.logger.debug({ pv: pvName }, message),
    });
    const resolved = resolveVolume({
      parameters: storageClass.parameters,
      storageClassAnnotations: storageClass.metadata?.annotations,
      pvName,
      pvc: pvc.metadata ?? {},
    });
    for (const warning of resolved.warnings) this.logger.warn({ pv: pvName }, warning);
    const path = volumePath(base.path, resolved.folder);
    const storage = pvc.spec?.resources?.requests?.storage;
    if (storage === undefined) throw new Error('the claim requests no storage (spec.resources.requests.storage)');
    const pod = this.helperPod('create', {
      pvName,
      path,
      node: nodeName,
      shared: mode === 'shared',
      sizeBytes: quantityToBytes(storage),
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      user: resolved.user,
      group: resolved.group,
      perm: resolved.perm,
    });
    const volume = buildPersistentVolume({
      pvName,
      pvc,
      storageClass,
      path,
      volumeType: resolved.volumeType,
      mode,
      nodeName,
      node,
      nodeAffinityKey: resolved.nodeAffinityKey,
    });

    this.logger.info({ pv: pvName }, nodeName === '' ? `Creating volume ${pvName} at ${path}` : `Creating volume ${pvName} at ${nodeName}:${path}`);
    await this.runHelper('create', pvName, pod, signal);
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been created on ${nodeName}:${path}`);
    return { volume };
  }

  /**
   * Removes the volume directory with the teardown helper pod. `Retain` volumes are never touched. When the node
   * is gone the cleanup is skipped with a warning and the call succeeds, so the PV object is deleted.
   */
  async delete(volume: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const pvName = volume.metadata?.name ?? '';
    if (volume.spec?.persistentVolumeReclaimPolicy === 'Retain') {
      this.logger.info({ pv: pvName }, `Retained volume ${pvName}`);
      return;
    }
    const classConfig = selectClassConfig(this.options.config(), volume.spec?.storageClassName ?? '');
    const mode = storageModeOf(classConfig);
    const path = volumePathOf(volume);
    const nodeName = mode === 'shared' ? '' : await this.nodeOfVolume(volume, signal);
    if (nodeName !== '') {
      try {
        await this.core.readNode({ name: nodeName }, withSignal(signal));
      } catch (err) {
        if (isNotFound(err)) {
          const message = `Node ${nodeName} does not exist, skipping cleanup of volume ${pvName}: its directory ${path} is left on that node's disk`;
          this.logger.warn({ pv: pvName, node: nodeName }, message);
          this.options.warn?.(volume, message);
          return;
        }
        // As upstream: other errors do not stop the cleanup.
        this.logger.warn({ pv: pvName, node: nodeName, err: describeError(err) }, `Cannot read node ${nodeName}, deleting anyway`);
      }
    }
    const pod = this.helperPod('delete', {
      pvName,
      path,
      node: nodeName,
      shared: mode === 'shared',
      sizeBytes: quantityToBytes(volume.spec?.capacity?.storage),
      volumeMode: volume.spec?.volumeMode ?? 'Filesystem',
    });
    this.logger.info({ pv: pvName }, `Deleting volume ${pvName} at ${nodeName}:${path}`);
    try {
      await this.runHelper('delete', pvName, pod, signal);
    } catch (err) {
      this.logger.error({ pv: pvName }, `clean up volume ${pvName} failed: ${describeError(err)}`);
      throw err;
    }
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been deleted on ${nodeName}:${path}`);
  }

  /**
   * The node holding a node-local PV: the `local.path.provisioner/selected-node` annotation; for PVs without it,
   * the node carrying the affinity label (a single match), else the affinity value taken as a node name (upstream).
   */
  private async nodeOfVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<string> {
    const annotated = volume.metadata?.annotations?.[SELECTED_NODE_ANNOTATION] ?? '';
    if (annotated !== '') return annotated;
    const term = affinityTermOf(volume);
    try {
      const nodes = await this.core.listNode({ labelSelector: `${term.key}=${term.value}` }, withSignal(signal));
      if (nodes.items.length === 1) return nodes.items[0]!.metadata?.name ?? term.value;
    } catch (err) {
      this.logger.warn({ err: describeError(err) }, `Cannot list nodes with ${term.key}=${term.value}`);
    }
    return term.value;
  }

  /** The selected node; NotFound asks the controller to reschedule, as the Go library does. */
  private async readSelectedNode(name: string, signal: AbortSignal): Promise<V1Node> {
    try {
      return await this.core.readNode({ name }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) {
        throw new ProvisioningError(`selected node ${name} does not exist; rescheduling`, { state: ProvisioningState.Reschedule, cause: err });
      }
      throw new Error(`failed to get target node: ${describeError(err)}`, { cause: err });
    }
  }

  private helperPod(
    action: HelperPodAction,
    inputs: Pick<Parameters<typeof buildHelperPod>[0], 'pvName' | 'path' | 'node' | 'shared' | 'sizeBytes' | 'volumeMode' | 'user' | 'group' | 'perm'>,
  ): V1Pod {
    const template = this.options.helperPodTemplate();
    validateHelperPodTemplate(template, this.options.allowUnsafeHelperPodTemplate ?? false);
    const config = this.options.config();
    return buildHelperPod({
      ...inputs,
      action,
      template,
      namespace: this.options.namespace,
      serviceAccountName: this.options.serviceAccountName,
      configMapName: this.options.configMapName ?? DEFAULT_CONFIGMAP_NAME,
      setupCommand: config?.setupCommand,
      teardownCommand: config?.teardownCommand,
    });
  }

  private async runHelper(action: HelperPodAction, pvName: string, pod: V1Pod, signal: AbortSignal): Promise<void> {
    const timeoutSeconds = this.options.config()?.cmdTimeoutSeconds ?? 120;
    try {
      await this.runner.run({ pod, timeoutSeconds, signal });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`failed to ${action} volume ${pvName}: ${describeError(err)}`, { cause: err });
    }
  }
}
