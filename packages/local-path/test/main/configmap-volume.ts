/**
 * A directory laid out and updated as the kubelet does for a ConfigMap volume: the files live in a timestamped
 * directory, `..data` is a symlink to it, and each key is a symlink `<key> -> ..data/<key>`. An update writes a new
 * directory and renames a new `..data` symlink over the old one, so every key changes at once and the key symlinks
 * themselves never change.
 */
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

let generation = 0;

/** Writes `files` into `dir` as a ConfigMap volume update (the first call creates the layout). */
export async function publishConfigMapVolume(dir: string, files: Record<string, string>): Promise<void> {
  const stamp = `..${Date.now()}_${++generation}`;
  await mkdir(path.join(dir, stamp), { recursive: true });
  for (const [key, text] of Object.entries(files)) await writeFile(path.join(dir, stamp, key), text);
  const data = path.join(dir, '..data');
  const previous = await readlink(data).catch(() => undefined);
  await symlink(stamp, path.join(dir, '..data_tmp'));
  await rename(path.join(dir, '..data_tmp'), data);
  for (const key of Object.keys(files))
    await symlink(path.join('..data', key), path.join(dir, key)).catch(() => undefined);
  if (previous !== undefined) await rm(path.join(dir, previous), { recursive: true, force: true });
}
