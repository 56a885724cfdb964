// Helpers shared by the benchmark driver (run.js) and the controller process (controller.js).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, pathToFileURL, URL, URLSearchParams } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PROVISIONER_NAME = 'bench.kprov.dev/memory';
export const STORAGE_CLASS = 'bench-memory';

/**
 * The root package has no dependency on the workspace packages, so client-node is resolved from
 * provisioner-lib's own dependencies: the same file (and module instance) the built library imports.
 */
const libRequire = createRequire(join(ROOT, 'packages/provisioner-lib/package.json'));
export const k8s = await import(pathToFileURL(libRequire.resolve('@kubernetes/client-node')).href);
export const lib = await import(pathToFileURL(join(ROOT, 'packages/provisioner-lib/dist/index.js')).href);
export const testkit = await import(pathToFileURL(join(ROOT, 'packages/testkit/dist/index.js')).href);

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on this machine. */
export function now() {
  return performance.timeOrigin + performance.now();
}

/** Loads the kubeconfig `kprov-testkit serve` wrote, with the client-node instance the built library uses. */
export function loadKubeConfig(path) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** The PV template the in-memory provisioner returns; the raw runs create the same object. */
export function hostPathVolume(name, storage = '1Gi', accessModes = ['ReadWriteOnce'], reclaimPolicy = 'Delete') {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage },
      accessModes,
      persistentVolumeReclaimPolicy: reclaimPolicy,
      hostPath: { path: `/var/lib/kprov-bench/${name}` },
    },
  };
}

/** Runs `fn(0..n-1)` with at most `concurrency` calls in flight. Rejects on the first error. */
export async function pool(n, concurrency, fn) {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < n && !failed) {
      const i = next++;
      try {
        await fn(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, n)) }, worker));
}

/** `verb resource[/subresource]` of a Kubernetes API request, as the API server's audit log names it. */
export function classify(method, path) {
  const [pathname, query = ''] = path.split('?');
  const params = new URLSearchParams(query);
  let parts = pathname.split('/').filter((p) => p !== '');
  if (parts[0] === 'api') parts = parts.slice(2);
  else if (parts[0] === 'apis') parts = parts.slice(3);
  else return { verb: method.toLowerCase(), resource: pathname };
  if (parts[0] === 'namespaces' && parts.length >= 3) parts = parts.slice(2);
  const [resource = '', name, sub] = parts;
  const target = sub === undefined ? resource : `${resource}/${sub}`;
  let verb;
  switch (method.toUpperCase()) {
    case 'GET':
      verb = params.get('watch') === 'true' || params.get('watch') === '1' ? 'watch' : name === undefined ? 'list' : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { verb, resource: target };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

let clockTicks;
/**
 * CPU time (user + system, ms) of another process from /proc, or NaN where there is no /proc. With
 * `children: true`, that of its exited and reaped child processes instead (`cutime` + `cstime`).
 */
export function procCpuMs(pid, { children = false } = {}) {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [user, system] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
    return ((Number(user) + Number(system)) / clockTicks) * 1000;
  } catch {
    return NaN;
  }
}

/** Resolves with the child's exit, or kills it (SIGKILL) after `ms`. */
export function waitForExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Starts `kprov-testkit serve` (the testkit's `startServeProcess`) with its kubeconfig under `dir`. By default the
 * scheduler and kubelet are off and the PV binder on; `nodes` are `NAME=ROOTDIR` flags (default: the server's one
 * node). The child is added to `track` (a Set) as soon as it is spawned, for cleanup.
 */
export async function startServer(dir, { binder = true, scheduler = false, kubelet = false, nodes = [], timeoutMs = 20_000, track } = {}) {
  const { child, kubeconfig, url } = await testkit.startServeProcess({
    dir,
    nodes,
    binder,
    scheduler,
    kubelet,
    timeoutMs,
    onSpawn: (spawned) => track?.add(spawned),
  });
  return {
    kubeconfig,
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child, 10_000);
    },
  };
}
