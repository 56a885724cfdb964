/**
 * Where the control-plane binaries are: controller-runtime envtest's convention, the folder named by
 * `KUBEBUILDER_ASSETS`, so that assets installed with `setup-envtest use` work as they are. Such a folder holds etcd,
 * kube-apiserver and kubectl only; kube-controller-manager and kube-scheduler come from the Kubernetes server tarball.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The environment variable that names the folder of the control-plane binaries. */
export const ASSETS_ENV = 'KUBEBUILDER_ASSETS';

/** The binaries a control plane can run. */
export type Binary = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

/** The binaries a control plane runs when the folder holds them; envtest's assets have neither. */
export type OptionalBinary = 'kube-controller-manager' | 'kube-scheduler';

/** What each optional binary does for a test, for the message when one is asked for and missing. */
const NEEDED_FOR: Record<OptionalBinary, { does: string; option: string }> = {
  'kube-controller-manager': {
    does: 'it binds claims to volumes (the PV binder), creates service accounts and their default one, collects garbage and runs the node lifecycle',
    option: 'controllerManager',
  },
  'kube-scheduler': { does: 'it assigns pods to nodes', option: 'scheduler' },
};

/** The folder of the binaries: `dir` when given, else `$KUBEBUILDER_ASSETS`, else `undefined`. */
export function assetsDir(dir?: string): string | undefined {
  const d = dir ?? process.env[ASSETS_ENV];
  return d === undefined || d === '' ? undefined : path.resolve(d);
}

/** Whether `file` exists and may be executed. */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** How the folder was named, for messages: `KUBEBUILDER_ASSETS=<folder>` when it came from the environment. */
function folderName(dir: string | undefined, folder: string): string {
  return dir === undefined ? `${ASSETS_ENV}=${folder}` : folder;
}

/**
 * The path of each binary needed, checked to be executable.
 *
 * @throws Error naming the folder, the binary missing and how to get it.
 */
export function findBinaries<B extends Binary>(dir: string | undefined, needed: readonly B[]): Record<B, string> {
  const folder = assetsDir(dir);
  if (folder === undefined) {
    throw new Error(
      `no folder of Kubernetes server binaries: pass binDir or set ${ASSETS_ENV} to a folder holding ${needed.join(', ')} ` +
        `(e.g. the folder printed by \`setup-envtest use -p path 1.32.x\`)`,
    );
  }
  const found = {} as Record<B, string>;
  for (const name of needed) {
    const file = path.join(folder, name);
    if (!executable(file))
      throw new Error(
        `${name} not found or not executable in ${folderName(dir, folder)}: the folder must hold ${needed.join(', ')}`,
      );
    found[name] = file;
  }
  return found;
}

/** The path of an optional binary in the folder when it is there and executable, else `undefined`. */
export function optionalBinary(dir: string | undefined, name: OptionalBinary): string | undefined {
  const folder = assetsDir(dir);
  if (folder === undefined) return undefined;
  const file = path.join(folder, name);
  return executable(file) ? file : undefined;
}

/** `v1.32.13` as kube-apiserver says it, or `undefined` when it cannot say (it is only asked for a message). */
function apiServerVersion(folder: string): string | undefined {
  try {
    const out = execFileSync(path.join(folder, 'kube-apiserver'), ['--version'], { encoding: 'utf8', timeout: 10_000 });
    return /v\d+\.\d+\.\d+/.exec(out)?.[0];
  } catch {
    return undefined;
  }
}

/**
 * The error for an optional binary asked for (`controllerManager: true`, `scheduler: true`) that the folder lacks:
 * what it is needed for and where to get it (setup-envtest does not have it).
 */
export function missingOptionalBinary(dir: string | undefined, name: OptionalBinary): Error {
  const folder = assetsDir(dir) ?? '(no folder)';
  const version = assetsDir(dir) === undefined ? undefined : apiServerVersion(folder);
  const v = version ?? 'v<version of your kube-apiserver>';
  const { does, option } = NEEDED_FOR[name];
  return new Error(
    `${name} not found or not executable in ${folderName(dir, folder)}, but ${option}: true asks for it (${does}). ` +
      `setup-envtest's assets have only etcd, kube-apiserver and kubectl: take kubernetes/server/bin/${name} from the ` +
      `Kubernetes server tarball, https://dl.k8s.io/${v}/kubernetes-server-linux-amd64.tar.gz, into that folder, ` +
      `or leave ${option} unset to run without it`,
  );
}
