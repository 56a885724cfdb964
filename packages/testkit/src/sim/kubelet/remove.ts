/**
 * Removing a pod's directory without blocking the event loop. `fs.promises.rm` with `recursive` finds its way by
 * failing (`rmdir` on a non-empty directory, `lstat` of every entry) and builds an Error for each failure, which
 * costs the thread more than the sync `rmSync` it replaces; reading each directory once and removing what it lists
 * (subdirectories and files concurrently) needs no failures on the way.
 */
import { readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes `dir` and everything under it, like `rm -rf`: nothing there is not an error, symbolic links are removed,
 * not followed. Rejects with the first error otherwise (e.g. EACCES), having removed what it could.
 */
export async function removeTree(dir: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') return unlinkIfThere(dir);
    throw err;
  }
  const results = await Promise.allSettled(
    entries.map(async (e) => {
      const p = path.join(dir, e.name);
      return e.isDirectory() ? removeTree(p) : unlinkIfThere(p);
    }),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  try {
    await rmdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

async function unlinkIfThere(p: string): Promise<void> {
  try {
    await unlink(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
