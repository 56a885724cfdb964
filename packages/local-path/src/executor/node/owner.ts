/**
 * `userPattern`, `groupPattern` and `permPattern` applied in-process by node mode's built-in setup, as upstream's
 * setup script for them does (`chown "$VOL_USER:$VOL_GROUP" "$VOL_DIR"`, then `chmod "$VOL_PERM" "$VOL_DIR"`): a
 * numeric id is used as it is, a name is looked up in the node's `/etc/passwd` or `/etc/group` (below
 * `--host-root`); an empty value leaves that part as it is (the owner, the group, or mode 0777).
 *
 * @module
 */
import { chmod, chown, readFile, stat } from 'node:fs/promises';
import { applyFileMode } from './file-mode.js';
import { onHost } from './node-dirs.js';

/** The rendered values (`VOL_USER`, `VOL_GROUP`, `VOL_PERM`). */
export interface OwnerValues {
  readonly user: string;
  readonly group: string;
  readonly perm: string;
}

/** The id of `name` in a passwd or group file (`name:x:id:...`), or `undefined`. */
async function lookUp(file: string, name: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [entry, , id] = line.split(':');
    if (entry === name && id !== undefined && /^\d+$/.test(id)) return Number(id);
  }
  return undefined;
}

/** The id of a user or group given by id or name; -1 (unchanged) when empty. */
async function idOf(hostRoot: string, kind: 'user' | 'group', value: string): Promise<number> {
  if (value === '') return -1;
  if (/^\d+$/.test(value)) return Number(value);
  const file = onHost(hostRoot, kind === 'user' ? '/etc/passwd' : '/etc/group');
  const id = await lookUp(file, value);
  if (id === undefined) throw new Error(`${kind} ${JSON.stringify(value)} is not in ${file}`);
  return id;
}

/** Applies the owner, group and mode to `dir` (a path of this process); nothing when all three are empty. */
export async function applyOwner(hostRoot: string, dir: string, values: OwnerValues): Promise<void> {
  if (values.user !== '' || values.group !== '') {
    await chown(dir, await idOf(hostRoot, 'user', values.user), await idOf(hostRoot, 'group', values.group));
  }
  if (values.perm !== '') {
    const current = await stat(dir);
    await chmod(dir, applyFileMode(current.mode, values.perm, current.isDirectory()));
  }
}
