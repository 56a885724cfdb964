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
import {
  CoreV1Api,
  StorageV1Api,
  type KubeConfig,
  type V1Node,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StorageClass,
} from '@kubernetes/client-node';
import {
  ANN_SELECTED_NODE,
  describeError,
  IgnoredError,
  InfeasibleError,
  isNotFound,
  makeApiClient,
  ProvisioningError,
  ProvisioningState,
  silentLogger,
  withSignal,
  type Clock,
  type Logger,
  type ProvisionOptions,
  type ProvisionResult,
  type Provisioner,
} from '@kprov/provisioner-lib';
import {
  chooseBasePath,
  pathsForNode,
  selectClassConfig,
  storageModeOf,
  type Config,
  type RandomSource,
  type StorageClassConfig,
} from '../config/index.js';
import { checkSizeBounds } from '../capacity/bounds.js';
import type { CapacityTracker } from '../capacity/tracker.js';
import { buildHelperPod, type HelperPodAction } from '../executor/helper-pod/build.js';
import { validateHelperPodTemplate } from '../executor/helper-pod/template.js';
import { parseVolumeParameters, resolveVolume } from '../volume/parameters.js';
import { checkVolumePathText } from '../volume/path-safety.js';
import { cleanPath, volumePath } from '../volume/path-pattern.js';
import { finishOnStop } from './finish-on-stop.js';
import { HelperPodRunner } from '../executor/helper-pod/runner.js';
import { kuttiNodeOf, kuttiVolumeType } from '../executor/node/kutti.js';
import { NodeVolumes } from '../executor/node/executor.js';
import type { NodeScripts } from '../executor/node/scripts.js';
import {
  ANNOTATION_CLAIM,
  ANNOTATION_NODE,
  ANNOTATION_PATH,
  ANNOTATION_STORAGE_CLASS,
  ANNOTATION_VOLUME,
  LABEL_CLAIM_UID,
  LABEL_OPERATION,
} from '../executor/helper-pod/labels.js';
import {
  affinityTermOf,
  buildPersistentVolume,
  PROVISIONED_ON_ANNOTATION,
  SELECTED_NODE_ANNOTATION,
  volumePathOf,
} from './persistent-volume.js';
import { quantityToBytes } from './quantity.js';
import {
  checkTeardownTarget,
  pathOfVolume,
  TeardownRefusedError,
  type ClaimIdentity,
} from '../volume/teardown-guard.js';

/** Upstream's default `--configmap-name`: the ConfigMap whose `setup`/`teardown` the helper pods mount. */
export const DEFAULT_CONFIGMAP_NAME = 'local-path-config';

/** Node mode: one provisioner per node, handling the claims scheduled to its node, without helper pods. */
export interface NodeModeOptions {
  /** The node this process runs on (`NODE_NAME` from the downward API's `spec.nodeName`). */
  readonly nodeName: string;
  /**
   * Where the node's root file system is seen by this process (e.g. `/host` for a hostPath of `/` mounted there);
   * `""` (default) when the base paths are mounted at the same paths.
   */
  readonly hostRoot?: string | undefined;
  /**
   * The ConfigMap's `setup` and `teardown` scripts now, run as child processes unless they are the stock ones
   * (`setupCommand`/`teardownCommand` of the config win, as in default mode). Default none: the built-in behaviour.
   */
  readonly scripts?: (() => NodeScripts | Promise<NodeScripts>) | undefined;
  /**
   * kuttiproject/provisioner-localvolume compatibility: volumes are `local` PVs, as kutti's, unless the claim's
   * `volumeType` or the class's `defaultVolumeType` annotation says otherwise; and the PVs kutti made on this node
   * (annotations `kuttiproject.org/provisionedBy` and `kuttiproject.org/provisionedOn`, folder `<base path>/<PV
   * name>`) are deleted too. Default false.
   */
  readonly kutti?: boolean | undefined;
}

