// `pnpm bench`: ProvisionController throughput, latency, API requests and memory against `kprov-testkit serve`,
// next to the server's raw PV create throughput at the same concurrency; then the local-path provisioner binary
// through real helper pods (local-path.js). See bench/README.md.
import { execFileSync, fork } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, URL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  hostPathVolume,
  k8s,
  lib,
  loadKubeConfig,
  now,
  percentile,
  pool,
  procCpuMs,
  PROVISIONER_NAME,
  ROOT,
  startServer,
  STORAGE_CLASS,
  waitForExit,
} from './common.js';
import { writeLatest } from './latest.js';
import { localPathRun } from './local-path.js';
import { LOCAL_PATH_HEADING, localPathMarkdown } from './local-path-report.js';

const USAGE = `Usage: pnpm bench [-- options]   (or: node bench/run.js [options] after pnpm build)

  --only PART              run only one part: controller or local-path (default both)
  --no-write               print only; do not write bench/results/
  -h, --help

ProvisionController part:
  --claims N               PVCs per controller run, and PVs per raw run (default 1000)
  --threadiness LIST       controller threadiness values, comma-separated (default 4,16)
  --create-concurrency N   PVC creates in flight from the load generator (default 32)
  --warmup N               untimed ConfigMap creates on each fresh server before timing (default 300)
  --raw-repeats N          raw runs per setting on one server; the median is reported (default 3)
  --timeout-s S            give up on a controller run after S seconds (default 60 + claims/50)
  --binder                 run the testkit PV binder (default off: claims are created with the
                           storage-provisioner annotations the binder would add; see bench/README.md)
  --no-default-agent       skip the raw runs with client-node's per-request agent
  --controller-node-args A Node.js flags for the controller process, space-separated, e.g.
                           "--cpu-prof --cpu-prof-dir=/tmp/prof" or "--heap-prof" (see bench/README.md)

local-path part (the local-path-provisioner binary, real helper pods; see bench/README.md):
  --lp-claims LIST         PVCs per run, comma-separated (default 100,1000)
  --lp-workers LIST        --worker-threads values, comma-separated (default 4,16; 4 is upstream's default)
  --lp-qps Q               --kube-api-qps of the provisioner (default -1: no client-side limit)
  --lp-burst N             --kube-api-burst of the provisioner (default 10, its own default)
  --lp-nodes N             simulated nodes the claims are spread over (default 3)
  --lp-timeout-s S         give up on provisioning, and on deletion, after S seconds each
                           (default 60 + claims/5)
  (--create-concurrency and --warmup apply here too)
`;

