// Helpers shared by the benchmark driver (run.js) and its parts; the controller process uses lean.js and the module
// of provisioner-binary.js alone.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lean.js';

export { classify, now, PROVISIONER_NAME, ROOT, STORAGE_CLASS } from './lean.js';

/**
 * The root package has no dependency on the workspace packages, so client-node is resolved from
 * provisioner-lib's own dependencies: the same file (and module instance) the built library imports.
 */
export const libRequire = createRequire(join(ROOT, 'packages/provisioner-lib/package.json'));
export const k8s = await import(pathToFileURL(libRequire.resolve('@kubernetes/client-node')).href);
/** The built library; `KPROV_BENCH_LIB` points at another build of it (a `dist/index.js`), to compare versions. */
export const LIB_PATH = process.env.KPROV_BENCH_LIB ?? join(ROOT, 'packages/provisioner-lib/dist/index.js');
export const lib = await import(pathToFileURL(LIB_PATH).href);

/** Loads the kubeconfig `kprov-testkit serve` wrote, with the client-node instance the built library uses. */
export function loadKubeConfig(path) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export const testkit = await import(pathToFileURL(join(ROOT, 'packages/testkit/dist/index.js')).href);

/**
 * How the images start Node.js (`docker/kprov-node.sh`, which caps V8's young generation when there is no memory
 * limit): the bench starts the controller process and the local-path provisioners the same way unless told to run
 * plain `node`. `{ execPath, env }`: the executable for `fork`/`spawn` and what to add to the child's environment.
 */
export function nodeLauncher(plain) {
  return plain
    ? { execPath: process.execPath, env: {} }
    : { execPath: join(ROOT, 'docker/kprov-node.sh'), env: { KPROV_NODE: process.execPath } };
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

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The median of some figures, in any order (nearest rank: the lower of the two middle ones of an even count). */
export function median(xs) {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
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
export async function startServer(
  dir,
  { binder = true, scheduler = false, kubelet = false, nodes = [], timeoutMs = 20_000, track } = {},
) {
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

/** Pids of the processes whose command line mentions `text` (Linux /proc; none elsewhere). */
export function pidsMentioning(text) {
  const found = [];
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(text)) found.push({ pid: Number(entry), command: cmdline.split('\0')[0] ?? '' });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Starts a real control plane (the testkit's `startControlPlane`: etcd, kube-apiserver and kube-controller-manager
 * from `$KUBEBUILDER_ASSETS`, and kube-scheduler with `scheduler`) with kube-controller-manager's client limit raised
 * to `kcmQps`, so that its PV controller (which binds the provisioned PVs) keeps up with a burst. Resolves with its
 * administrator's kubeconfig, `serverCpuMs()` (kube-apiserver + etcd, from /proc), `kcmCpuMs()`, `pids` (`server`:
 * kube-apiserver and etcd, `kcm`, `scheduler`) and `stop()`. `pvBinder: false` turns kube-controller-manager's PV
 * binder off (the claims stay Pending and the PVs Available).
 */
export async function startRealServer({
  kcmQps = 1000,
  kcmBurst = 2000,
  scheduler = false,
  pvBinder = true,
  track,
} = {}) {
  const cp = await testkit.startControlPlane({
    // kube-controller-manager binds the PVs: required, so a folder without it fails naming it rather than hanging.
    controllerManager: true,
    scheduler,
    controllerManagerQps: { qps: kcmQps, burst: kcmBurst },
    verbosity: 1,
    // Without its PV binder, kube-controller-manager leaves the claims Pending, as the testkit's --no-binder does.
    ...(pvBinder ? {} : { extraArgs: { controllerManager: ['--controllers=-persistentvolume-binder-controller'] } }),
  });
  track?.add(cp);
  const procs = pidsMentioning(cp.dataDir);
  const pidsOf = (re) => procs.filter((p) => re.test(p.command)).map((p) => p.pid);
  const server = pidsOf(/(kube-apiserver|etcd)$/);
  const kcm = pidsOf(/kube-controller-manager$/);
  const sum = (pids) => pids.reduce((total, pid) => total + procCpuMs(pid), 0);
  return {
    kubeconfig: cp.kubeconfigPath,
    url: cp.url,
    dataDir: cp.dataDir,
    pids: { server, kcm, scheduler: pidsOf(/kube-scheduler$/) },
    serverCpuMs: () => sum(server),
    kcmCpuMs: () => sum(kcm),
    async stop() {
      await cp.stop();
      track?.delete(cp);
    },
  };
}

/** Resident set size of another process in MiB, from /proc (`VmRSS`), or NaN where there is none. */
export function procRssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/**
 * What Node.js itself takes for a provisioner's kind of program, with nothing of the library or client-node: a file
 * of the given kind (`.ts`, so Node.js loads its TypeScript stripper, or `.mjs`) that starts a `node:http` server
 * (a metrics endpoint) and makes one request to the API server at `url` (over TLS for `https:`), then waits. Started
 * by `launcher` (`{ execPath, env }`, see {@link nodeLauncher}; default plain `node`); its RSS in MiB `afterMs` after
 * the answer.
 */
export async function nodeFloor(dir, url, ext, { launcher = nodeLauncher(true), afterMs = 1000 } = {}) {
  const file = join(dir, `floor.${ext}`);
  await writeFile(
    file,
    [
      "import { createRequire } from 'node:module';",
      'const require = createRequire(import.meta.url);',
      "const http = require('node:http');",
      `const client = require(${JSON.stringify(url.startsWith('https') ? 'node:https' : 'node:http')});`,
      "http.createServer(() => undefined).listen(0, '127.0.0.1');",
      `const done${ext === 'ts' ? ': Promise<void>' : ''} = new Promise((resolve) => client.get(${JSON.stringify(`${url}/version`)}, { rejectUnauthorized: false }, (res) => { res.resume(); res.on('end', resolve); }).on('error', resolve));`,
      'await done;',
      `setTimeout(() => { process.stdout.write(String(process.memoryUsage().rss)); process.exit(0); }, ${afterMs});`,
    ].join('\n'),
  );
  const child = spawn(launcher.execPath, [file], {
    cwd: dir,
    env: { ...process.env, ...launcher.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('exit', resolve));
  return Number(out) / 2 ** 20;
}
