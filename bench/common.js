// Helpers shared by the benchmark driver (run.js) and the controller process (controller.js).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, pathToFileURL, URL, URLSearchParams } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const TESTKIT_CLI = join(ROOT, 'packages/testkit/dist/cli.js');
export const PROVISIONER_NAME = 'bench.kprov.dev/memory';
export const STORAGE_CLASS = 'bench-memory';

/**
 * The root package has no dependency on the workspace packages, so client-node is resolved from
 * provisioner-lib's own dependencies: the same file (and module instance) the built library imports.
 */
const libRequire = createRequire(join(ROOT, 'packages/provisioner-lib/package.json'));
export const k8s = await import(pathToFileURL(libRequire.resolve('@kubernetes/client-node')).href);
export const lib = await import(pathToFileURL(join(ROOT, 'packages/provisioner-lib/dist/index.js')).href);

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on this machine. */
export function now() {
  return performance.timeOrigin + performance.now();
}

/**
 * Loads the kubeconfig `kprov-testkit serve` wrote. That file has a plain `http://` server and no
 * `insecure-skip-tls-verify`, which client-node 2.0.1 refuses ("HTTP protocol is not allowed when skipTLSVerify is
 * not set"); the in-process `kit.kubeConfig` sets `skipTLSVerify: true`, so do the same here.
 */
export function loadKubeConfig(path) {
  const file = new k8s.KubeConfig();
  file.loadFromFile(path);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: file.clusters.map((c) => (c.server.startsWith('http://') ? { ...c, skipTLSVerify: true } : c)),
    users: file.users,
    contexts: file.contexts,
    currentContext: file.currentContext,
  });
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
 * Starts `kprov-testkit serve` as a child process with its kubeconfig under `dir`; resolves once it printed
 * `kubeconfig: <path>`. By default the scheduler and kubelet are off and the PV binder on; `nodes` are
 * `NAME=ROOTDIR` flags (default: the server's one node under `dir`). The child is added to `track` (a Set) as soon
 * as it is spawned, for cleanup.
 */
export async function startServer(dir, { binder = true, scheduler = false, kubelet = false, nodes = [], timeoutMs = 20_000, track } = {}) {
  const kubeconfig = join(dir, 'kubeconfig');
  const args = [TESTKIT_CLI, 'serve', '--port', '0', '--kubeconfig-out', kubeconfig, ...nodes.flatMap((n) => ['--node', n])];
  if (!binder) args.push('--no-binder');
  if (!scheduler) args.push('--no-scheduler');
  if (!kubelet) args.push('--no-kubelet');
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  track?.add(child);
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    err += d;
  });
  const path = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kprov-testkit serve did not print its kubeconfig within ${timeoutMs} ms\n${out}${err}`));
    }, timeoutMs);
    const onData = (d) => {
      out += d;
      const m = /^kubeconfig: (.+)$/m.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.resume(); // keep draining whatever it prints later
        resolve(m[1].trim());
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`kprov-testkit serve exited (${code ?? signal}) before it was ready\n${out}${err}`));
    });
  });
  const url = /API server at (\S+)/.exec(out)?.[1] ?? '';
  return {
    kubeconfig: path,
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child, 10_000);
    },
  };
}
