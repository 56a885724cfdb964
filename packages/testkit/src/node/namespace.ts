/**
 * The node's namespaces: a mount and a PID namespace (`unshare`), whose first process is the shell script below.
 * It gives the node a filesystem of its own (its folder's `fs`, made the root with pivot_root) that shares the
 * machine's read-only `/usr` and `/etc`, its devices and sysfs, starts containerd, and starts the kubelet when told
 * to (once the images are loaded). Everything the node runs lives and dies with the script: when it ends, the
 * kernel kills every process of the PID namespace (containers included), and the mounts go with the mount
 * namespace. It ends when its standard input closes: on `stop()`, or when the process that started it dies.
 *
 * Host mounts under the node's folder reach the node (its folder is a shared mount, the namespace a slave of it, its
 * root made rshared), as on a node where a disk is mounted after a pod started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { NODE_PATHS } from './config.js';

/** The lines the script prints, in order. */
export const CONTAINERD_READY = 'containerd ready';
export const KUBELET_STARTED = 'kubelet started';
/** Printed when containerd or the kubelet exits: `<name> exited with <code>`. */
export const EXITED = / exited with (\d+)$/;

// The script, for sh (dash). Inputs in the environment: KPROV_NODE_FS (the node's root, on the machine),
// KPROV_ASSETS (the folder of kubelet), KPROV_KUBELET_ARGS (words). Everything runs from the node's root after
// pivot_root; fd 3 keeps the standard input for the watcher of its end (a background job's stdin is /dev/null).
const SCRIPT = `
set -eu
exec 3<&0
trap 'exit 0' TERM
fs="$KPROV_NODE_FS"
ro_bind() { mkdir -p "$2"; mount --rbind "$1" "$2"; mount -o remount,bind,ro "$2"; }
for d in usr etc; do ro_bind "/$d" "$fs/$d"; done
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ]; then ln -sfn "$(readlink "/$d")" "$fs/$d"
  elif [ -d "/$d" ]; then ro_bind "/$d" "$fs/$d"; fi
done
for d in dev sys; do mkdir -p "$fs/$d"; mount --rbind "/$d" "$fs/$d"; done
ro_bind "$KPROV_ASSETS" "$fs${NODE_PATHS.bin}"
mkdir -p "$fs/proc" "$fs/run" "$fs/tmp" "$fs/var/lib" "$fs/var/log" "$fs${NODE_PATHS.logs}"
chmod 1777 "$fs/tmp"
[ -e "$fs/var/run" ] || ln -s ../run "$fs/var/run"
cd "$fs"
mkdir -p .oldroot
pivot_root . .oldroot
cd /
mount -t proc proc /proc
umount -l /.oldroot
rmdir /.oldroot
mount --make-rshared /
( set +e; containerd --config ${NODE_PATHS.containerdConfig} </dev/null 3<&- >>${NODE_PATHS.logs}/containerd.log 2>&1
  echo "containerd exited with $?" ) &
while [ ! -S ${NODE_PATHS.containerdSocket} ]; do sleep 0.1; done
echo "${CONTAINERD_READY}"
read -r _ <&3 || exit 0
# shellcheck disable=SC2086 # the kubelet's arguments are words
( set +e; ${NODE_PATHS.bin}/kubelet $KPROV_KUBELET_ARGS </dev/null 3<&- >>${NODE_PATHS.logs}/kubelet.log 2>&1
  echo "kubelet exited with $?" ) &
echo "${KUBELET_STARTED}"
( while read -r _ <&3; do :; done; kill -TERM 1 ) &
# As the first process of the PID namespace, reap what the containers' shims leave.
while :; do wait || true; done
`;

/** Options of {@link startNamespace}. */
export interface NamespaceOptions {
  /** The node's root on the machine: a shared mount point (see the module comment). */
  fs: string;
  /** Folder of the kubelet binary. */
  assets: string;
  /** The kubelet's arguments (no spaces inside one). */
  kubeletArgs: readonly string[];
}

/** The running script: its process (`unshare`), and each line it prints. */
export interface Namespace {
  readonly child: ChildProcess;
  /** Told each line the script prints on stdout, and `undefined` when it ends. */
  onLine(listener: (line: string | undefined) => void): void;
  /** What the script printed on stderr (its last lines), for errors. */
  stderr(): string;
  /** Tells the script to start the kubelet. */
  startKubelet(): void;
  /** Ends the namespace and everything in it; resolves once `unshare` has exited. */
  stop(): Promise<void>;
}

/** Starts the node's namespaces; see the module comment. */
export function startNamespace(options: NamespaceOptions): Namespace {
  const child = spawn(
    'unshare',
    ['--mount', '--pid', '--fork', '--propagation', 'slave', '--kill-child=SIGKILL', 'sh', '-c', SCRIPT, options.fs],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        KPROV_NODE_FS: options.fs,
        KPROV_ASSETS: options.assets,
        KPROV_KUBELET_ARGS: options.kubeletArgs.join(' '),
      },
    },
  );
  child.stdin?.on('error', () => undefined);
  const listeners: ((line: string | undefined) => void)[] = [];
  const lines: string[] = [];
  let ended = false;
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const l of listeners) l(line);
  });
  let errText = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errText = (errText + chunk.toString('utf8')).slice(-4096);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  void exited.then(() => {
    ended = true;
    for (const l of listeners) l(undefined);
  });
  return {
    child,
    onLine(listener) {
      for (const line of lines) listener(line);
      if (ended) listener(undefined);
      else listeners.push(listener);
    },
    stderr: () => errText.trim(),
    startKubelet() {
      child.stdin?.write('start\n');
    },
    async stop() {
      child.stdin?.end();
      // The script ends at once on the end of its input; unshare then kills the rest. SIGKILL when that takes long
      // (unshare ignores SIGTERM).
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
