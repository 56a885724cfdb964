// The images `pnpm images` builds. Each is written to images/<name>.oci.tar, named in it as `ref`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUSYBOX_IMAGE, busyboxImage } from '@kprov/testkit';
import { REPO } from './paths.ts';

/** A provisioner's image, built from the root Dockerfile with PACKAGE=<name>. */
export interface PackageImage {
  kind: 'package';
  /** The folder under packages/ (the Dockerfile's PACKAGE). */
  name: string;
  /** The name the package's manifests and charts give the image: ghcr.io/kprov/<name>:<its package.json version>. */
  ref: string;
  /**
   * The manifests its documentation installs it with (`kubectl apply -f`), under packages/<name>/: the start-up time
   * is measured as the container of the workload in them that runs the image, with their other objects created.
   */
  install: string[];
}

/** An image the testkit builds (into an OCI archive it caches) rather than the Dockerfile; copied, not measured. */
export interface HelperImage {
  kind: 'helper';
  name: string;
  ref: string;
  /** Builds the image, or finds it built, and returns its OCI archive, which names it `ref`. */
  archive(): Promise<string>;
}

export type Target = PackageImage | HelperImage;

function packageImage(name: string, install: string[]): PackageImage {
  const { version } = JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { kind: 'package', name, ref: `ghcr.io/kprov/${name}:${version}`, install };
}

export const PACKAGE_IMAGES: PackageImage[] = [
  packageImage('local-path', ['deploy/local-path-storage.yaml']),
  packageImage('local-static', [
    'deploy/configmap.yaml',
    'deploy/daemonset.yaml',
    'deploy/rbac.yaml',
    'deploy/storageclass.yaml',
  ]),
  packageImage('hostpath-example', ['deploy/rbac.yaml', 'deploy/deployment.yaml']),
];

/**
 * The images the provisioners' pods start besides their own: busybox, which local-path's helper pods run (named as
 * deploy/local-path-storage.yaml's helper pod template names it), from Debian's busybox-static, as the node tier
 * builds it (@kprov/testkit's `busyboxImage`), so that a cluster that cannot pull it can be given it too.
 */
export const HELPER_IMAGES: HelperImage[] = [
  { kind: 'helper', name: 'busybox', ref: BUSYBOX_IMAGE, archive: busyboxImage },
];

export const TARGETS: Target[] = [...PACKAGE_IMAGES, ...HELPER_IMAGES];
