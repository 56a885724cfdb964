/**
 * The checks every teardown passes before anything is removed: `checkTeardownTarget` (volume/teardown-guard.ts) with
 * what it needs from the API and the config: the base paths of the node and class, the class's `pathPattern`, and
 * every PV's path (from the program's PV cache when it is complete, else listed).
 *
 * @module
 */
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import {
  IgnoredError,
  isNotFound,
  withSignal,
  type CoreV1Calls,
  type Logger,
  type StorageV1Calls,
} from '@kprov/provisioner-lib';
import { pathsForNode, storageModeOf, type StorageClassConfig } from '../config/index.js';
import { parseVolumeParameters } from '../volume/parameters.js';
import {
  checkTeardownTarget,
  pathOfVolume,
  TeardownRefusedError,
  type ClaimIdentity,
} from '../volume/teardown-guard.js';
import { VOLUME_DELETION_REFUSED, type VolumeWarning } from './warnings.js';

/** A directory about to be removed. */
export interface TeardownRequest {
  readonly pvName: string;
  readonly path: string;
  readonly classConfig: StorageClassConfig;
  readonly className: string;
  readonly nodeName: string;
  readonly claim: ClaimIdentity | undefined;
  /** Also the folder named after the PV alone (kutti's volumes). Default false. */
  readonly allowPvNameFolder?: boolean | undefined;
}

/** What {@link TeardownChecks} reads. */
export interface TeardownChecksOptions {
  readonly core: CoreV1Calls;
  readonly storage: StorageV1Calls;
  /** The PVs as a complete cache has them; `undefined` (or none given): listed from the API. */
  readonly volumes?: (() => Iterable<V1PersistentVolume> | undefined) | undefined;
  readonly logger: Logger;
  readonly warn?: VolumeWarning | undefined;
}

/** Runs the teardown checks; see the module. */
export class TeardownChecks {
  constructor(private readonly options: TeardownChecksOptions) {}

  /**
   * The checks of a PV's deletion: a refused path is logged, reported on the PV as a {@link VOLUME_DELETION_REFUSED}
   * Warning and ends the delete as an {@link IgnoredError}, so the PV is kept. Resolves with the claim the PV was
   * bound to and the base path the volume lies in.
   */
  async guard(
    volume: V1PersistentVolume,
    request: Omit<TeardownRequest, 'pvName' | 'claim'>,
    signal: AbortSignal,
  ): Promise<{ claim: ClaimIdentity | undefined; basePath: string }> {
    const pvName = volume.metadata?.name ?? '';
    const ref = volume.spec?.claimRef;
    const claim: ClaimIdentity | undefined =
      ref === undefined ? undefined : { namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid };
    try {
      return { claim, basePath: await this.basePath({ ...request, pvName, claim }, signal) };
    } catch (err) {
      if (!(err instanceof TeardownRefusedError)) throw err;
      this.options.logger.error({ pv: pvName, path: request.path }, err.message);
      this.options.warn?.(volume, err.message, VOLUME_DELETION_REFUSED);
      throw new IgnoredError(err.message);
    }
  }

  /**
   * {@link checkTeardownTarget} with the base paths of the node and class, the class's pattern and every PV's path.
   * Resolves with the base path the volume lies in; throws a {@link TeardownRefusedError} when the path is refused.
   */
  async basePath(request: TeardownRequest, signal: AbortSignal): Promise<string> {
    const { classConfig } = request;
    let basePaths: readonly string[];
    if (storageModeOf(classConfig) === 'shared') basePaths = [classConfig.sharedFileSystemPath];
    else {
      try {
        basePaths = pathsForNode(classConfig, request.nodeName).paths;
      } catch {
        basePaths = [];
      }
    }
    const storageClass = await this.readStorageClass(request.className, signal);
    let pathPattern: string | undefined;
    let allowUnsafePathPattern = false;
    // Upstream deletes without reading the class: a volume whose class was deleted first (or changed so that its
    // parameters no longer parse) is still deleted when it has the default folder or a safe pattern's shape.
    let classUnknown = storageClass === undefined;
    if (storageClass !== undefined) {
      try {
        const params = parseVolumeParameters({
          parameters: storageClass.parameters,
          storageClassAnnotations: storageClass.metadata?.annotations,
        });
        ({ pathPattern, allowUnsafePathPattern } = params);
      } catch {
        classUnknown = true;
      }
    }
    // The cache lags the API server by the time a watch event takes to arrive (milliseconds). A PV that would be
    // missed in that window was created just now with its path inside this volume's directory; PVs are created only
    // by cluster administrators and by this provisioner (always at a new directory), so that is not a realistic
    // threat. A PV deleted in that window is still seen, which can only refuse a removal, never allow one.
    const volumes =
      this.options.volumes?.() ?? (await this.options.core.listPersistentVolume({}, withSignal(signal))).items;
    const otherVolumes: { name: string; path: string }[] = [];
    for (const v of volumes) {
      const p = pathOfVolume(v);
      if (p !== undefined) otherVolumes.push({ name: v.metadata?.name ?? '', path: p });
    }
    return checkTeardownTarget({
      pvName: request.pvName,
      path: request.path,
      basePaths,
      claim: request.claim,
      pathPattern,
      allowUnsafePathPattern,
      classUnknown,
      allowPvNameFolder: request.allowPvNameFolder,
      otherVolumes,
    });
  }

  private async readStorageClass(name: string, signal: AbortSignal): Promise<V1StorageClass | undefined> {
    if (name === '') return undefined;
    try {
      return await this.options.storage.readStorageClass({ name }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
