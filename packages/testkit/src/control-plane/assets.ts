/**
 * Where the control-plane binaries are: controller-runtime envtest's convention, the folder named by
 * `KUBEBUILDER_ASSETS`, so that assets installed with `setup-envtest use` work as they are.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The environment variable that names the folder of the control-plane binaries. */
export const ASSETS_ENV = 'KUBEBUILDER_ASSETS';

/** The binaries a control plane can run. */
export type Binary = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

/** The folder of the binaries: `dir` when given, else `$KUBEBUILDER_ASSETS`, else `undefined`. */
export function assetsDir(dir?: string): string | undefined {
  const d = dir ?? process.env[ASSETS_ENV];
  return d === undefined || d === '' ? undefined : path.resolve(d);
}

/**
 * The path of each binary needed, checked to be executable.
 *
 * @throws Error naming the folder, the binary missing and how to get it.
 */
export function findBinaries(dir: string | undefined, needed: readonly Binary[]): Record<Binary, string> {
  const folder = assetsDir(dir);
  if (folder === undefined) {
    throw new Error(
      `no folder of Kubernetes server binaries: pass binDir or set ${ASSETS_ENV} to a folder holding ${needed.join(', ')} ` +
        `(e.g. the folder printed by \`setup-envtest use -p path 1.32.x\`)`,
    );
  }
  const found = {} as Record<Binary, string>;
  for (const name of needed) {
    const file = path.join(folder, name);
    try {
      accessSync(file, constants.X_OK);
    } catch {
      const from = dir === undefined ? `${ASSETS_ENV}=${folder}` : folder;
      throw new Error(`${name} not found or not executable in ${from}: the folder must hold ${needed.join(', ')}`);
    }
    found[name] = file;
  }
  return found;
}
