/**
 * The local-path provisioner on `@kprov/provisioner-lib`: provision (reference 3.5) and delete (4.2) of
 * local-path-provisioner v0.0.37. A claim goes through the claim checks, placement (the capacity budgets, else
 * upstream's choice of a base path), the volume path and its checks, the PV, and then the executor, which makes the
 * directory; a PV through its scope's and the teardown checks, then the executor, which removes it. The executor
 * (helper pods, or in-process in node mode) and its scope are chosen once, in the constructor.
 *
 * Fixes over upstream:
 *
 * - every StorageClass parameter and annotation (including `volumeType` and the rendered patterns) is validated
 *   before anything is created, so a bad class never leaves a directory behind;
 * - a failed helper pod fails at once with its last log lines (see `HelperPodRunner`);
 * - delete finds the node from the PV's node affinity, believing its `local.path.provisioner/selected-node`
 *   annotation only where it agrees, so PVs with a custom `nodeAffinityKey` (or a hostname label that is not the node
 *   name) are cleaned on the right node;
 * - when the node is gone, the skipped cleanup is reported as a warning (logger and `warn` callback);
 * - a teardown removes only a directory this provisioner could have made for the PV (`checkTeardownTarget`).
 *
 * @module
 */
import type { KubeConfig, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  describeError,
  makeCoreV1Calls,
  makeStorageV1Calls,
  silentLogger,
  type Clock,
  type Logger,
  type Provisioner,
  type ProvisionOptions,
  type ProvisionResult,
} from '@kprov/provisioner-lib';
import { checkSizeBounds } from '../capacity/bounds.js';
import type { VolumePlacement } from '../capacity/placement.js';
import {
  chooseBasePath,
  quantityToBytes,
  selectClassConfig,
  storageModeOf,
  type Config,
  type RandomSource,
} from '../config/index.js';
import type { OrphanTeardown, VolumeExecutor, VolumeRecord } from '../executor/executor.js';
import { HelperPodExecutor } from '../executor/helper-pod/executor.js';
import { NodeExecutor, type NodeModeOptions } from '../executor/node/executor.js';
import { resolveVolume } from '../volume/parameters.js';
import { volumePath } from '../volume/path-pattern.js';
import { checkVolumePathText } from '../volume/path-safety.js';
import { finishOnStop } from './finish-on-stop.js';
import { VolumeNodes } from './nodes.js';
import { buildPersistentVolume, volumePathOf } from './persistent-volume.js';
import { TeardownChecks } from './teardown-checks.js';
import type { VolumeWarning } from './warnings.js';

