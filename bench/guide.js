// The guide part of `pnpm bench` (run.js): the provisioner of docs/provisioner-lib.md, `examples/hostpath.ts`, run as
// its author runs it: the file as it is, loaded with the library and client-node from node_modules (no bundler),
// started with plain `node`, and beside it through the images' launcher (docker/kprov-node.sh). Everything is
// measured from outside the process, as an author would see it: its log line, /proc and its /metrics.
// See bench/README.md, "The guide's provisioner".
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  k8s,
  lib,
  nodeFloor,
  now,
  percentile,
  pool,
  procCpuMs,
  ROOT,
  startRealServer,
  startServer,
  waitForExit,
} from './common.js';
import { until } from './until.js';
import { watchCollection } from './watch.js';

const PROVISIONER = 'example.com/hostpath';
const CLASS = 'example-hostpath';
/** Where `examples/hostpath.ts` is run from: the library's package, so that it loads it and client-node from node_modules. */
const GUIDE_PACKAGE = join(ROOT, 'packages/provisioner-lib');

/**
 * How the provisioner is started: plain `node`, and `docker/kprov-node.sh`, from the library's package. With
 * `KPROV_BENCH_GUIDE_BEFORE` (a copy of another build of the package: its `package.json`, `dist`, `examples` and a
 * `node_modules` link), plain `node` on that one too, first: a before/after pair on the same server.
 */
export function guideLaunchers(nodeLauncher) {
  const before = process.env.KPROV_BENCH_GUIDE_BEFORE;
  const ts = 'examples/hostpath.ts';
  // KPROV_BENCH_GUIDE_LAUNCHERS: a comma-separated choice of the names below (default all).
  const only = process.env.KPROV_BENCH_GUIDE_LAUNCHERS?.split(',').map((n) => n.trim());
  const all = {
    ...(before === undefined ? {} : { 'plain node (before)': { ...nodeLauncher(true), cwd: before, script: ts } }),
    'plain node': { ...nodeLauncher(true), cwd: GUIDE_PACKAGE, script: ts },
    // The same file as JavaScript (what `tsc` writes, the guide's way to ship it): Node.js then loads no TypeScript
    // stripper (its WebAssembly build of SWC).
    'plain node (.js)': { ...nodeLauncher(true), cwd: GUIDE_PACKAGE, script: 'js' },
    'kprov-node.sh': { ...nodeLauncher(false), cwd: GUIDE_PACKAGE, script: ts },
  };
  return only === undefined ? all : Object.fromEntries(Object.entries(all).filter(([name]) => only.includes(name)));
}

/**
 * `examples/hostpath.ts` as JavaScript in `dir` (types stripped by Node.js's own `stripTypeScriptTypes`, as `tsc`
 * would emit it), next to a `node_modules/@kprov/provisioner-lib` link to the library's package.
 */
async function javascriptGuide(dir) {
  const { stripTypeScriptTypes } = await import('node:module');
  const js = join(dir, 'guide-js');
  await mkdir(join(js, 'node_modules/@kprov'), { recursive: true });
  await symlink(GUIDE_PACKAGE, join(js, 'node_modules/@kprov/provisioner-lib')).catch(() => undefined);
  const source = readFileSync(join(GUIDE_PACKAGE, 'examples/hostpath.ts'), 'utf8');
  await writeFile(join(js, 'hostpath.mjs'), stripTypeScriptTypes(source));
  return join(js, 'hostpath.mjs');
}

/** VmRSS and VmHWM (the kernel's peak RSS of the process) of `pid`, in MiB. */
function procMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function claimBody(name) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'default',
      // What the PV binder adds for a class of an external provisioner: the binder is out of the PVC→PV path, as in
      // the Go anchor's runs.
      annotations: {
        'volume.kubernetes.io/storage-provisioner': PROVISIONER,
        'volume.beta.kubernetes.io/storage-provisioner': PROVISIONER,
      },
    },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: CLASS, resources: { requests: { storage: '1Gi' } } },
  };
}

/**
 * One run of the guide's provisioner: `node examples/hostpath.ts` (or through `launcher`) with `flags`, until
 * `stop()`. `ready` resolves with the ms from spawn to its `Started provisioner controller` line (informers synced,
 * workers started) and its memory then.
 */