/** The start of the message of a claim refused in node mode because nothing selected a node for it. */
export const NODE_MODE_NEEDS_SELECTED_NODE = 'node mode needs volumeBindingMode WaitForFirstConsumer';

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
  /**
   * Receives warnings about a volume that the caller may want to surface, e.g. as a Warning Event on the PV with
   * `reason` ({@link VOLUME_CLEANUP_SKIPPED}, {@link VOLUME_DELETION_REFUSED} or {@link VOLUME_NODE_MISMATCH}).
   */
  readonly warn?: ((volume: V1PersistentVolume, message: string, reason: string) => void) | undefined;
  /** Picks among a node's paths. Default `Math.random`. */
  readonly random?: RandomSource | undefined;
  /** Interval between looks at a leftover helper pod being deleted, in ms (helper pods are watched). Default 200. */
  readonly pollIntervalMs?: number | undefined;
  /** Time source of the helper pods' waits (tests). Default the real clock. */
  readonly clock?: Clock | undefined;
  /**
   * Node mode: handle only the claims whose selected node is this node, and make and remove the directories
   * in-process instead of through helper pods (`helperPodTemplate` is then not used). Default off.
   */
  readonly nodeMode?: NodeModeOptions | undefined;
  /**
   * The capacity budgets of node paths (run by the caller): a claim goes only to a path of its node where it fits,
   * else it is handed back to the scheduler. Default none: paths take any claim, as upstream (the size bounds
   * `minSize`/`maxSize` apply either way).
   */
  readonly capacity?: CapacityTracker | undefined;
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

/** Reason of the warning when the node of a volume is gone and its cleanup is skipped. */
export const VOLUME_CLEANUP_SKIPPED = 'VolumeCleanupSkipped';
/** Reason of the warning when a teardown is refused (a path this provisioner could not have created for the PV). */
export const VOLUME_DELETION_REFUSED = 'VolumeDeletionRefused';
/** Reason of the warning when the PV's selected-node annotation disagrees with its node affinity. */
export const VOLUME_NODE_MISMATCH = 'VolumeNodeMismatch';

/** How long a volume set up by this process may wait for its PV to be saved (the controller retries a save ~1 min). */
export const UNSAVED_GRACE_MS = 10 * 60_000;

/** Where and for what a helper pod runs: what its labels and annotations record. */
export interface HelperPodRecord {
  readonly action: HelperPodAction;
  readonly pvName: string;
  readonly claim: ClaimIdentity | undefined;
  readonly path: string;
  readonly node: string;
  readonly storageClassName: string;
}

/** The labels and annotations of a helper pod, from which an interrupted operation can be finished. */
function recordOf(record: HelperPodRecord): { labels: Record<string, string>; annotations: Record<string, string> } {
  const uid = record.claim?.uid ?? '';
  return {
    labels: { [LABEL_OPERATION]: record.action, ...(uid === '' ? {} : { [LABEL_CLAIM_UID]: uid }) },
    annotations: {
      [ANNOTATION_VOLUME]: record.pvName,
      [ANNOTATION_CLAIM]: record.claim === undefined ? '' : `${record.claim.namespace}/${record.claim.name}`,
      [ANNOTATION_PATH]: record.path,
      [ANNOTATION_NODE]: record.node,
      [ANNOTATION_STORAGE_CLASS]: record.storageClassName,
    },
  };
}

function hinted(upstream: string, hint: string): Error {
  return new Error(`${upstream}; ${hint}`);
}

/** Provisions directories on nodes (or a shared file system) through helper pods. */
export class LocalPathProvisioner implements Provisioner {
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  /** Runs the helper pods; the reconciler asks it which pods are in use. */
  readonly runner: HelperPodRunner;
  /** PV name → the setup helper pod kept until the PV is saved ({@link volumeSaved}), and since when (ms). */
  private readonly unsaved = new Map<string, { pod: string; since: number }>();
  private readonly logger: Logger;
  private readonly options: LocalPathProvisionerOptions;
  /** Node mode's directories on this node; `undefined` in default mode. */
  readonly nodeVolumes: NodeVolumes | undefined;