/** Access modes a node-local volume supports. */
const NODE_LOCAL_ACCESS_MODES: ReadonlySet<string> = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/** Options of {@link LocalPathProvisioner}. */
export interface LocalPathProvisionerOptions {
  /** How to reach the API server; calls go through the library's `makeCoreV1Calls` and informers (one pool). */
  readonly kubeConfig: KubeConfig;
  /** The provisioner's namespace: helper pods run here. */
  readonly namespace: string;
  /** The current config (a getter, so that a reload can swap it); `undefined` when none was ever loaded. */
  readonly config: () => Config | undefined;
  /** The current helper pod template (`loadHelperPodTemplate`), also a getter for reloads. */
  readonly helperPodTemplate: () => V1Pod;
  /** `--service-account-name`, set on every helper pod. */
  readonly serviceAccountName: string;
  /**
   * `--provisioner-name`, for messages; recorded on every helper pod, so that the reconciler (and the runner) leave
   * the helper pods of other provisioners in the namespace alone.
   */
  readonly provisionerName: string;
  /** `--configmap-name`. Default `DEFAULT_CONFIGMAP_NAME`. */
  readonly configMapName?: string | undefined;
  /** `--allow-unsafe-helper-pod-template`: skip the template checks (repeated before each use). Default false. */
  readonly allowUnsafeHelperPodTemplate?: boolean | undefined;
  readonly logger?: Logger | undefined;
  /**
   * Receives warnings about a volume that the caller may want to surface, e.g. as a Warning Event on the PV with
   * `reason` (`VOLUME_CLEANUP_SKIPPED`, `VOLUME_DELETION_REFUSED` or `VOLUME_NODE_MISMATCH`).
   */
  readonly warn?: VolumeWarning | undefined;
  /** Picks among a node's paths. Default `Math.random`. */
  readonly random?: RandomSource | undefined;
  /** Interval between looks at a leftover helper pod being deleted, in ms (helper pods are watched). Default 200. */
  readonly pollIntervalMs?: number | undefined;
  /** Time source of the executor: the helper pods' waits, the scripts' timeouts, the unsaved grace. Default the real clock. */
  readonly clock?: Clock | undefined;
  /**
   * Node mode: handle only the claims whose selected node is this node, and make and remove the directories
   * in-process instead of through helper pods (`helperPodTemplate` is then not used). Default off.
   */
  readonly nodeMode?: NodeModeOptions | undefined;
  /**
   * The capacity budgets of node paths (run by the caller, e.g. a `CapacityTracker`): a claim goes only to a path of
   * its node where it fits, else it is handed back to the scheduler. Default none: paths take any claim, as upstream
   * (the size bounds `minSize`/`maxSize` apply either way).
   */
  readonly capacity?: VolumePlacement | undefined;
  /**
   * The PVs as a cache has them (e.g. the store of the PV informer the program shares with its `ProvisionController`),
   * read by every teardown to refuse removing a directory that holds another PV's volume; `undefined` while that
   * cache is not complete (its informer has not listed yet), for which the teardown lists the PVs from the API.
   * Default: none, every teardown lists the PVs from the API.
   */
  readonly volumes?: (() => Iterable<V1PersistentVolume> | undefined) | undefined;
  /**
   * The program's requested stop (SIGTERM, SIGINT). Once it has aborted, {@link LocalPathProvisioner.provision} and
   * {@link LocalPathProvisioner.delete} calls in flight are finished (helper pod, script) rather than aborted when
   * the controller aborts their signal; a lost leadership or an operation timeout still aborts them. Default none:
   * an operation ends whenever its signal aborts.
   */
  readonly stopping?: AbortSignal | undefined;
}

function hinted(upstream: string, hint: string): Error {
  return new Error(`${upstream}; ${hint}`);
}

/** The executor `options` ask for: in-process on this node in node mode, else helper pods. */
function executorOf(options: LocalPathProvisionerOptions, logger: Logger): VolumeExecutor {
  const { config, clock } = options;
  if (options.nodeMode !== undefined) return new NodeExecutor({ ...options.nodeMode, config, logger, clock });
  return new HelperPodExecutor({ ...options, logger });
}

/** Provisions directories on nodes (or a shared file system); see the module. */
export class LocalPathProvisioner implements Provisioner, OrphanTeardown {
  /** Makes and removes the directories: helper pods, or in-process on this node (`nodeMode`). */
  readonly executor: VolumeExecutor;
  private readonly nodes: VolumeNodes;
  private readonly teardowns: TeardownChecks;
  private readonly logger: Logger;
  private readonly options: LocalPathProvisionerOptions;

  constructor(options: LocalPathProvisionerOptions) {
    if ((options.kubeConfig as KubeConfig | undefined) === undefined)
      throw new TypeError('LocalPathProvisioner: kubeConfig is required');
    for (const key of ['namespace', 'serviceAccountName', 'provisionerName'] as const) {
      if (options[key] === '') throw new TypeError(`LocalPathProvisioner: ${key} must not be empty`);
    }
    if (options.nodeMode !== undefined && options.nodeMode.nodeName === '')
      throw new TypeError('LocalPathProvisioner: nodeMode.nodeName must not be empty');
    this.options = options;
    const core = makeCoreV1Calls(options.kubeConfig);
    const storage = makeStorageV1Calls(options.kubeConfig);
    this.logger = options.logger ?? silentLogger;
    this.executor = executorOf(options, this.logger);
    this.nodes = new VolumeNodes(core, this.logger, options.warn);
    const { volumes, warn } = options;
    this.teardowns = new TeardownChecks({ core, storage, volumes, logger: this.logger, warn });
  }