function startProvisioner({ launcher, script, kubeconfig, root, port, flags, tmp }) {
  const t0 = now();
  const child = spawn(
    launcher.execPath,
    [script, '--kubeconfig', kubeconfig, '--root', root, '--http-endpoint', `127.0.0.1:${port}`, ...flags],
    { cwd: launcher.cwd, env: { ...process.env, ...launcher.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const ready = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.length > 200_000) output = output.slice(-100_000);
      if (output.includes('Started provisioner controller')) {
        child.stdout.off('data', onData);
        resolve({ startMs: now() - t0, memory: procMemory(child.pid) });
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.once('exit', (code, signal) =>
      reject(new Error(`the provisioner exited (${code ?? signal}) before it started:\n${output.slice(-2000)}`)),
    );
  });
  return {
    child,
    ready,
    cpuMs: () => procCpuMs(child.pid),
    memory: () => procMemory(child.pid),
    async metric(name) {
      const text = await globalThis.fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      let sum = 0;
      for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').at(-1));
      return sum;
    },
    async stop() {
      child.kill('SIGTERM');
      await waitForExit(child, 20_000);
    },
  };
}

/**
 * Runs the guide part on one tier: for each launcher, a run per setting (bursts at threadiness 16 and 4, the client
 * rate limit of the guide's defaults, caches filled while running and listed at start). Returns the figures.
 */
export async function guidePart(tier, options, ctx) {
  const say = (m) => ctx.log(`guide, ${tier}: ${m}`);
  const dir = join(ctx.tmpRoot, `guide-${tier}`);
  await mkdir(dir, { recursive: true });
  say('starting the server');
  const server =
    tier === 'real'
      ? await startRealServer({ track: ctx.live })
      : await startServer(dir, { binder: false, track: ctx.live });
  // The servers' CPU (ms): kube-apiserver, etcd and kube-controller-manager on the real tier, the testkit's process.
  const serverCpuMs =
    tier === 'real' ? () => server.serverCpuMs() + server.kcmCpuMs() : () => procCpuMs(server.child.pid);
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const core = lib.makeApiClient(kc, k8s.CoreV1Api);
    const storage = lib.makeApiClient(kc, k8s.StorageV1Api);
    await storage.createStorageClass({
      body: {
        metadata: { name: CLASS },
        provisioner: PROVISIONER,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    // Warm the server up (its first writes are slow).
    await lib.makeApiClient(kc, k8s.CoreV1Api).listNamespace();
    const volumes = new Map();
    const pvWatch = await watchCollection(kc, '/api/v1/persistentvolumes', (type, pv) => {
      const claim = pv?.spec?.claimRef?.uid;
      if (type === 'ADDED' && claim !== undefined && !volumes.has(claim)) volumes.set(claim, now());
    });
    const clear = async () => {
      // A collection delete of 10,000 objects can outlast the server's request timeout (and takes minutes on a busy
      // 2-core machine): it goes on, and is asked again until nothing is left.
      const ignore = () => undefined;
      const gone = await until(
        async () => {
          await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace: 'default' }).catch(ignore);
          await core.deleteCollectionPersistentVolume({}).catch(ignore);
          await core.deleteCollectionNamespacedEvent({ namespace: 'default' }).catch(ignore);
          const [c, v] = await Promise.all([
            core.listNamespacedPersistentVolumeClaim({ namespace: 'default', limit: 1 }),
            core.listPersistentVolume({ limit: 1 }),
          ]).catch(() => [{ items: [1] }, { items: [1] }]);
          return c.items.length === 0 && v.items.length === 0;
        },
        900_000,
        1000,
      );
      if (!gone) throw new Error('the claims and PVs were not gone 900 s after their deletion');
      await rm(join(dir, 'volumes'), { recursive: true, force: true });
      volumes.clear();
    };
    let serial = 0;
    /** Creates `n` claims (32 in flight) and waits for their PVs; CPU of the provisioner over the burst. */
    const burst = async (p, n, timeoutMs) => {
      const created = new Map();
      const cpu0 = p.cpuMs();
      const t0 = now();
      const prefix = `c${serial++}`;
      await pool(n, options.createConcurrency, async (i) => {
        const claim = await core.createNamespacedPersistentVolumeClaim({
          namespace: 'default',
          body: claimBody(`${prefix}-${i}`),
        });
        created.set(claim.metadata.uid, now());
      });
      const done = await until(() => [...created.keys()].every((uid) => volumes.has(uid)), timeoutMs, 10);
      const last = Math.max(...[...created.keys()].map((uid) => volumes.get(uid) ?? NaN));
      const latencies = [...created].map(([uid, t]) => (volumes.get(uid) ?? NaN) - t).sort((a, b) => a - b);
      return {
        claims: n,
        provisioned: [...created.keys()].filter((uid) => volumes.has(uid)).length,
        complete: done,
        perSecond: n / ((last - t0) / 1000),
        cpuMsPerProvision: (p.cpuMs() - cpu0) / n,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
      };
    };
    /** Waits until the process's Events are through: nothing queued, as its metric says. */
    const eventsOf = async (p, n) => {
      const written = () =>
        core.listNamespacedEvent({ namespace: 'default' }).then((l) => l.items.reduce((s, e) => s + (e.count ?? 1), 0));
      await until(async () => (await written()) >= 2 * n, 120_000, 500);
      return { written: await written(), dropped: await p.metric('event_recorder_dropped_events_total') };
    };

    const jsGuide = await javascriptGuide(dir);
    const floor = { ts: await nodeFloor(dir, server.url, 'ts'), mjs: await nodeFloor(dir, server.url, 'mjs') };
    const results = {};
    const launchers = Object.entries(ctx.launchers);
    for (const [name, launcher] of launchers) {
      const last = name === launchers.at(-1)?.[0];
      const r = {};
      results[name] = r;
      const run = async (flags, fn) => {
        const port = await freePort();
        const script = launcher.script === 'js' ? jsGuide : launcher.script;
        const p = startProvisioner({
          script,
          launcher,
          kubeconfig: server.kubeconfig,
          root: join(dir, 'volumes'),
          port,
          flags,
          tmp: dir,
        });
        ctx.live.add(p.child);
        try {
          const ready = await p.ready;
          return await fn(p, ready);
        } finally {
          await p.stop();
          ctx.live.delete(p.child);
        }
      };
      const noLimit = ['--kube-api-qps=-1'];
      try {
        for (const t of options.guideThreadiness) {
          say(`${name}: threadiness ${t}, bursts of ${options.claims} and ${options.latencyClaims}`);
          r[`t${t}`] = await run([...noLimit, `--worker-threads=${t}`], async (p, ready) => {
            await sleep(1000);
            const settled = p.memory();
            const big = await burst(p, options.claims, options.timeoutMs);
            const afterBig = p.memory();
            const events = await eventsOf(p, options.claims);
            const small = await burst(p, options.latencyClaims, options.timeoutMs);
            return { ready, settled, big, afterBig, events, small };
          });
          await clear();
        }
        if (options.qpsClaims > 0) {
          say(`${name}: the guide's defaults (client QPS 5, burst 10, 4 workers), ${options.qpsClaims} claims`);
          r.qps = await run([], async (p) => {
            const b = await burst(p, options.qpsClaims, options.timeoutMs + options.qpsClaims * 1000);
            return { burst: b, events: await eventsOf(p, options.qpsClaims) };
          });
          await clear();
        }
        if (options.cacheClaims > 0) {
          say(`${name}: ${options.cacheClaims} claims and PVs arriving while it runs`);
          r.cacheRunning = await run([...noLimit, '--worker-threads=16'], async (p) => {
            for (let n = 0; n < options.cacheClaims; n += options.claims)
              await burst(p, Math.min(options.claims, options.cacheClaims - n), options.timeoutMs);
            return idleMemory(p, options.idleS);
          });
          // As a provisioner restarts in a settled cluster (the Go anchor's figure): started once the servers are
          // quiet, so that the figure does not depend on how busy they still are. Right after the last burst they are
          // not (the real tier's binder binds its claims for a minute or two after their PVs exist); started at once,
          // the process took 1.5–1.9 s to sync, started after they settled 1.3–1.6 s (bench/README.md).
          say(`${name}: waiting for the servers to settle`);
          const settle = await serversQuiet(serverCpuMs);
          say(`${name}: started with ${options.cacheClaims} claims and PVs in place`);
          r.cacheAtStart = await run([...noLimit, '--worker-threads=16'], async (p, ready) => ({
            ready,
            settle,
            ...(await idleMemory(p, options.idleS)),
          }));
          // More starts, each as the first: on a shared machine one start took from 0.9 to 1.6 s to sync, so the
          // figure is the median of several (bench/README.md).
          const starts = [r.cacheAtStart.ready.startMs];
          while (starts.length < options.guideStarts) {
            await serversQuiet(serverCpuMs);
            starts.push(await run([...noLimit, '--worker-threads=16'], async (_p, ready) => ready.startMs));
          }
          r.cacheAtStart.startsMs = starts;
          // The server goes after the last launcher: its 20,000 objects are not deleted one by one.
          if (!last) await clear();
        }
      } catch (err) {
        if (ctx.aborted?.()) throw err;
        r.error = err instanceof Error ? err.message : String(err);
        say(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        await clear().catch(() => undefined);
      }
    }
    pvWatch.stop();
    return { tier, floor, results };
  } finally {
    await server.stop();
    ctx.live.delete(server);
  }
}

/**
 * Waits until the servers whose CPU `cpuMs()` sums are quiet: under `share` of one core over each of `windows`
 * windows of 2 s in a row, or `timeoutMs` passed. Resolves with the seconds waited and whether they settled.
 */
export async function serversQuiet(cpuMs, { share = 0.15, windows = 2, timeoutMs = 600_000 } = {}) {
  const t0 = now();
  let quiet = 0;
  while (quiet < windows && now() - t0 < timeoutMs) {
    const before = cpuMs();
    await sleep(2000);
    quiet = cpuMs() - before < share * 2000 ? quiet + 1 : 0;
  }
  return { seconds: (now() - t0) / 1000, settled: quiet >= windows };
}

/** The lowest RSS of 1 s samples over `seconds` idle, and the process's peak RSS (VmHWM) over its life. */
async function idleMemory(p, seconds) {
  let lowest = Infinity;
  for (let i = 0; i < Math.max(1, seconds); i++) {
    await sleep(1000);
    lowest = Math.min(lowest, p.memory().rss);
  }
  return { rss: lowest, peak: p.memory().peak };
}
