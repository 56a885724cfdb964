/**
 * What a teardown may remove. Anyone allowed to create PersistentVolumes can create one that names this provisioner
 * (`pv.kubernetes.io/provisioned-by`), points `hostPath.path` at any directory, has reclaim policy Delete and a
 * `claimRef` to a claim that does not exist: the PV controller marks it Released at once, and upstream then runs
 * teardown (`rm -rf`) on that path, which may be the parent of a bound claim's volume. {@link checkTeardownTarget}
 * accepts only a directory this provisioner could have created for that PV:
 *
 * - a clean absolute path without control characters, strictly inside one of the base paths the config gives the
 *   PV's node and class (never a base path itself);
 * - below that base path, the folder the PV and its claim produce: `<pv>_<namespace>_<claim>`, or, when the
 *   StorageClass has a `pathPattern`, what that pattern can produce for the claim (under `<namespace>/<claim>` in
 *   safe mode; in unsafe mode exactly the pattern rendered from the PV name and the claim's name, namespace and uid;
 *   when the class is gone or no longer parses, the default folder or the safe shape);
 * - not a parent of (nor the same as) another PV's path.
 *
 * @module
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { GoTemplateError } from './go-template.js';
import { hasControlCharacter } from './path-safety.js';
import { cleanPath, defaultFolderName, renderPattern, volumePath } from './path-pattern.js';

/** A teardown that was refused; `path` is the directory it would have removed. */
export class TeardownRefusedError extends Error {
  override readonly name = 'TeardownRefusedError';
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/** The claim a volume was made for (a PV's `claimRef`). */
export interface ClaimIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
}

/** Inputs of {@link checkTeardownTarget}. */
export interface TeardownTarget {
  readonly pvName: string;
  /** The directory to remove (the PV's `hostPath.path` or `local.path`). */
  readonly path: string;
  /** The base paths the config gives this node and class (in shared mode, `sharedFileSystemPath`). */
  readonly basePaths: readonly string[];
  /** The claim the volume was made for; `undefined` when the PV names none. */
  readonly claim: ClaimIdentity | undefined;
  /** The StorageClass `pathPattern`, when the class exists and has one. */
  readonly pathPattern?: string | undefined;
  /** The class's `allowUnsafePathPattern`. */
  readonly allowUnsafePathPattern?: boolean | undefined;
  /**
   * The PV's StorageClass is gone, or its parameters no longer parse, so whether it had a `pathPattern` cannot be
   * told: besides the default folder, what a safe pattern can produce for the claim (under `<namespace>/<claim>`) is
   * accepted, so that such volumes are still deleted. An unsafe pattern's folders cannot be told without the class.
   * Ignored when `pathPattern` is given. Default false.
   */
  readonly classUnknown?: boolean | undefined;
  /**
   * Also accept the folder named after the PV alone (`<base>/<pv name>`): the shape of the volumes of
   * kuttiproject/provisioner-localvolume, for the PVs it made. Default false.
   */
  readonly allowPvNameFolder?: boolean | undefined;
  /** The paths of every other PV. */
  readonly otherVolumes: readonly { readonly name: string; readonly path: string }[];
}

/** The path of a PV (`hostPath.path` or `local.path`), or `undefined`. */
export function pathOfVolume(volume: V1PersistentVolume): string | undefined {
  return volume.spec?.hostPath?.path ?? volume.spec?.local?.path;
}

/** The folders below a base path that this provisioner could have made for the PV; a function for pattern shapes. */
function expectedFolder(
  target: TeardownTarget,
  claim: ClaimIdentity,
): ((folder: string, base: string) => boolean) | string {
  const byName = defaultFolderName(target.pvName, claim.namespace, claim.name);
  const pattern = target.pathPattern;
  if (pattern === undefined && target.classUnknown !== true) return byName;
  if (pattern === undefined || target.allowUnsafePathPattern !== true) {
    const prefix = `${claim.namespace}/${claim.name}`;
    return (folder) => folder === byName || folder === prefix || folder.startsWith(`${prefix}/`);
  }
  let rendered: string | undefined;
  try {
    rendered = renderPattern(
      'pathPattern',
      pattern,
      { pvName: target.pvName, pvc: { namespace: claim.namespace, name: claim.name, uid: claim.uid } },
      'error',
    );
  } catch (err) {
    if (!(err instanceof GoTemplateError)) throw err;
  }
  return (folder, base) =>
    folder === byName || (rendered !== undefined && volumePath(base, rendered) === `${base}/${folder}`);
}

/**
 * The base path the teardown of `target.path` runs under. Throws a {@link TeardownRefusedError} naming the path and
 * the rule it breaks when the path is not one this provisioner could have created for the PV.
 */
export function checkTeardownTarget(target: TeardownTarget): string {
  const { path } = target;
  const refuse = (why: string): TeardownRefusedError =>
    new TeardownRefusedError(
      `refusing to remove ${JSON.stringify(path)} for volume ${target.pvName}: ${why}; the PV is kept and nothing was removed`,
      path,
    );
  if (hasControlCharacter(path)) throw refuse('the path contains a control character');
  if (!path.startsWith('/') || cleanPath(path) !== path) throw refuse('the path is not a clean absolute path');
  const bases = target.basePaths.map(cleanPath);
  if (bases.includes(path)) throw refuse('it is a base path of the config');
  const base = bases.find((b) => b !== '/' && path.startsWith(`${b}/`));
  if (base === undefined) {
    throw refuse(`it is not inside a base path configured for this node and class (${bases.join(', ') || 'none'})`);
  }
  const claim = target.claim;
  if (claim === undefined || claim.namespace === '' || claim.name === '')
    throw refuse('the PV names no claim (spec.claimRef), so no directory of it can be told');
  const folder = path.slice(base.length + 1);
  const expected = expectedFolder(target, claim);
  const matches =
    (target.allowPvNameFolder === true && folder === target.pvName) ||
    (typeof expected === 'string' ? folder === expected : expected(folder, base));
  if (!matches) {
    const shape =
      typeof expected === 'string'
        ? `${base}/${expected}`
        : target.allowUnsafePathPattern === true && target.pathPattern !== undefined
          ? `the StorageClass pathPattern rendered for claim ${claim.namespace}/${claim.name}`
          : `${base}/${claim.namespace}/${claim.name}[/...]`;
    throw refuse(`it is not the directory this provisioner makes for that PV and claim (${shape})`);
  }
  for (const other of target.otherVolumes) {
    if (other.name === target.pvName) continue;
    const p = cleanPath(other.path);
    if (p === path || p.startsWith(`${path}/`)) throw refuse(`it holds the volume of PV ${other.name} (${other.path})`);
  }
  return base;
}