  constructor(options: LocalPathProvisionerOptions) {
    if ((options.kubeConfig as KubeConfig | undefined) === undefined)
      throw new TypeError('LocalPathProvisioner: kubeConfig is required');
    for (const key of ['namespace', 'serviceAccountName', 'provisionerName'] as const) {
      if (options[key] === '') throw new TypeError(`LocalPathProvisioner: ${key} must not be empty`);
    }
    if (options.nodeMode !== undefined && options.nodeMode.nodeName === '')
      throw new TypeError('LocalPathProvisioner: nodeMode.nodeName must not be empty');
    this.options = options;
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.storage = makeApiClient(options.kubeConfig, StorageV1Api);
    this.logger = options.logger ?? silentLogger;
    this.runner = new HelperPodRunner({
      kubeConfig: options.kubeConfig,
      logger: this.logger,
      pollIntervalMs: options.pollIntervalMs,
      clock: options.clock,
    });
    this.nodeVolumes =
      options.nodeMode === undefined
        ? undefined
        : new NodeVolumes({
            hostRoot: options.nodeMode.hostRoot ?? '',
            config: options.config,
            scripts: options.nodeMode.scripts,
            logger: this.logger,
          });
  }

  /**
   * The qualifier: in node mode, only claims whose selected node is this node, and claims with no selected node at
   * all (Immediate binding), which {@link provision} refuses with an event. Every claim otherwise.
   */
  shouldProvision(claim: V1PersistentVolumeClaim): boolean {
    const nodeMode = this.options.nodeMode;
    if (nodeMode === undefined) return true;
    const selected = claim.metadata?.annotations?.[ANN_SELECTED_NODE] ?? '';
    return selected === '' || selected === nodeMode.nodeName;
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
    const className = storageClass.metadata?.name ?? '';
    if (pvc.spec?.volumeMode === 'Block') {
      throw hinted(
        `${this.options.provisionerName} does not support block volume provisioning`,
        'use volumeMode Filesystem',
      );
    }
    const nodeMode = this.options.nodeMode;
    if (nodeMode !== undefined) {
      if (selectedNodeName === '') {
        throw new InfeasibleError(
          `${NODE_MODE_NEEDS_SELECTED_NODE}: StorageClass "${className}" binds Immediate, so no node was selected for the claim and no node's provisioner can make its volume; use a class with volumeBindingMode WaitForFirstConsumer`,
        );
      }
      if (selectedNodeName !== nodeMode.nodeName)
        throw new IgnoredError(`the claim is for node ${selectedNodeName}, not ${nodeMode.nodeName}`);
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
    if (nodeMode !== undefined && mode === 'shared') {
      throw hinted(
        `StorageClass "${className}" uses sharedFileSystemPath, which node mode does not provision`,
        'run a provisioner without --node-mode for shared classes',
      );
    }
    const nodeName = node?.metadata?.name ?? '';
    const requestBytes = quantityToBytes(pvc.spec?.resources?.requests?.storage);
    const claimName = `${pvc.metadata?.namespace ?? ''}/${pvc.metadata?.name ?? ''}`;
    checkSizeBounds(requestBytes, claimName, storageClass, classConfig);
    const placed = await this.options.capacity?.place(
      {
        classConfig,
        className,
        pvName,
        claim: claimName,
        nodeName,
        nodePath: storageClass.parameters?.nodePath,
        requestBytes,
      },
      signal,
    );
    const base =
      placed ??
      chooseBasePath(classConfig, {
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
    checkVolumePathText(path, pvc.metadata ?? {});
    const storage = pvc.spec?.resources?.requests?.storage;
    if (storage === undefined) throw new Error('the claim requests no storage (spec.resources.requests.storage)');
    const claimId: ClaimIdentity = {
      namespace: pvc.metadata?.namespace ?? '',
      name: pvc.metadata?.name ?? '',
      uid: pvc.metadata?.uid,
    };
    const volume = buildPersistentVolume({
      pvName,
      pvc,
      storageClass,
      path,
      volumeType:
        nodeMode?.kutti === true
          ? kuttiVolumeType(resolved.volumeType, pvc.metadata?.annotations, storageClass.metadata?.annotations)
          : resolved.volumeType,
      mode,
      nodeName,
      node,
      nodeAffinityKey: resolved.nodeAffinityKey,
    });
    if (this.nodeVolumes !== undefined) {
      volume.metadata!.annotations![PROVISIONED_ON_ANNOTATION] = nodeName;
      // An unsafe pattern may leave the base path: then the parent is the base, as the setup script takes it.
      const dirBase = path.startsWith(`${cleanPath(base.path)}/`) ? base.path : dirnameOf(path);
      this.logger.info({ pv: pvName }, `Creating volume ${pvName} at ${nodeName}:${path}`);
      try {
        await this.nodeVolumes.setUp(
          {
            record: { pvName, claim: claimId, path, basePath: base.path, node: nodeName, storageClassName: className },
            dirBase,
            sizeBytes: requestBytes,
            volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
            user: resolved.user,
            group: resolved.group,
            perm: resolved.perm,
          },
          signal,
        );
      } catch (err) {
        if (signal.aborted) throw err;
        throw new Error(`failed to create volume ${pvName}: ${describeError(err)}`, { cause: err });
      }
      this.logger.info({ pv: pvName }, `Volume ${pvName} has been created on ${nodeName}:${path}`);
      return { volume };
    }
    const pod = this.helperPod(
      'create',
      {
        pvName,
        path,
        node: nodeName,
        shared: mode === 'shared',
        sizeBytes: requestBytes,
        volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
        user: resolved.user,
        group: resolved.group,
        perm: resolved.perm,
        // An unsafe pattern may leave the base path: then only the parent is mounted, as upstream.
        basePath: path.startsWith(`${cleanPath(base.path)}/`) ? base.path : undefined,
      },
      { action: 'create', pvName, claim: claimId, path, node: nodeName, storageClassName: className },
    );
    this.logger.info(
      { pv: pvName },
      nodeName === '' ? `Creating volume ${pvName} at ${path}` : `Creating volume ${pvName} at ${nodeName}:${path}`,
    );
    // The setup pod is kept until the PV is saved: if the process dies in between, it tells the reconciler that a
    // directory was made for this claim.
    await this.runHelper('create', pvName, pod, signal, true);
    this.unsaved.set(pvName, { pod: pod.metadata?.name ?? '', since: Date.now() });
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been created on ${nodeName}:${path}`);
    return { volume };
  }

  /**
   * The controller saved the PV of a provisioned volume (its `provisioned` event): the setup helper pod, kept as a
   * record until then, is deleted.
   */
  async volumeSaved(volume: V1PersistentVolume): Promise<void> {
    const pvName = volume.metadata?.name ?? '';
    await this.nodeVolumes?.saved(pvName);
    const pod = this.unsaved.get(pvName)?.pod;
    if (pod === undefined) return;
    this.unsaved.delete(pvName);
    try {
      await this.runner.remove(this.options.namespace, pod);
    } catch (err) {
      this.logger.warn(
        { pv: pvName, err: describeError(err) },
        `unable to delete the helper pod ${pod}; the reconciler will`,
      );
    }
  }

  /**
   * Whether the volume was set up by this process and its PV not saved yet (its setup pod is then still needed).
   * After {@link UNSAVED_GRACE_MS} the save is taken as given up (the controller then tore the volume down), so the
   * reconciler may act on the pod.
   */
  isUnsaved(pvName: string): boolean {
    const entry = this.unsaved.get(pvName);
    if (entry === undefined) return false;
    if (Date.now() - entry.since < UNSAVED_GRACE_MS) return true;
    this.unsaved.delete(pvName);
    return false;
  }

  /**
   * Removes the volume directory with the teardown helper pod. `Retain` volumes are never touched. When the node
   * is gone the cleanup is skipped with a warning and the call succeeds, so the PV object is deleted. A path this
   * provisioner could not have created for the PV (see {@link checkTeardownTarget}) is refused: a
   * {@link VOLUME_DELETION_REFUSED} warning names it, nothing is removed and the PV is kept.
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
    const pvName = volume.metadata?.name ?? '';
    // A volume whose PV was never saved is deleted by the controller: its reservation goes.
    this.options.capacity?.release(pvName);
    if (this.nodeVolumes !== undefined && this.options.nodeMode !== undefined)
      return this.deleteOnThisNode(volume, this.options.nodeMode, this.nodeVolumes, signal);
    if (volume.spec?.persistentVolumeReclaimPolicy === 'Retain') {
      this.logger.info({ pv: pvName }, `Retained volume ${pvName}`);
      return;
    }
    const className = volume.spec?.storageClassName ?? '';
    const classConfig = selectClassConfig(this.options.config(), className);
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
          this.options.warn?.(volume, message, VOLUME_CLEANUP_SKIPPED);
          return;
        }
        // As upstream: other errors do not stop the cleanup.
        this.logger.warn(
          { pv: pvName, node: nodeName, err: describeError(err) },
          `Cannot read node ${nodeName}, deleting anyway`,
        );
      }
    }
    const { claim, basePath } = await this.guardTeardown(volume, path, classConfig, className, nodeName, signal);
    const pod = this.helperPod(
      'delete',
      {
        pvName,
        path,
        node: nodeName,
        shared: mode === 'shared',
        sizeBytes: quantityToBytes(volume.spec?.capacity?.storage),
        volumeMode: volume.spec?.volumeMode ?? 'Filesystem',
        basePath,
      },
      { action: 'delete', pvName, claim, path, node: nodeName, storageClassName: className },
    );
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
   * The checks every teardown passes before anything is removed ({@link checkTeardown}); a refused path is logged,
   * reported on the PV as a `VolumeDeletionRefused` Warning and ends the delete as an {@link IgnoredError}, so the PV
   * is kept. Resolves with the claim the PV was bound to and the base path the volume lies in.
   */
  private async guardTeardown(
    volume: V1PersistentVolume,
    path: string,
    classConfig: StorageClassConfig,
    className: string,
    nodeName: string,
    signal: AbortSignal,
    allowPvNameFolder = false,
  ): Promise<{ claim: ClaimIdentity | undefined; basePath: string }> {
    const pvName = volume.metadata?.name ?? '';
    const ref = volume.spec?.claimRef;
    const claim: ClaimIdentity | undefined =
      ref === undefined ? undefined : { namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid };
    try {
      return {
        claim,
        basePath: await this.checkTeardown(
          { pvName, path, classConfig, className, nodeName, claim, allowPvNameFolder },
          signal,
        ),
      };
    } catch (err) {
      if (!(err instanceof TeardownRefusedError)) throw err;
      this.logger.error({ pv: pvName, path }, err.message);
      this.options.warn?.(volume, err.message, VOLUME_DELETION_REFUSED);
      throw new IgnoredError(err.message);
    }
  }

  /**
   * Node mode's {@link delete}: only a PV whose `local.path.provisioner/provisioned-on` annotation (with
   * `nodeMode.kutti`, else kutti's `kuttiproject.org/provisionedOn`) and node affinity both name this node (any other
   * is left to its node's provisioner: {@link IgnoredError}); the directory passes the same checks as a teardown
   * through a helper pod, then is removed in-process or by the teardown script.
   */
  private async deleteOnThisNode(
    volume: V1PersistentVolume,
    nodeMode: NodeModeOptions,
    nodeVolumes: NodeVolumes,
    signal: AbortSignal,
  ): Promise<void> {
    const pvName = volume.metadata?.name ?? '';
    const me = nodeMode.nodeName;
    const ours = volume.metadata?.annotations?.[PROVISIONED_ON_ANNOTATION];
    const kutti = ours === undefined && nodeMode.kutti === true ? kuttiNodeOf(volume) : undefined;
    const owner = ours ?? kutti ?? '';
    if (owner !== me) {
      throw new IgnoredError(
        owner === ''
          ? `volume ${pvName} has no ${PROVISIONED_ON_ANNOTATION} annotation: it was not made by a node-mode provisioner`
          : `volume ${pvName} was provisioned on node ${owner}, not on ${me}`,
      );
    }
    if (volume.spec?.persistentVolumeReclaimPolicy === 'Retain') {
      this.logger.info({ pv: pvName }, `Retained volume ${pvName}`);
      return;
    }
    const className = volume.spec?.storageClassName ?? '';
    const classConfig = selectClassConfig(this.options.config(), className);
    if (storageModeOf(classConfig) === 'shared')
      throw new IgnoredError(`volume ${pvName} is of a sharedFileSystemPath class, which node mode does not handle`);
    const path = volumePathOf(volume);
    const nodeName = await this.nodeOfVolume(volume, signal);
    if (nodeName !== me)
      throw new IgnoredError(`the node affinity of volume ${pvName} names node ${nodeName}, not ${me}`);
    const { basePath } = await this.guardTeardown(
      volume,
      path,
      classConfig,
      className,
      nodeName,
      signal,
      kutti !== undefined,
    );
    this.logger.info({ pv: pvName }, `Deleting volume ${pvName} at ${nodeName}:${path}`);
    try {
      await nodeVolumes.tearDown(
        {
          pvName,
          path,
          basePath,
          sizeBytes: quantityToBytes(volume.spec?.capacity?.storage),
          volumeMode: volume.spec?.volumeMode ?? 'Filesystem',
        },
        signal,
      );
    } catch (err) {
      if (signal.aborted) throw err;
      this.logger.error({ pv: pvName }, `clean up volume ${pvName} failed: ${describeError(err)}`);
      throw new Error(`failed to delete volume ${pvName}: ${describeError(err)}`, { cause: err });
    }
    await nodeVolumes.forget(pvName, basePath);
    this.logger.info({ pv: pvName }, `Volume ${pvName} has been deleted on ${nodeName}:${path}`);
  }

  /**
   * Runs the teardown of a directory whose setup was interrupted (the reconciler: its claim and PV are gone), with
   * the same checks as {@link delete}. Throws a {@link TeardownRefusedError} when the path is refused.
   */
  async teardownOrphan(record: HelperPodRecord, signal: AbortSignal): Promise<void> {
    const classConfig = selectClassConfig(this.options.config(), record.storageClassName);
    const mode = storageModeOf(classConfig);
    const basePath = await this.checkTeardown(
      { ...record, classConfig, className: record.storageClassName, nodeName: record.node },
      signal,
    );
    if (this.nodeVolumes !== undefined) {
      this.logger.info(
        { pv: record.pvName },
        `Deleting the directory of interrupted volume ${record.pvName} at ${record.node}:${record.path}`,
      );
      await this.nodeVolumes.tearDown(
        { pvName: record.pvName, path: record.path, basePath, sizeBytes: 0, volumeMode: 'Filesystem' },
        signal,
      );
      this.logger.info(
        { pv: record.pvName },
        `Volume ${record.pvName} has been deleted on ${record.node}:${record.path}`,
      );
      return;
    }
    const pod = this.helperPod(
      'delete',
      {
        pvName: record.pvName,
        path: record.path,
        node: record.node,
        shared: mode === 'shared',
        sizeBytes: 0,
        volumeMode: 'Filesystem',
        basePath,
      },
      { ...record, action: 'delete' },
    );
    this.logger.info(
      { pv: record.pvName },
      `Deleting the directory of interrupted volume ${record.pvName} at ${record.node}:${record.path}`,
    );
    await this.runHelper('delete', record.pvName, pod, signal);
    this.logger.info(
      { pv: record.pvName },
      `Volume ${record.pvName} has been deleted on ${record.node}:${record.path}`,
    );
  }

  /**
   * {@link checkTeardownTarget} with the base paths of the node and class, the class's pattern and every PV's path
   * (from `volumes` when given and complete, else listed from the API).
   */
  private async checkTeardown(
    target: {
      pvName: string;
      path: string;
      classConfig: StorageClassConfig;
      className: string;
      nodeName: string;
      claim: ClaimIdentity | undefined;
      allowPvNameFolder?: boolean;
    },
    signal: AbortSignal,
  ): Promise<string> {
    const mode = storageModeOf(target.classConfig);
    let basePaths: readonly string[];
    if (mode === 'shared') basePaths = [target.classConfig.sharedFileSystemPath];
    else {
      try {
        basePaths = pathsForNode(target.classConfig, target.nodeName).paths;
      } catch {
        basePaths = [];
      }
    }
    const storageClass = await this.readStorageClass(target.className, signal);
    let pathPattern: string | undefined;
    let allowUnsafePathPattern = false;
    if (storageClass !== undefined) {
      try {
        const params = parseVolumeParameters({
          parameters: storageClass.parameters,
          storageClassAnnotations: storageClass.metadata?.annotations,
        });
        ({ pathPattern, allowUnsafePathPattern } = params);
      } catch {
        // A class whose parameters no longer parse made no pattern volumes: the default folder name applies.
      }
    }
    // The cache lags the API server by the time a watch event takes to arrive (milliseconds). A PV that would be
    // missed in that window was created just now with its path inside this volume's directory; PVs are created only
    // by cluster administrators and by this provisioner (always at a new directory), so that is not a realistic
    // threat. A PV deleted in that window is still seen, which can only refuse a removal, never allow one.
    const volumes = this.options.volumes?.() ?? (await this.core.listPersistentVolume({}, withSignal(signal))).items;
    const otherVolumes: { name: string; path: string }[] = [];
    for (const v of volumes) {
      const p = pathOfVolume(v);
      if (p !== undefined) otherVolumes.push({ name: v.metadata?.name ?? '', path: p });
    }
    return checkTeardownTarget({
      pvName: target.pvName,
      path: target.path,
      basePaths,
      claim: target.claim,
      pathPattern,
      allowUnsafePathPattern,
      allowPvNameFolder: target.allowPvNameFolder,
      otherVolumes,
    });
  }

  private async readStorageClass(name: string, signal: AbortSignal): Promise<V1StorageClass | undefined> {
    if (name === '') return undefined;
    try {
      return await this.storage.readStorageClass({ name }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The node holding a node-local PV, from its node affinity (which cannot be edited): the node named by the
   * `local.path.provisioner/selected-node` annotation when that node matches the affinity (the annotation can be
   * edited, so it is only believed where it agrees); else the one node carrying the affinity label; else the affinity
   * value taken as a node name (upstream).
   */
  private async nodeOfVolume(volume: V1PersistentVolume, signal: AbortSignal): Promise<string> {
    const term = affinityTermOf(volume);
    const pvName = volume.metadata?.name ?? '';
    const agrees = (node: V1Node): boolean => (node.metadata?.labels?.[term.key] ?? node.metadata?.name) === term.value;
    const annotated = volume.metadata?.annotations?.[SELECTED_NODE_ANNOTATION] ?? '';
    if (annotated !== '') {
      try {
        const node = await this.core.readNode({ name: annotated }, withSignal(signal));
        if (agrees(node)) return annotated;
        const message =
          `the annotation ${SELECTED_NODE_ANNOTATION}=${annotated} of volume ${pvName} disagrees with its node affinity ` +
          `${term.key} In [${term.value}]; the node affinity is used`;
        this.logger.warn({ pv: pvName }, message);
        this.options.warn?.(volume, message, VOLUME_NODE_MISMATCH);
      } catch (err) {
        if (!isNotFound(err))
          this.logger.warn({ pv: pvName, err: describeError(err) }, `Cannot read node ${annotated}`);
      }
    }
    try {
      const nodes = await this.core.listNode({ labelSelector: `${term.key}=${term.value}` }, withSignal(signal));
      const matching = nodes.items.filter(agrees);
      if (matching.length === 1) return matching[0]!.metadata?.name ?? term.value;
      if (matching.length > 1) {
        throw new Error(
          `volume ${pvName}: ${matching.length} nodes match its node affinity ${term.key} In [${term.value}] and its ${SELECTED_NODE_ANNOTATION} annotation names none of them; cannot tell which node holds it`,
        );
      }
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(`volume ${pvName}:`)) throw err;
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
        throw new ProvisioningError(`selected node ${name} does not exist; rescheduling`, {
          state: ProvisioningState.Reschedule,
          cause: err,
        });
      }
      throw new Error(`failed to get target node: ${describeError(err)}`, { cause: err });
    }
  }

  private helperPod(
    action: HelperPodAction,
    inputs: Pick<
      Parameters<typeof buildHelperPod>[0],
      'pvName' | 'path' | 'node' | 'shared' | 'sizeBytes' | 'volumeMode' | 'user' | 'group' | 'perm' | 'basePath'
    >,
    record: HelperPodRecord,
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
      ...recordOf(record),
    });
  }

  private async runHelper(
    action: HelperPodAction,
    pvName: string,
    pod: V1Pod,
    signal: AbortSignal,
    keepOnSuccess = false,
  ): Promise<void> {
    const timeoutSeconds = this.options.config()?.cmdTimeoutSeconds ?? 120;
    try {
      await this.runner.run({ pod, timeoutSeconds, signal, keepOnSuccess });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`failed to ${action} volume ${pvName}: ${describeError(err)}`, { cause: err });
    }
  }
}

/** The parent of a clean absolute path. */
function dirnameOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}
