/**
 * Volume directories made and removed in-process, for node mode: the semantics of upstream's `setup` and `teardown`
 * scripts (`mkdir -m 0777 -p`, `rm -rf`), behind the path guard of `volume/path-guard.ts` (the walk a helper pod's
 * prologue runs), so a path through a symbolic link below the base path is refused whatever runs after it.
 *
 * Paths are node paths (as in the config and the PV); `hostRoot` is where the node's root file system is seen by
 * this process (`""` when the base paths are mounted at the same paths).
 *
 * @module
 */
import { constants } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { guardVolumePath } from '../../volume/path-guard.js';
import { cleanPath } from '../../volume/path-pattern.js';

export { VolumeDirRefusedError } from '../../volume/path-guard.js';

/** Where a node path is for this process. */
export function onHost(hostRoot: string, nodePath: string): string {
  return hostRoot === '' ? nodePath : path.join(hostRoot, nodePath);
}

/**
 * The checks before a volume directory `dir` (a node path below `base`) is made, by {@link createVolumeDir} or a
 * setup script: the base path is created when missing (as the helper pod's `DirectoryOrCreate` mount does); then the
 * path guard's walk, which makes the missing parents of `dir` one at a time and refuses a component below the base
 * path that is a symbolic link or not a directory (a link left in a retained volume, say, cannot send the volume
 * elsewhere). Resolves with whether `dir` exists already.
 */
export async function checkVolumeDirCreate(hostRoot: string, base: string, dir: string): Promise<boolean> {
  const cleanBase = cleanPath(base);
  await mkdir(onHost(hostRoot, cleanBase), { recursive: true, mode: 0o755 });
  return guardVolumePath({ hostRoot, base: cleanBase, dir: cleanPath(dir), make: true });
}

/**
 * Creates the volume directory `dir` (a node path below `base`) with mode 0777, as `mkdir -m 0777 -p`, after the
 * checks of {@link checkVolumeDirCreate}.
 */
export async function createVolumeDir(hostRoot: string, base: string, dir: string): Promise<void> {
  await checkVolumeDirCreate(hostRoot, base, dir);
  const target = onHost(hostRoot, cleanPath(dir));
  try {
    await mkdir(target, { mode: 0o777 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // What is there now must be a directory (a link put in its place is refused by name), and the mode goes through a
  // descriptor opened without following a link: the umask applies to mkdir's mode.
  await checkVolumeDirRemove(hostRoot, base, dir);
  const handle = await open(target, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await handle.chmod(0o777);
  } finally {
    await handle.close();
  }
}

/**
 * The checks before the volume directory `dir` (a node path below `base`) is removed, by {@link removeVolumeDir} or
 * a teardown script: the path guard's walk, which refuses a component below the base path (the directory itself
 * included) that is a symbolic link or not a directory. Resolves with whether `dir` exists.
 */
export async function checkVolumeDirRemove(hostRoot: string, base: string, dir: string): Promise<boolean> {
  return guardVolumePath({ hostRoot, base: cleanPath(base), dir: cleanPath(dir) });
}

/**
 * Removes the volume directory `dir` (a node path below `base`) and everything in it, as `rm -rf`, after the checks
 * of {@link checkVolumeDirRemove}; nothing to do when it is gone.
 */
export async function removeVolumeDir(hostRoot: string, base: string, dir: string): Promise<void> {
  if (!(await checkVolumeDirRemove(hostRoot, base, dir))) return;
  await rm(onHost(hostRoot, cleanPath(dir)), { recursive: true, force: true });
}