function positiveInt(name, value, fallback) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number >= 1, got "${value}"`);
  return n;
}

function finiteNumber(name, value, fallback) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new Error(`--${name} must be a number (negative: no limit), got "${value}"`);
  return n;
}

let options;
try {
  // `pnpm bench -- --claims N` passes the `--` through; skip it.
  const args = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
  const { values } = parseArgs({
    args,
    options: {
      claims: { type: 'string' },
      threadiness: { type: 'string' },
      'create-concurrency': { type: 'string' },
      warmup: { type: 'string' },
      'raw-repeats': { type: 'string' },
      binder: { type: 'boolean' },
      'timeout-s': { type: 'string' },
      'no-default-agent': { type: 'boolean' },
      'no-write': { type: 'boolean' },
      'controller-node-args': { type: 'string' },
      only: { type: 'string' },
      'lp-claims': { type: 'string' },
      'lp-workers': { type: 'string' },
      'lp-qps': { type: 'string' },
      'lp-burst': { type: 'string' },
      'lp-nodes': { type: 'string' },
      'lp-timeout-s': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const claims = positiveInt('claims', values.claims, 1000);
  options = {
    claims,
    threadiness: (values.threadiness ?? '4,16').split(',').map((t) => positiveInt('threadiness', t.trim(), 4)),
    createConcurrency: positiveInt('create-concurrency', values['create-concurrency'], 32),
    warmup: values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, 300),
    rawRepeats: positiveInt('raw-repeats', values['raw-repeats'], 3),
    binder: values.binder === true,
    timeoutMs: positiveInt('timeout-s', values['timeout-s'], Math.ceil(60 + claims / 50)) * 1000,
    defaultAgent: values['no-default-agent'] !== true,
    write: values['no-write'] !== true,
    controllerNodeArgs: (values['controller-node-args'] ?? '').split(' ').filter((a) => a !== ''),
    only: values.only,
    localPath: {
      claims: (values['lp-claims'] ?? '100,1000').split(',').map((c) => positiveInt('lp-claims', c.trim(), 100)),
      workers: (values['lp-workers'] ?? '4,16').split(',').map((w) => positiveInt('lp-workers', w.trim(), 4)),
      qps: finiteNumber('lp-qps', values['lp-qps'], -1),
      burst: positiveInt('lp-burst', values['lp-burst'], 10),
      nodes: positiveInt('lp-nodes', values['lp-nodes'], 3),
      timeoutS: values['lp-timeout-s'] === undefined ? undefined : positiveInt('lp-timeout-s', values['lp-timeout-s'], 0),
    },
  };
  if (options.only !== undefined && options.only !== 'controller' && options.only !== 'local-path') {
    throw new Error(`--only must be "controller" or "local-path", got "${options.only}"; leave it out to run both`);
  }
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  process.exit(2);
}

const CONTROLLER_JS = fileURLToPath(new URL('./controller.js', import.meta.url));
const RESULTS = join(ROOT, 'bench/results');
const t0 = now();
const log = (message) => process.stderr.write(`bench: [${((now() - t0) / 1000).toFixed(1)} s] ${message}\n`);

// Everything started here, for cleanup on the way out (including Ctrl-C).
const tmpRoot = await mkdtemp(join(os.tmpdir(), 'kprov-bench-'));
const live = new Set();
let aborted = false;
let cleaning;
function cleanup() {
  aborted = true;
  cleaning ??= (async () => {
    await Promise.all(
      [...live].map((child) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return waitForExit(child, 10_000);
      }),
    );
    await rm(tmpRoot, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}, cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/**
 * A fresh `kprov-testkit serve` for one run, stopped and removed afterwards. It is warmed up (JIT) with untimed
 * ConfigMap creates: they take the same HTTP, decoding and store path as PV and PVC creates, but no simulation or
 * informer of the controller looks at them.
 */
async function withServer(name, fn) {
  if (aborted) throw new Error('stopped');
  const dir = await mkdtemp(join(tmpRoot, `${name}-`));
  if (aborted) throw new Error('stopped');
  const server = await startServer(dir, { binder: options.binder, track: live });
  const kc = loadKubeConfig(server.kubeconfig);
  try {
    if (options.warmup > 0) {
      const core = lib.makeApiClient(kc, k8s.CoreV1Api);
      await pool(options.warmup, 8, (i) =>
        core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `warmup-${i}` }, data: { i: String(i) } } }),
      );
    }
    return await fn(kc, server);
  } finally {
    await lib.sharedAgent(kc).close().catch(() => undefined);
    await server.stop();
    live.delete(server.child);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * client-node's default agent leaves every connection open until the server's keep-alive timeout (60 s for the
 * testkit, so about 58 s), one per request: 10,000 requests run out of file descriptors (EMFILE). Its runs are capped.
 */
const DEFAULT_AGENT_CREATES = 1000;

/** Raw PV creates straight to the server, `inFlight` at a time: the ceiling for the controller's PV writes. */
async function rawRun(inFlight, agentKind) {
  const creates = agentKind === 'shared' ? options.claims : Math.min(options.claims, DEFAULT_AGENT_CREATES);
  return withServer(`raw-${agentKind}-${inFlight}`, async (kc, server) => {
    const core = agentKind === 'shared' ? lib.makeApiClient(kc, k8s.CoreV1Api) : kc.makeApiClient(k8s.CoreV1Api);
    await pool(inFlight, inFlight, () => core.readNamespace({ name: 'default' })); // open the connections
    const reps = [];
    for (let r = 0; r < options.rawRepeats; r++) {
      const serverCpu = procCpuMs(server.child.pid);
      const ownCpu = process.cpuUsage();
      const start = now();
      await pool(creates, inFlight, (i) => core.createPersistentVolume({ body: hostPathVolume(`raw-${r}-${i}`) }));
      const ms = now() - start;
      const own = process.cpuUsage(ownCpu);
      reps.push({
        ms,
        perSecond: (creates / ms) * 1000,
        serverCpuMsPerCreate: (procCpuMs(server.child.pid) - serverCpu) / creates,
        clientCpuMsPerCreate: (own.user + own.system) / 1000 / creates,
      });
    }
    const median = [...reps].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(reps.length / 2)];
    return { agent: agentKind, inFlight, creates, ...median, repeats: reps };
  });
}

/** Buffers a child's IPC messages by type, so none is missed between waits. */
function messagesOf(child) {
  const got = new Map();
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.type);
    if (w === undefined) got.set(m.type, m);
    else {
      waiting.delete(m.type);
      w.resolve(m);
    }
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.values()) w.reject(new Error(`controller process exited (${code ?? signal})`));
    waiting.clear();
  });
  return (type, ms) => {
    if (got.has(type)) return Promise.resolve(got.get(type));
    if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error('controller process has exited'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(type);
        reject(new Error(`timed out after ${ms} ms waiting for "${type}" from the controller process`));
      }, ms);
      waiting.set(type, {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  };
}

/**
 * Without the binder, the claim carries what the binder would add for an Immediate class of an external provisioner
 * (kube-controller-manager's PV controller does the same), which is what tells the provisioner to act.
 */
const PROVISIONER_ANNOTATIONS = {
  'volume.kubernetes.io/storage-provisioner': PROVISIONER_NAME,
  'volume.beta.kubernetes.io/storage-provisioner': PROVISIONER_NAME,
};

function claimBody(i) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `claim-${i}`, namespace: 'default', ...(options.binder ? {} : { annotations: PROVISIONER_ANNOTATIONS }) },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: STORAGE_CLASS, resources: { requests: { storage: '1Gi' } } },
  };
}

/** One ProvisionController run (separate process) while the load generator creates the claims. */
async function controllerRun(threadiness) {
  return withServer(`controller-${threadiness}`, async (kc, server) => {
    const storage = lib.makeApiClient(kc, k8s.StorageV1Api);
    await storage.createStorageClass({
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: STORAGE_CLASS },
        provisioner: PROVISIONER_NAME,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    if (aborted) throw new Error('stopped');
    const child = fork(CONTROLLER_JS, [], {
      execArgv: ['--expose-gc', ...options.controllerNodeArgs],
      env: { ...process.env, KPROV_BENCH_CONFIG: JSON.stringify({ kubeconfig: server.kubeconfig, threadiness, expected: options.claims }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    live.add(child);
    const next = messagesOf(child);
    let result;
    try {
      await next('started', 30_000);
      log(`threadiness ${threadiness}: controller started`);
      const serverCpu = procCpuMs(server.child.pid);
      const driverCpu = process.cpuUsage();
      const cpuStart = now();
      const core = lib.makeApiClient(kc, k8s.CoreV1Api);
      const created = new Map();
      const createStart = now();
      await pool(options.claims, options.createConcurrency, async (i) => {
        const pvc = await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claimBody(i) });
        created.set(pvc.metadata?.uid ?? '', now());
      });
      const createMs = now() - createStart;
      log(`threadiness ${threadiness}: ${options.claims} claims created`);
      let complete = true;
      try {
        await next('allProvisioned', options.timeoutMs);
      } catch (err) {
        complete = false;
        log(`threadiness ${threadiness}: ${err instanceof Error ? err.message : String(err)}; stopping with partial results`);
      }
      const driver = process.cpuUsage(driverCpu);
      const cpu = {
        wallMs: now() - cpuStart,
        serverMs: procCpuMs(server.child.pid) - serverCpu,
        driverMs: (driver.user + driver.system) / 1000,
      };
      log(`threadiness ${threadiness}: ${complete ? 'all provisioned' : 'timed out'}, stopping the controller`);
      child.send({ type: 'stop' });
      result = await next('result', 30_000);
      log(`threadiness ${threadiness}: controller stopped in ${result.stopMs.toFixed(0)} ms`);
      return summarize(threadiness, result, created, createMs, complete, cpu);
    } finally {
      if (result === undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child, 15_000);
      live.delete(child);
    }
  });
}

function summarize(threadiness, result, created, createMs, complete, cpu) {
  const firstCreated = Math.min(...created.values());
  const latencies = [];
  let lastPv = 0;
  let unmatched = 0;
  for (const [uid, t] of result.provisioned) {
    lastPv = Math.max(lastPv, t);
    const c = created.get(uid);
    if (c === undefined) unmatched += 1;
    else latencies.push(t - c);
  }
  latencies.sort((a, b) => a - b);
  // Where the time goes: PVC created → provision() called (binder annotation, watch delivery, queueing) and
  // provision() called → PV saved (the PV create and the work queue around it).
  const called = new Map(result.provisionCalled);
  const toCall = [];
  const toSave = [];
  for (const [uid, t] of result.provisioned) {
    const c = created.get(uid);
    const p = called.get(uid);
    if (c !== undefined && p !== undefined) {
      toCall.push(p - c);
      toSave.push(t - p);
    }
  }
  const dist = (xs) => {
    xs.sort((a, b) => a - b);
    return { p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99) };
  };
  const provisioned = result.provisioned.length;
  const spanMs = lastPv - firstCreated;
  const byVerb = {};
  let total = 0;
  for (const [key, n] of Object.entries(result.requests)) {
    const verb = key.split(' ')[0];
    byVerb[verb] = (byVerb[verb] ?? 0) + n;
    total += n;
  }
  const dropped = result.eventsDropped.queue_full ?? 0;
  return {
    threadiness,
    complete,
    claims: options.claims,
    provisioned,
    duplicates: result.duplicates,
    failures: result.failures,
    unmatched,
    spanMs,
    perSecond: (provisioned / spanMs) * 1000,
    latencyMs: {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? NaN,
      mean: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    },
    latencySplitMs: { createdToProvisionCall: dist(toCall), provisionCallToSaved: dist(toSave) },
    loadGenerator: { concurrency: options.createConcurrency, ms: createMs, perSecond: (options.claims / createMs) * 1000 },
    requests: { total, perProvision: total / provisioned, byVerb, byVerbResource: result.requests },
    eventsDropped: dropped,
    eventsDroppedByReason: result.eventsDropped,
    logs: result.logs,
    cpuMsPerProvision: result.cpuMs === null ? null : result.cpuMs / provisioned,
    cpuMs: result.cpuMs,
    cpu: {
      ...cpu,
      controllerMs: result.cpuMs,
      serverMsPerProvision: cpu.serverMs / provisioned,
      driverMsPerProvision: cpu.driverMs / provisioned,
      coresBusy: (cpu.serverMs + cpu.driverMs + (result.cpuMs ?? 0)) / cpu.wallMs,
    },
    memory: result.memory,
    stopMs: result.stopMs,
    runError: result.runError,
  };
}

// ---- run -------------------------------------------------------------------------------------------------------

const runs = [];
const localPathRuns = [];
const runController = options.only !== 'local-path';
const runLocalPath = options.only !== 'controller';
let failed = false;
const started = new Date();
// Other work on the machine skews every figure; the 1/5/15-minute load average before the bench says how much there was.
const loadAverage = os.loadavg();
try {
  for (const t of runController ? options.threadiness : []) {
    log(`threadiness ${t}: raw PV creates, shared agent`);
    const rawShared = await rawRun(t, 'shared');
    let rawDefault = null;
    if (options.defaultAgent) {
      log(`threadiness ${t}: raw PV creates, client-node default agent`);
      // For context only: a failure here (EMFILE on a low descriptor limit) is reported, not fatal.
      rawDefault = await rawRun(t, 'default').catch((err) => {
        const cause = err instanceof Error && err.cause !== undefined ? ` (${String(err.cause)})` : '';
        log(`threadiness ${t}: default agent run failed: ${err instanceof Error ? err.message : String(err)}${cause}`);
        return { agent: 'default', inFlight: t, error: `${err instanceof Error ? err.message : String(err)}${cause}`, perSecond: NaN };
      });
    }
    log(`threadiness ${t}: controller, ${options.claims} claims`);
    const controller = await controllerRun(t);
    if (!controller.complete) failed = true;
    runs.push({ threadiness: t, controller, raw: { shared: rawShared, default: rawDefault }, ratio: controller.perSecond / rawShared.perSecond });
  }
  const lp = options.localPath;
  for (const claims of runLocalPath ? lp.claims : []) {
    for (const workers of lp.workers) {
      if (aborted) throw new Error('stopped');
      log(`local-path: ${claims} PVCs, ${workers} workers`);
      const timeoutMs = (lp.timeoutS ?? Math.ceil(60 + claims / 5)) * 1000;
      const setting = { claims, workers, qps: lp.qps, burst: lp.burst, nodes: lp.nodes, createConcurrency: options.createConcurrency, warmup: options.warmup, timeoutMs };
      const result = await localPathRun(setting, { tmpRoot, track: live, log, aborted: () => aborted }).catch((err) => {
        if (aborted) throw err;
        const cause = err instanceof Error && err.cause !== undefined ? ` (${String(err.cause)})` : '';
        log(`local-path ${claims} PVCs, ${workers} workers failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${cause}`);
        return { claims, workers, qps: lp.qps, burst: lp.burst, complete: false, error: `${err instanceof Error ? err.message : String(err)}${cause}` };
      });
      if (!result.complete) failed = true;
      localPathRuns.push(result);
    }
  }
} catch (err) {
  failed = true;
  const cause = err instanceof Error && err.cause !== undefined ? `\n  cause: ${String(err.cause)}` : '';
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${cause}`);
} finally {
  await cleanup();
}

