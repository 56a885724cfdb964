/**
 * What makes and removes the volume directories: a {@link VolumeExecutor}, chosen once when the provisioner is made
 * (helper pods on the nodes, or in-process on this node in node mode), with the {@link VolumeScope} it brings: which
 * claims and volumes are its own. The provisioner runs every claim and every PV through the same steps whatever the
 * executor is; nothing else asks which one it is.
 *
 * @module
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { StorageMode } from '../config/index.js';
import type { VolumeType } from '../volume/parameters.js';
import { cleanPath } from '../volume/path-pattern.js';
import type { ClaimIdentity } from '../volume/teardown-guard.js';
import type { ScriptInputs } from './script.js';

/** A volume directory and what it is for: what an executor records so that a crash can be finished. */
export interface VolumeRecord {
  readonly pvName: string;
  /** The claim the volume is for; `undefined` when its PV names none. */
  readonly claim: ClaimIdentity | undefined;
  /** The volume directory (a node path, or a path on the shared file system). */
  readonly path: string;
  /** The node it is on; `""` on a shared file system. */
  readonly node: string;
  /** The StorageClass of the claim. */
  readonly storageClassName: string;
}

/** A volume directory to make or remove, with the inputs of its script. */
export interface VolumeDirectory extends VolumeRecord, ScriptInputs {
  /**
   * The base path of the config the volume was placed in. A `pathPattern` allowed to be unsafe may leave it: then
   * the executor works in the volume's parent directory instead, as upstream does.
   */
  readonly basePath: string;
  /** Whether the class uses `sharedFileSystemPath` (then `node` may be empty). */
  readonly shared: boolean;
}

/** A volume directory to make: its claim is known. */
export interface VolumeSetup extends VolumeDirectory {
  readonly claim: ClaimIdentity;
}

/**
 * Makes and removes volume directories. Errors are the operation's (`failed to create volume <pv>: ...`), except when
 * `signal` aborted: then the signal's reason.
 */
export interface VolumeExecutor {
  /** Which claims and volumes are this executor's. */
  readonly scope: VolumeScope;
  /**
   * Makes the directory, keeping a record of it until {@link VolumeExecutor.saved} (a crash in between leaves the
   * record for the orphan reconciler). A failed setup leaves no directory it made.
   */
  setUp(setup: VolumeSetup, signal: AbortSignal): Promise<void>;
  /** Removes a directory that passed the teardown checks. */
  tearDown(teardown: VolumeDirectory, signal: AbortSignal): Promise<void>;
  /** The PV of a volume set up here was saved: its record goes. */
  saved(pvName: string): Promise<void>;
  /**
   * Whether an operation of this process is on the volume, or its PV waits to be saved (for at most
   * `UNSAVED_GRACE_MS`): the orphan reconciler then leaves it alone.
   */
  isBusy(pvName: string): boolean;
}

/**
 * Which claims and PVs a provisioner handles, and what it writes on its PVs: every one (one provisioner for the
 * cluster, {@link EVERY_NODE}), or those of one node (node mode, one provisioner per node). Each check throws
 * `IgnoredError` for what is another provisioner's (no event), and an error with an event for what cannot be made.
 */
export interface VolumeScope {
  /** The controller's qualifier: whether the claim is this provisioner's to provision (or to refuse). */
  shouldProvision(claim: V1PersistentVolumeClaim): boolean;
  /** Refuses a claim by its selected node (`""`: none, Immediate binding), before anything is read. */
  checkSelectedNode(selectedNodeName: string, className: string): void;
  /** Refuses a claim of a class whose storage mode this provisioner does not make. */
  checkStorage(mode: StorageMode, className: string): void;
  /** The volume type of a new PV, `requested` being the one its claim and class ask for. */
  volumeType(requested: VolumeType, claim: V1PersistentVolumeClaim, storageClass: V1StorageClass): VolumeType;
  /** Annotations a new PV on `nodeName` gets beside the provisioner's. */
  annotations(nodeName: string): Record<string, string>;
  /**
   * Refuses a PV this provisioner does not delete. `pvNameFolder`: the PV's directory may be named after the PV alone
   * (a volume of kuttiproject/provisioner-localvolume).
   */
  checkVolume(volume: V1PersistentVolume): { pvNameFolder: boolean };
  /** Refuses a PV of a class whose storage mode this provisioner does not delete. */
  checkVolumeStorage(pvName: string, mode: StorageMode): void;
  /**
   * Once the node holding a PV is known: refuses another node's. True when the node is looked up first (a node that
   * no longer exists skips the cleanup); false when it is this provisioner's own node.
   */
  checkVolumeNode(pvName: string, nodeName: string): boolean;
}

/** The scope of a provisioner for the whole cluster: every claim and every PV of its name, on any node. */
export const EVERY_NODE: VolumeScope = Object.freeze({
  shouldProvision: () => true,
  checkSelectedNode: () => undefined,
  checkStorage: () => undefined,
  volumeType: (requested: VolumeType) => requested,
  annotations: () => ({}),
  checkVolume: () => ({ pvNameFolder: false }),
  checkVolumeStorage: () => undefined,
  checkVolumeNode: () => true,
});

/**
 * What the orphan reconcilers need of the provisioner: its executor, and the teardown of a directory whose claim and
 * PV are gone, with the checks of a PV deletion (it throws `TeardownRefusedError` for a path they refuse).
 */
export interface OrphanTeardown {
  readonly executor: VolumeExecutor;
  teardownOrphan(record: VolumeRecord, signal: AbortSignal): Promise<void>;
}

/** The base path when the volume lies strictly inside it; `undefined` when an unsafe pattern left it. */
export function baseHolding(path: string, basePath: string): string | undefined {
  return path.startsWith(`${cleanPath(basePath)}/`) ? basePath : undefined;
}

/** A file system's size and the space still free for unprivileged users, in bytes. */
export interface FileSystemSize {
  /** Block size × blocks. */
  readonly size: bigint;
  /** Block size × blocks available to unprivileged users. */
  readonly free: bigint;
}
