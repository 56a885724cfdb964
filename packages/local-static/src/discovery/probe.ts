/**
 * What a path in a discovery directory is (a directory, a block device, or neither), and its size.
 *
 * @module
 */
import { lstat, readFile, stat, statfs } from '../fs/async.js';
import type { VolumeMode } from '../config/config.js';

/** Where sysfs is mounted, for the size of block devices. */
export const DEFAULT_SYSFS = '/sys';

/**
 * The mode a path is used in: `Filesystem` for a directory, `Block` for a block device (a symlink to one counts), or
 * an error naming the path when it is neither (a regular file, a socket, a dangling symlink).
 */
export async function pathMode(path: string): Promise<VolumeMode> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw new Error(`Directory check for "${path}" failed: ${(err as Error).message}`, { cause: err });
  }
  if (info.isDirectory()) return 'Filesystem';
  if (info.isBlockDevice()) return 'Block';
  throw new Error(`Skipping file "${path}": not a directory nor block device`);
}

/** The total size of the filesystem mounted at `path` (statfs: blocks × block size), in bytes. */
export async function filesystemCapacity(path: string): Promise<bigint> {
  const fs = await statfs(path, { bigint: true });
  return fs.blocks * fs.bsize;
}

/** Linux's `major()` and `minor()` of a device number. */
function deviceNumbers(rdev: bigint): { major: bigint; minor: bigint } {
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  return { major, minor };
}

/**
 * The size of the block device at `path` (a symlink to one is followed), in bytes: `/sys/dev/block/<major>:<minor>/size`
 * (in 512-byte sectors, whatever the device's block size), which is what the `BLKGETSIZE64` ioctl reports.
 */
export async function blockDeviceCapacity(path: string, sysfs: string = DEFAULT_SYSFS): Promise<bigint> {
  const info = await stat(path, { bigint: true });
  if (!info.isBlockDevice()) throw new Error(`"${path}" is not a block device`);
  const { major, minor } = deviceNumbers(info.rdev);
  const text = await readFile(`${sysfs}/dev/block/${major}:${minor}/size`, 'utf8');
  return BigInt(text.trim()) * 512n;
}

/** Whether `path` itself is a symbolic link (not followed). */
export async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