// ---- report ----------------------------------------------------------------------------------------------------

function gitCommit() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty === '' ? commit : `${commit} (modified)`;
  } catch {
    return 'unknown';
  }
}

const meta = {
  date: started.toISOString(),
  durationS: (Date.now() - started.getTime()) / 1000,
  node: process.version,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  cpus: os.availableParallelism(),
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  loadAverage: loadAverage.map((l) => l.toFixed(2)).join(' '),
  commit: gitCommit(),
  options,
};

const MiB = 1024 * 1024;
const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const mib = (n) => f1(n / MiB);

function table() {
  const head = ['', ...runs.map((r) => `threadiness ${r.threadiness}`)];
  const rows = [];
  const row = (label, fn) => rows.push([label, ...runs.map(fn)]);
  row('claims provisioned', (r) => `${f0(r.controller.provisioned)} / ${f0(r.controller.claims)}${r.controller.complete ? '' : ' (timed out)'}`);
  row('**provisions/s** (first PVC created → last PV created)', (r) => `**${f0(r.controller.perSecond)}**`);
  row('PVC created → PV created, p50 / p95 / p99 (ms)', (r) => {
    const l = r.controller.latencyMs;
    return `${f1(l.p50)} / ${f1(l.p95)} / ${f1(l.p99)}`;
  });
  row('↳ PVC created → provision() called, p50 / p95 (ms)', (r) => {
    const l = r.controller.latencySplitMs.createdToProvisionCall;
    return `${f1(l.p50)} / ${f1(l.p95)}`;
  });
  row('↳ provision() called → PV created, p50 / p95 (ms)', (r) => {
    const l = r.controller.latencySplitMs.provisionCallToSaved;
    return `${f1(l.p50)} / ${f1(l.p95)}`;
  });
  row('raw PV creates/s, shared agent, *threadiness* in flight (ceiling)', (r) => f0(r.raw.shared.perSecond));
  row('**controller / raw**', (r) => `**${f2(r.ratio)}**`);
  if (options.defaultAgent) {
    row(`raw PV creates/s, client-node default agent (new connection per request; ${Math.min(options.claims, DEFAULT_AGENT_CREATES).toLocaleString('en-US')} creates)`, (r) =>
      r.raw.default?.error === undefined ? f0(r.raw.default?.perSecond) : 'failed, see JSON',
    );
    row('shared / default agent', (r) => `${f2(r.raw.shared.perSecond / (r.raw.default?.perSecond ?? NaN))}×`);
  }
  row(`load generator PVC creates/s (${options.createConcurrency} in flight)`, (r) => f0(r.controller.loadGenerator.perSecond));
  row('API requests per provision (controller, client side)', (r) => f2(r.controller.requests.perProvision));
  const verbs = [...new Set(runs.flatMap((r) => Object.keys(r.controller.requests.byVerb)))].sort();
  for (const v of verbs) row(`↳ ${v}`, (r) => f2((r.controller.requests.byVerb[v] ?? 0) / r.controller.provisioned));
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.controller.requests.byVerbResource)))].sort();
  for (const k of keys) row(`↳ ${k} (requests in all)`, (r) => f0(r.controller.requests.byVerbResource[k] ?? 0));
  row('CPU ms per provision: controller / server / load generator', (r) => {
    const c = r.controller.cpu;
    return `${f2(r.controller.cpuMsPerProvision)} / ${f2(c.serverMsPerProvision)} / ${f2(c.driverMsPerProvision)}`;
  });
  row('server CPU ms per raw PV create (shared agent)', (r) => f2(r.raw.shared.serverCpuMsPerCreate));
  row(`cores busy during the controller run (of ${os.availableParallelism()})`, (r) => f2(r.controller.cpu.coresBusy));
  row('controller RSS / heap used at start, informers synced (MiB)', (r) => `${mib(r.controller.memory.start.rss)} / ${mib(r.controller.memory.start.heapUsed)}`);
  row('controller RSS at end / peak (MiB)', (r) => `${mib(r.controller.memory.end.rss)} / ${mib(r.controller.memory.peak.rss)}`);
  row('controller heap used at end / peak (MiB)', (r) => `${mib(r.controller.memory.end.heapUsed)} / ${mib(r.controller.memory.peak.heapUsed)}`);
  row('controller heap used after full GC at end (MiB)', (r) => mib(r.controller.memory.afterGc.heapUsed));
  row('Events dropped, recorder queue full (of 2 per claim; `event_recorder_dropped_events_total`)', (r) => f0(r.controller.eventsDropped));
  row('duplicate provisions / failed attempts', (r) => `${r.controller.duplicates} / ${r.controller.failures}`);
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

