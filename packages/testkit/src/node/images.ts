/**
 * The small images a node needs and that no registry gives here: the sandbox (pause) image from the static `pause`
 * binary beside the kubelet, and busybox from Debian's busybox-static, for helper and test pods. Each is built with
 * buildah from scratch (no daemon) into an OCI archive that `ctr images import` names as the image, and kept in a
 * cache folder keyed by the binary's content, so that it is built once per machine.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { run, runQuietly } from './command.js';

/** The sandbox image name the node's containerd is set up with. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The busybox image's name: what `image: busybox` and local-path's helper pod template resolve to. */
export const BUSYBOX_IMAGE = 'docker.io/library/busybox:latest';
/** Where Debian's busybox-static puts its binary. */
export const BUSYBOX_BINARY = '/bin/busybox';

/** Bumped when the way an image is built changes, so that cached archives are built again. */
const RECIPE = 1;

/** One image built from scratch around one static binary. */
interface ScratchImage {
  /** The image's name in the archive. */
  name: string;
  /** The static binary, and where it goes in the image. */
  binary: string;
  at: string;
  /** The image's entrypoint. Default none. */
  entrypoint?: readonly string[];
  /** The image's default command. Default none. */
  cmd?: readonly string[];
  /** A command run inside the image after the binary is copied (busybox installing its links). Default none. */
  run?: readonly string[];
}

/** The folder of cached images: `$XDG_CACHE_HOME/kprov/images`, default `~/.cache/kprov/images`. */
export function imageCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache');
  return path.join(base, 'kprov', 'images');
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Builds `image` into the OCI archive `file` (written whole or not at all: a temporary file renamed into place, so
 * that a parallel build never leaves a half-written archive).
 */
async function buildScratchImage(image: ScratchImage, file: string): Promise<void> {
  const container = (await run('buildah', ['from', '--quiet', 'scratch'])).trim();
  let id: string | undefined;
  try {
    await run('buildah', ['copy', '--quiet', '--chmod', '0755', container, image.binary, image.at]);
    if (image.entrypoint !== undefined)
      await run('buildah', ['config', '--entrypoint', JSON.stringify(image.entrypoint), container]);
    if (image.cmd !== undefined) await run('buildah', ['config', '--cmd', JSON.stringify(image.cmd), container]);
    if (image.run !== undefined) await run('buildah', ['run', '--isolation', 'chroot', container, ...image.run]);
    id = (await run('buildah', ['commit', '--quiet', container])).trim();
    const tmp = `${file}.${process.pid}.tmp`;
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await run('buildah', ['push', '--quiet', id, `oci-archive:${tmp}:${image.name}`]);
      await rename(tmp, file);
    } finally {
      await rm(tmp, { force: true });
    }
  } finally {
    await runQuietly('buildah', ['rm', container]);
    if (id !== undefined) await runQuietly('buildah', ['rmi', id]);
  }
}

/** The cached archive of `image`, built first when missing. */
async function cachedScratchImage(image: ScratchImage, label: string): Promise<string> {
  if (!existsSync(image.binary)) throw new Error(`${image.binary} not found: it is needed for the ${label} image`);
  const key = (await sha256(image.binary)).slice(0, 16);
  const file = path.join(imageCacheDir(), `${label}-${key}-r${RECIPE}.oci.tar`);
  if (!existsSync(file)) {
    try {
      await buildScratchImage(image, file);
    } catch (err) {
      throw new Error(`building the ${label} image (${image.name}) from ${image.binary} with buildah failed`, {
        cause: err,
      });
    }
  }
  return file;
}

/** The sandbox image ({@link PAUSE_IMAGE}) from the static `pause` binary in `binDir`, as a cached OCI archive. */
export function pauseImage(binDir: string): Promise<string> {
  return cachedScratchImage(
    { name: PAUSE_IMAGE, binary: path.join(binDir, 'pause'), at: '/pause', entrypoint: ['/pause'] },
    'pause',
  );
}

/**
 * A busybox image ({@link BUSYBOX_IMAGE}: `sh`, `mkdir`, `rm` and the rest as links in `/bin`) from Debian's
 * busybox-static ({@link BUSYBOX_BINARY}), as a cached OCI archive.
 *
 * @throws Error when the binary is missing or is not static (Debian's plain `busybox` package is dynamic).
 */
export function busyboxImage(): Promise<string> {
  return cachedScratchImage(
    {
      name: BUSYBOX_IMAGE,
      binary: BUSYBOX_BINARY,
      at: '/bin/busybox',
      run: ['/bin/busybox', '--install', '-s', '/bin'],
      cmd: ['sh'],
    },
    'busybox',
  ).catch((err: unknown) => {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)} (is busybox-static installed? apt-get install busybox-static)`,
      { cause: err },
    );
  });
}
