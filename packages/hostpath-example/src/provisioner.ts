/**
 * The hostPath provisioner of the classic "writing an out-of-tree dynamic provisioner" guide: each claim gets a
 * directory `<pvDir>/<pv name>` on this node, served as a hostPath PV.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import {
  describeError,
  IgnoredError,
  InfeasibleError,
  silentLogger,
  type Logger,
  type ProvisionOptions,
  type ProvisionResult,
  type Provisioner,
} from '@kprov/provisioner-lib';

/** The PV annotation naming the node whose provisioner created the directory (the Go example's key). */
export const IDENTITY_ANNOTATION = 'hostPathProvisionerIdentity';

/** Default directory, as the node sees it, under which volumes are created (the Go example's). */
export const DEFAULT_PV_DIR = '/tmp/hostpath-provisioner';

/** Options of {@link HostPathProvisioner}. */
export interface HostPathProvisionerOptions {
  /** Absolute directory, as the node sees it, holding one directory per volume. Default `/tmp/hostpath-provisioner`. */
  pvDir?: string;
  /** This provisioner's identity: the node name. Written to every PV; only PVs carrying it are deleted. */
  identity: string;
  /**
   * Where this process sees the node's root filesystem: `/` when running on the node itself, `/host` in a pod
   * that mounts the node's `/` there, a simulated node's root directory in tests. Default `/`.
   */
  hostRoot?: string;
  /** Where to log. Default: discarded. */
  logger?: Logger;
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

/**
 * Creates a `0777` directory per claim under `pvDir` on this node and returns a hostPath PV for it, annotated with
 * {@link IDENTITY_ANNOTATION}; deletes the directory of PVs carrying this node's identity and ignores the others.
 *
 * The PV's hostPath type is `Directory`: the provisioner has created the directory before the PV exists, so the
 * kubelet's check only fails when the directory is gone (lost with `/tmp`, or a pod scheduled onto another node),
 * and then the pod reports a mount error instead of silently getting a new, empty directory.
 */
export class HostPathProvisioner implements Provisioner {
  /** Absolute directory, as the node sees it, under which volumes live. */
  readonly pvDir: string;
  /** The node name this provisioner runs for. */
  readonly identity: string;
  /** Where the node's root filesystem is seen by this process. */
  readonly hostRoot: string;
  private readonly logger: Logger;

  constructor(options: HostPathProvisionerOptions) {
    const pvDir = options.pvDir ?? DEFAULT_PV_DIR;
    const hostRoot = options.hostRoot ?? '/';
    if (!path.posix.isAbsolute(pvDir))
      throw new TypeError(`HostPathProvisioner: pvDir must be an absolute path, got "${pvDir}"`);
    if (path.posix.normalize(pvDir) === '/') throw new TypeError('HostPathProvisioner: pvDir must not be "/"');
    if (!path.isAbsolute(hostRoot))
      throw new TypeError(`HostPathProvisioner: hostRoot must be an absolute path, got "${hostRoot}"`);
    if (options.identity === '') throw new TypeError('HostPathProvisioner: identity (the node name) is required');
    this.pvDir = path.posix.normalize(pvDir).replace(/\/$/, '');
    this.identity = options.identity;
    this.hostRoot = path.resolve(hostRoot);
    this.logger = (options.logger ?? silentLogger).child({ node: this.identity });
  }

  /** Where this process sees the node path `nodePath`. */
  localPath(nodePath: string): string {
    return path.join(this.hostRoot, nodePath);
  }

  /** Creates the volume's directory (idempotent) and returns its PV. */
  async provision(options: ProvisionOptions): Promise<ProvisionResult> {
    const { pvName, pvc, storageClass } = options;
    const unknown = Object.keys(storageClass.parameters ?? {}).sort();
    if (unknown.length > 0) {
      const noun = unknown.length === 1 ? 'parameter' : 'parameters';
      // Infeasible: the class cannot change, so retrying soon is pointless.
      throw new InfeasibleError(
        `unknown StorageClass ${noun} ${quoteList(unknown)}: the hostPath provisioner takes no parameters`,
      );
    }
    if (pvName === '' || pvName === '.' || pvName === '..' || pvName.includes('/')) {
      throw new Error(`PV name "${pvName}" cannot be used as a directory name`);
    }
    const storage = pvc.spec?.resources?.requests?.storage;
    if (storage === undefined) throw new Error('the claim requests no storage (spec.resources.requests.storage)');

    const nodePath = path.posix.join(this.pvDir, pvName);
    await this.createDirectory(nodePath);
    this.logger.info({ pv: pvName, path: nodePath }, 'Created volume directory');
    const volume: V1PersistentVolume = {
      metadata: { name: pvName, annotations: { [IDENTITY_ANNOTATION]: this.identity } },
      spec: {
        persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
        accessModes: pvc.spec?.accessModes ?? [],
        capacity: { storage },
        hostPath: { path: nodePath, type: 'Directory' },
      },
    };
    return { volume };
  }

  /** mkdir + chmod 0777 (the umask would narrow mkdir's mode); on failure removes whatever it created. */
  private async createDirectory(nodePath: string): Promise<void> {
    const local = this.localPath(nodePath);
    let created: string | undefined;
    try {
      created = await mkdir(local, { recursive: true, mode: 0o777 });
      await chmod(local, 0o777);
    } catch (err) {
      if (created !== undefined) await rm(created, { recursive: true, force: true }).catch(() => undefined);
      const where = local === nodePath ? `"${nodePath}"` : `"${nodePath}" (at "${local}" in this process)`;
      throw new Error(
        `cannot create volume directory ${where}: ${describeError(err)}; ` +
          `make sure the PV directory "${this.pvDir}" (--pv-dir, PV_DIR) is, or can be created as, a writable directory on the node`,
        { cause: err },
      );
    }
  }

  /** Removes the directory of a PV this node provisioned; another node's PV is ignored. */
  async delete(volume: V1PersistentVolume): Promise<void> {
    const name = volume.metadata?.name ?? '';
    const identity = volume.metadata?.annotations?.[IDENTITY_ANNOTATION];
    if (identity === undefined) throw new Error('identity annotation not found on PV');
    if (identity !== this.identity) throw new IgnoredError('identity annotation on PV does not match ours');
    const nodePath = volume.spec?.hostPath?.path;
    if (nodePath === undefined) throw new Error(`PV ${name} has no hostPath`);
    // Only a directory directly inside pvDir is ever removed, whatever the PV says.
    const normalized = path.posix.resolve('/', nodePath);
    if (path.posix.dirname(normalized) !== this.pvDir || nodePath !== normalized) {
      throw new Error(
        `refusing to delete "${nodePath}" of PV ${name}: it is not a directory directly inside the PV directory "${this.pvDir}"`,
      );
    }
    await rm(this.localPath(normalized), { recursive: true, force: true });
    this.logger.info({ pv: name, path: normalized }, 'Deleted volume directory');
  }
}
