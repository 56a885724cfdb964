/**
 * The size of the file system holding a node path, measured in-process (node mode): `statfs` of the path, or of
 * its nearest existing parent when the path is not made yet.
 *
 * @module
 */
import { lstat, statfs } from 'node:fs/promises';
import path from 'node:path';
import type { FileSystemSize } from '../executor.js';
import { onHost } from './node-dirs.js';

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * `statfs` of `nodePath` as this process sees it below `hostRoot` (`""`: at its own path), or of its nearest
 * existing parent: block size × blocks, and block size × blocks available to unprivileged users.
 */
export async function measureFileSystem(hostRoot: string, nodePath: string): Promise<FileSystemSize> {
  let p = path.posix.normalize(nodePath);
  while (p !== '/' && !(await exists(onHost(hostRoot, p)))) p = path.posix.dirname(p);
  const info = await statfs(onHost(hostRoot, p), { bigint: true });
  return { size: info.bsize * info.blocks, free: info.bsize * info.bavail };
}