const binderNote = options.binder
  ? 'PV binder **on** (claims get their storage-provisioner annotation from it, and are bound to their PVs)'
  : 'PV binder **off** (`--no-binder`): claims are created with the storage-provisioner annotations the binder would add, and stay Pending; `--binder` runs it';
const CONTROLLER_HEADING = '## kprov ProvisionController benchmark';
const markdown = [
  CONTROLLER_HEADING,
  '',
  `${meta.date} · ${options.claims.toLocaleString('en-US')} claims · binder ${options.binder ? 'on' : 'off'} · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.platform} · commit ${meta.commit}`,
  '',
  runs.length > 0 ? table() : '_no complete run_',
  '',
  `- Server: \`kprov-testkit serve --no-scheduler --no-kubelet\`, a fresh child process for each raw setting and each controller run, warmed up with ${options.warmup} untimed ConfigMap creates. ${binderNote}.`,
  `- Controller: its own process, leader election off, a trivial in-memory provisioner (hostPath PV template at once). PVCs come from a load generator in the driver process, ${options.createConcurrency} creates in flight, while the controller runs.`,
  '- Provisions/s: claims provisioned ÷ (first PVC create response → last PV saved). Latency: PVC create response (load generator) → `provisioned` event, i.e. PV create response (controller); both clocks are `performance.timeOrigin + now()` on this machine.',
  "- Requests: every request on the controller's shared agent from start to stop (informer lists and watches, PV creates, Events), divided by claims provisioned.",
  `- Raw: \`createPersistentVolume\` with *threadiness* requests in flight, median of ${options.rawRepeats} runs on one server; shared keep-alive agent (\`makeApiClient\`) vs \`kc.makeApiClient\` (client-node 2.0.1: a new undici Agent, so a new connection, per request, left open until the server's keep-alive timeout; capped at ${DEFAULT_AGENT_CREATES.toLocaleString('en-US')} creates per run, as 10,000 run out of file descriptors).`,
  '- CPU: user + system time from the controller\'s first `started` event to its last provision (controller: `process.cpuUsage`; server: `/proc/<pid>/stat`; load generator: the driver process).',
  '',
].join('\n');

const localPathSection = runLocalPath ? localPathMarkdown(localPathRuns, meta, { ...options.localPath, createConcurrency: options.createConcurrency }) : undefined;
if (runController) process.stdout.write(`\n${markdown}\n`);
if (localPathSection !== undefined) process.stdout.write(`\n${localPathSection}\n`);

if (options.write && (runs.length > 0 || localPathRuns.length > 0)) {
  await mkdir(RESULTS, { recursive: true });
  const stamp = meta.date.replace(/[:.]/g, '-');
  const json = join(RESULTS, `${stamp}.json`);
  await writeFile(json, `${JSON.stringify({ meta, runs, localPath: localPathRuns }, null, 2)}\n`);
  await writeLatest(
    join(RESULTS, 'latest.md'),
    new Map([
      [CONTROLLER_HEADING, runController && runs.length > 0 ? markdown : undefined],
      [LOCAL_PATH_HEADING, localPathRuns.length > 0 ? localPathSection : undefined],
    ]),
  );
  log(`wrote ${json} and bench/results/latest.md (${meta.durationS.toFixed(0)} s)`);
}
process.exitCode = failed ? 1 : 0;
