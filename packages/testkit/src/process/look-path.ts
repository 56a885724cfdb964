/**
 * Go's `exec.LookPath` for one name: the first executable regular file of that name in the folders of `PATH`.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** Whether `file` is a regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of the first executable regular file named `name` in the folders of `env.PATH`, in order; `undefined`
 * when there is none. An empty `PATH` entry is the current folder, as a shell reads it.
 */
export function lookPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    const file = path.resolve(dir === '' ? '.' : dir, name);
    if (isExecutable(file)) return file;
  }
  return undefined;
}
