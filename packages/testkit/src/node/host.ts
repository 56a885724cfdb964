/**
 * What a machine needs to run a real node: root, the Kubernetes node binaries (kubelet, and the static pause
 * binary for the sandbox image) in the assets folder, and Debian's container runtime, CNI plugins and tools. Each
 * missing piece is named with the Debian package that brings it, so that one line says what to install.
 */
import path from 'node:path';
import { ASSETS_ENV, assetsDir } from '../control-plane/assets.js';
import { isExecutable, lookPath } from '../process/look-path.js';

/** Where Debian's containernetworking-plugins package puts the CNI plugins. */
export const CNI_BIN_DIR = '/usr/lib/cni';

/** The Debian packages a node needs, in the order an `apt-get install` line names them. */
export const NODE_PACKAGES = [
  'containerd',
  'runc',
  'containernetworking-plugins',
  'iptables',
  'iproute2',
  'buildah',
] as const;

/** Commands looked up on the PATH, with the Debian package of each. */
const COMMANDS: readonly (readonly [string, string])[] = [
  ['containerd', 'containerd'],
  ['containerd-shim-runc-v2', 'containerd'],
  ['ctr', 'containerd'],
  ['runc', 'runc'],
  ['iptables', 'iptables'],
  ['ip', 'iproute2'],
  ['buildah', 'buildah'],
  ['unshare', 'util-linux'],
  ['pivot_root', 'util-linux'],
  ['mount', 'mount'],
  ['umount', 'mount'],
];

/** CNI plugins the node's network uses. */
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'];

/** The path of `command` on the PATH or in the sbin folders (which a non-login PATH may lack), or `undefined`. */
function which(command: string): string | undefined {
  return lookPath(command, { PATH: [process.env.PATH ?? '', '/usr/local/sbin', '/usr/sbin', '/sbin'].join(':') });
}

/**
 * Why this machine cannot run a node, in one clause (`containerd, iptables not found (apt-get install containerd
 * iptables)`), or `undefined` when it can.
 *
 * @param binDir - folder of kubelet and pause; default `$KUBEBUILDER_ASSETS`.
 */
export function nodeHostMissing(binDir?: string): string | undefined {
  if (process.platform !== 'linux') return `a node runs on Linux only, this is ${process.platform}`;
  if (process.getuid?.() !== 0) return 'a node needs root (it mounts, and makes network interfaces and cgroups)';
  const dir = assetsDir(binDir);
  if (dir === undefined) return `${ASSETS_ENV} is not set (it names the folder of kubelet and pause)`;
  const binaries = ['kubelet', 'pause'].filter((b) => !isExecutable(path.join(dir, b)));
  if (binaries.length > 0) return `${dir} has no ${binaries.join(', ')}`;
  const missing: string[] = [];
  const packages = new Set<string>();
  for (const [command, pkg] of COMMANDS) {
    if (which(command) !== undefined) continue;
    missing.push(command);
    packages.add(pkg);
  }
  for (const plugin of CNI_PLUGINS) {
    if (isExecutable(path.join(CNI_BIN_DIR, plugin))) continue;
    missing.push(`${CNI_BIN_DIR}/${plugin}`);
    packages.add('containernetworking-plugins');
  }
  if (missing.length === 0) return undefined;
  return `${missing.join(', ')} not found (apt-get install ${[...packages].join(' ')})`;
}