  /** The qualifier: the executor's scope (in node mode, the claims of this node and those without a node). */
  shouldProvision(claim: V1PersistentVolumeClaim): boolean {
    return this.executor.scope.shouldProvision(claim);
  }

  /** Block volumes are not supported (the controller rejects Block claims before calling {@link provision}). */
  supportsBlock(): boolean {
    return false;
  }

  /**
   * Creates the volume directory with the executor and returns its PV. Everything that can be checked is checked
   * first (volume mode, selected node, class config, access modes, size bounds, base path, parameters, path); only
   * then does the executor make the directory.
   */
  async provision(options: ProvisionOptions, signal: AbortSignal): Promise<ProvisionResult> {
    const operation = finishOnStop(signal, this.options.stopping);
    try {
      return await this.provisionVolume(options, operation.signal);
    } catch (err) {
      // A failed attempt gives its reserved space back.
      this.options.capacity?.release(options.pvName);
      throw err;
    } finally {
      operation.dispose();
    }
  }

  private async provisionVolume(options: ProvisionOptions, signal: AbortSignal): Promise<ProvisionResult> {
    const { pvName, pvc, storageClass, selectedNodeName } = options;
    const { scope } = this.executor;
    const className = storageClass.metadata?.name ?? '';
    if (pvc.spec?.volumeMode === 'Block') {
      throw hinted(
        `${this.options.provisionerName} does not support block volume provisioning`,
        'use volumeMode Filesystem',
      );
    }
    scope.checkSelectedNode(selectedNodeName, className);
    const node = selectedNodeName === '' ? undefined : await this.nodes.selected(selectedNodeName, signal);

    const classConfig = selectClassConfig(this.options.config(), className);
    const mode = storageModeOf(classConfig);
    if (mode === 'local') checkNodeLocalClaim(pvc, node, className);
    scope.checkStorage(mode, className);
    const nodeName = node?.metadata?.name ?? '';
    const requestBytes = quantityToBytes(pvc.spec?.resources?.requests?.storage);
    const claimName = `${pvc.metadata?.namespace ?? ''}/${pvc.metadata?.name ?? ''}`;
    checkSizeBounds(requestBytes, claimName, storageClass, classConfig);
    const nodePath = storageClass.parameters?.nodePath;
    const placed = await this.options.capacity?.place(
      { classConfig, className, pvName, claim: claimName, nodeName, nodePath, requestBytes },
      signal,
    );
    const base =
      placed ??
      chooseBasePath(classConfig, {
        nodeName,
        nodePath,
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
    checkVolumePathText(path, pvc.metadata ?? {});
    if (pvc.spec?.resources?.requests?.storage === undefined)
      throw new Error('the claim requests no storage (spec.resources.requests.storage)');
    const volume = buildPersistentVolume({
      pvName,
      pvc,
      storageClass,
      path,
      volumeType: scope.volumeType(resolved.volumeType, pvc, storageClass),
      mode,
      nodeName,
      node,
      nodeAffinityKey: resolved.nodeAffinityKey,
    });
    Object.assign(volume.metadata!.annotations!, scope.annotations(nodeName));
    this.logger.info(
      { pv: pvName },
      nodeName === '' ? `Creating volume ${pvName} at ${path}` : `Creating volume ${pvName} at ${nodeName}:${path}`,
    );
    await this.executor.setUp(
      {
        pvName,
        claim: { namespace: pvc.metadata?.namespace ?? '', name: pvc.metadata?.name ?? '', uid: pvc.metadata?.uid },
        path,
        basePath: base.path,
        node: nodeName,
        storageClassName: className,
        shared: mode === 'shared',
        sizeBytes: requestBytes,
        volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
        user: resolved.user,
        group: resolved.group,
        perm: resolved.perm,
      },
      signal,
    );
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been created on ${nodeName}:${path}`);
    return { volume };
  }

  /** The controller saved the PV of a provisioned volume (its `provisioned` event): the executor drops its record. */
  async volumeSaved(volume: V1PersistentVolume): Promise<void> {
    await this.executor.saved(volume.metadata?.name ?? '');
  }

  /**
   * Removes the volume directory with the executor. `Retain` volumes are never touched. When the node is gone the
   * cleanup is skipped with a warning and the call succeeds, so the PV object is deleted. A path this provisioner
   * could not have created for the PV (see `checkTeardownTarget`) is refused: a `VolumeDeletionRefused`
   * warning names it, nothing is removed and the PV is kept. A PV of another node's provisioner (node mode) is left
   * to it.
   */
  async delete(volume: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const operation = finishOnStop(signal, this.options.stopping);
    try {
      await this.deleteVolume(volume, operation.signal);
    } finally {
      operation.dispose();
    }
  }

  private async deleteVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<void> {
    const { scope } = this.executor;
    const pvName = volume.metadata?.name ?? '';
    // A volume whose PV was never saved is deleted by the controller: its reservation goes.
    this.options.capacity?.release(pvName);
    const { pvNameFolder } = scope.checkVolume(volume);
    if (volume.spec?.persistentVolumeReclaimPolicy === 'Retain') {
      this.logger.info({ pv: pvName }, `Retained volume ${pvName}`);
      return;
    }
    const className = volume.spec?.storageClassName ?? '';
    const classConfig = selectClassConfig(this.options.config(), className);
    const mode = storageModeOf(classConfig);
    scope.checkVolumeStorage(pvName, mode);
    const path = volumePathOf(volume);
    const nodeName = mode === 'shared' ? '' : await this.nodes.holding(volume, signal);
    const lookUpNode = scope.checkVolumeNode(pvName, nodeName);
    if (lookUpNode && nodeName !== '' && !(await this.nodes.exists(volume, nodeName, path, signal))) return;
    const { claim, basePath } = await this.teardowns.guard(
      volume,
      { path, classConfig, className, nodeName, allowPvNameFolder: pvNameFolder },
      signal,
    );
    this.logger.info({ pv: pvName }, `Deleting volume ${pvName} at ${nodeName}:${path}`);
    try {
      await this.executor.tearDown(
        {
          pvName,
          claim,
          path,
          basePath,
          node: nodeName,
          storageClassName: className,
          shared: mode === 'shared',
          sizeBytes: quantityToBytes(volume.spec?.capacity?.storage),
          volumeMode: volume.spec?.volumeMode ?? 'Filesystem',
        },
        signal,
      );
    } catch (err) {
      if (!signal.aborted) this.logger.error({ pv: pvName }, `clean up volume ${pvName} failed: ${describeError(err)}`);
      throw err;
    }
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been deleted on ${nodeName}:${path}`);
  }

  /**
   * Runs the teardown of a directory whose setup was interrupted (the orphan reconcilers: its claim and PV are gone),
   * with the same checks as {@link delete}. Throws a `TeardownRefusedError` when the path is refused.
   */
  async teardownOrphan(record: VolumeRecord, signal: AbortSignal): Promise<void> {
    const classConfig = selectClassConfig(this.options.config(), record.storageClassName);
    const basePath = await this.teardowns.basePath(
      { ...record, classConfig, className: record.storageClassName, nodeName: record.node },
      signal,
    );
    this.logger.info(
      { pv: record.pvName },
      `Deleting the directory of interrupted volume ${record.pvName} at ${record.node}:${record.path}`,
    );
    await this.executor.tearDown(
      {
        ...record,
        basePath,
        shared: storageModeOf(classConfig) === 'shared',
        sizeBytes: 0,
        volumeMode: 'Filesystem',
      },
      signal,
    );
    this.logger.info(
      { pv: record.pvName },
      `Volume ${record.pvName} has been deleted on ${record.node}:${record.path}`,
    );
  }
}

/** The checks of a node-local claim: no selector, node-local access modes, a selected node. */
function checkNodeLocalClaim(pvc: V1PersistentVolumeClaim, node: V1Node | undefined, className: string): void {
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
