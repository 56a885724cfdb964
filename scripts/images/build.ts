// Building a provisioner's image from the root Dockerfile, and writing an image to its OCI archive.
import { existsSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { capture, logged } from './exec.ts';
import { REPO } from './paths.ts';
import type { PackageImage } from './targets.ts';

/**
 * Builds the package's image with buildah, without a daemon, into buildah's storage. `--layers` keeps every step's
 * layer: the build stage and the start of the runtime stage do not depend on PACKAGE, so the second and third image
 * reuse them, and a later run reuses all that did not change.
 */
export async function buildPackageImage(image: PackageImage, base: string, log: string): Promise<void> {
  await rm(log, { force: true });
  await logged(
    'buildah',
    [
      'bud',
      '--isolation',
      'chroot',
      '--layers',
      // The base is pulled (or built) beforehand; a local one has no registry to ask.
      '--pull=false',
      // The Dockerfile copies only what it names; the ignore file keeps buildah from reading node_modules and dist.
      '--ignorefile',
      `packages/${image.name}/Dockerfile.dockerignore`,
      '--build-arg',
      `NODE_IMAGE=${base}`,
      '--build-arg',
      `PACKAGE=${image.name}`,
      ...caSecret(),
      '--tag',
      image.ref,
      '--file',
      'Dockerfile',
      '.',
    ],
    log,
    { cwd: REPO },
  );
}

/**
 * The CA certificates this machine has Node.js trust besides its own (NODE_EXTRA_CA_CERTS: a TLS-intercepting
 * proxy's), given to the build as the secret `build-ca`: the Dockerfile's npm and pnpm trust it, and it is mounted
 * only while those steps run, so no image layer holds it.
 */
function caSecret(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  return file !== undefined && file !== '' && existsSync(file) ? ['--secret', `id=build-ca,src=${file}`] : [];
}

/**
 * Writes the image to `file` as an OCI archive whose image is named `ref`: `ctr images import` and
 * `kind load image-archive` give it that name. Written beside and then renamed, so that a failed push leaves no
 * partial archive.
 */
export async function writeArchive(ref: string, file: string): Promise<number> {
  const partial = `${file}.partial`;
  await rm(partial, { force: true });
  await capture('buildah', ['push', '--quiet', ref, `oci-archive:${partial}:${ref}`]);
  await rename(partial, file);
  return (await stat(file)).size;
}

/** The image's size as buildah counts it: its layers, uncompressed. */
export async function imageSize(ref: string): Promise<string> {
  const out = await capture('buildah', ['images', '--format', '{{.Size}}', ref]);
  return out.trim().split('\n')[0] ?? '?';
}
