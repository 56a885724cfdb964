// Where things are: the repository, and images/, where the archives and build logs go (git-ignored).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const OUT_DIR = join(REPO, 'images');
