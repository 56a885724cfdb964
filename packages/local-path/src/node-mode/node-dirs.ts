/**
 * Volume directories made and removed in-process, for node mode: the same semantics as the `setup` and `teardown`
 * scripts of deploy/local-path-storage.yaml (`mkdir -m 0777 -p`, `rm -rf`), with their refusal of a path that goes
 * through a symbolic link below the base path.
 *
 * Paths are node paths (as in the config and the PV); `hostRoot` is where the node's root file system is seen by
 * this process (`""` when the base paths are mounted at the same paths).
 *
 * @module
 */
import { chmod, lstat, mkdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';

/** A directory operation refused because a path resolves somewhere else than it names. */
export class VolumeDirRefusedError extends Error {
  override readonly name = 'VolumeDirRefusedError';
}

/** Where a node path is for this process. */
export function onHost(hostRoot: string, nodePath: string): string {
  return hostRoot === '' ? nodePath : path.join(hostRoot, nodePath);
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function realOrEmpty(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return '';
  }
}

/** `dir` below `base` (both cleaned), or the error of a directory outside it. */
function below(base: string, dir: string): string {
  const b = path.posix.normalize(base);
  const d = path.posix.normalize(dir);
  if (!d.startsWith(`${b}/`)) throw new VolumeDirRefusedError(`refusing ${dir}: it is not below ${base}`);
  return d.slice(b.length);
}

/**
 * The checks before a volume directory `dir` (a node path below `base`) is made, by {@link createVolumeDir} or a
 * setup script: the base path is created when missing (as the helper pod's `DirectoryOrCreate` mount does); the
 * deepest existing part of `dir` must resolve to where it names below the resolved base path, so a symbolic link left
 * below the base path (in a retained volume, say) cannot send the volume elsewhere. Resolves with whether `dir`
 * exists already.
 */
export async function checkVolumeDirCreate(hostRoot: string, base: string, dir: string): Promise<boolean> {
  const rest = below(base, dir);
  const hostBase = onHost(hostRoot, path.posix.normalize(base));
  await mkdir(hostBase, { recursive: true, mode: 0o755 });
  const realBase = await realpath(hostBase);
  let existing = rest;
  while (existing !== '' && !(await exists(hostBase + existing))) existing = path.posix.dirname(existing);
  if (existing === '/') existing = '';
  const real = await realOrEmpty(hostBase + existing);
  if (real !== realBase + existing) {
    throw new VolumeDirRefusedError(`refusing ${dir}: ${base}${existing} resolves to ${real || 'nothing'}`);
  }
  return existing === rest && rest !== '';
}

/**
 * Creates the volume directory `dir` (a node path below `base`) with mode 0777, as `mkdir -m 0777 -p`, after the
 * checks of {@link checkVolumeDirCreate}.
 */
export async function createVolumeDir(hostRoot: string, base: string, dir: string): Promise<void> {
  await checkVolumeDirCreate(hostRoot, base, dir);
  const target = onHost(hostRoot, path.posix.normalize(base)) + below(base, dir);
  await mkdir(target, { recursive: true, mode: 0o777 });
  // The umask applies to mkdir's mode.
  await chmod(target, 0o777);
}

/**
 * The checks before the volume directory `dir` (a node path below `base`) is removed, by {@link removeVolumeDir} or
 * a teardown script: refused when `dir` resolves anywhere else than where it names below the resolved base path (a
 * symbolic link on the way, or the directory itself a link). Resolves with whether `dir` exists.
 */
export async function checkVolumeDirRemove(hostRoot: string, base: string, dir: string): Promise<boolean> {
  const rest = below(base, dir);
  const hostBase = onHost(hostRoot, path.posix.normalize(base));
  const target = hostBase + rest;
  if (!(await exists(target))) return false;
  const want = (await realOrEmpty(hostBase)) + rest;
  const real = await realOrEmpty(target);
  if (real !== want) throw new VolumeDirRefusedError(`refusing ${dir}: it resolves to ${real || 'nothing'}`);
  return true;
}

/**
 * Removes the volume directory `dir` (a node path below `base`) and everything in it, as `rm -rf`, after the checks
 * of {@link checkVolumeDirRemove}; nothing to do when it is gone.
 */
export async function removeVolumeDir(hostRoot: string, base: string, dir: string): Promise<void> {
  if (!(await checkVolumeDirRemove(hostRoot, base, dir))) return;
  await rm(onHost(hostRoot, path.posix.normalize(base)) + below(base, dir), { recursive: true, force: true });
}
