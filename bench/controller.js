// The controller under test, in its own process (forked by run.js with IPC and --expose-gc), so that its memory,
// CPU time and API requests are its own. Configuration comes in KPROV_BENCH_CONFIG (JSON):
// { kubeconfig, threadiness, qps?, burst?, backlog?, warmup? } (qps/burst: a client-side rate limit,
// setClientRateLimit; backlog: claims pending before the start, timed from run(); warmup: { claims, provisionerName }).
//
// It loads only the library and client-node, from the module named by KPROV_BENCH_BINARY (provisioner-binary.js:
// bundled as the provisioner binaries are, unless the bench runs with --unbundled), as a provisioner binary would: not
// the testkit.
//
// Messages to the parent: { type: 'running' } after a warm-up, as the timed controller starts; { type: 'started',
// memory, execArgv, allocator } once the informers have synced; after { type: 'burst', expected }
// (the total of distinct claims provisioned once the burst is done), { type: 'allProvisioned', cpuMs, wallMs,
// memory, times } when that many were provisioned, CPU and wall time counted from the 'burst' message; after
// { type: 'snapshot' }, { type: 'snapshot', memory } after two full GCs; { type: 'result', ... } after
// { type: 'stop' }.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';
import v8 from 'node:v8';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { pathToFileURL } from 'node:url';
import { classify, now, PROVISIONER_NAME } from './lean.js';

const config = JSON.parse(process.env.KPROV_BENCH_CONFIG ?? '{}');
const lib = await import(pathToFileURL(process.env.KPROV_BENCH_BINARY ?? '').href);
const send = (message) =>
  new Promise((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, () => resolve());
  });
// Never outlive the driver.
let finished = false;
process.on('disconnect', () => {
  if (!finished) process.exit(2);
});

const kc = new lib.KubeConfig();
kc.loadFromFile(config.kubeconfig);
if (config.qps !== undefined) lib.setClientRateLimit(kc, { qps: config.qps, burst: config.burst });

// Client-side request counts: every request the controller makes (informers' lists and watches, PV writes, Events)
// goes through the library's keep-alive pool of its KubeConfig, Node.js's own HTTP client, so wrap the agents'
// addRequest (leader election is off: no Lease requests). It counts by method and path, and names them
// (`create persistentvolumes`) only in the result: the wrapper runs in the measured process.
const rawRequests = new Map();
const http = createRequire(import.meta.url)('node:http');
const addRequest = http.Agent.prototype.addRequest;
http.Agent.prototype.addRequest = function countedAddRequest(req, options) {
  const key = `${req.method ?? 'GET'} ${req.path ?? '/'}`;
  rawRequests.set(key, (rawRequests.get(key) ?? 0) + 1);
  return addRequest.call(this, req, options);
};
const requests = {
  clear: () => rawRequests.clear(),
  named() {
    const named = new Map();
    for (const [key, n] of rawRequests) {
      const space = key.indexOf(' ');
      const { verb, resource } = classify(key.slice(0, space), key.slice(space + 1));
      named.set(`${verb} ${resource}`, (named.get(`${verb} ${resource}`) ?? 0) + n);
    }
    return named;
  },
};

// A logger that only counts messages, to report retries and errors (in the JSON results).
const logCounts = new Map();
const count = (level) => (fields, message) => {
  const reason = typeof fields?.reason === 'string' && /watch|Relisting/.test(message) ? ` (${fields.reason})` : '';
  const key = `${level}: ${message}${reason}`;
  logCounts.set(key, (logCounts.get(key) ?? 0) + 1);
};
const logger = { error: count('error'), warn: count('warn'), info: count('info'), debug: count('debug') };
logger.child = () => logger;

/**
 * Claims' first provision() call and PV save times (uid → ms) not yet sent to the driver: each message that ends a
 * burst (and the result) takes them, so that the bench's own bookkeeping in this process, whose memory is measured,
 * does not grow with the claims.
 */
const provisionCalled = new Map();
const savedAt = new Map();
/** The claims the timed controller provisioned so far (uids), for the count and for duplicates. */
const provisioned = new Set();
const takeTimes = () => {
  const times = { provisioned: [...savedAt], provisionCalled: [...provisionCalled] };
  savedAt.clear();
  provisionCalled.clear();
  return times;
};

/** The trivial provisioner: a hostPath PV template, at once; deleting does nothing. */
const provisioner = {
  async provision({ pvName, pvc, storageClass }) {
    const uid = pvc.metadata?.uid ?? '';
    if (!provisionCalled.has(uid) && !provisioned.has(uid)) provisionCalled.set(uid, now());
    return {
      volume: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: pvName },
        spec: {
          capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
          accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
          // Deleting the bench's PVs is the driver's business, not the controller's (it has stopped by then).
          hostPath: { path: `/var/lib/kprov-bench/${pvName}` },
        },
      },
    };
  },
  async delete() {},
};

// A metrics sink that keeps only the event recorder's drop counter, by reason.
const eventsDropped = {};
const noop = { inc: () => undefined, dec: () => undefined, set: () => undefined, observe: () => undefined };
const metrics = {
  counter: (o) =>
    o.name === lib.EVENT_RECORDER_DROPPED_EVENTS
      ? { inc: (labels, value = 1) => (eventsDropped[labels.reason] = (eventsDropped[labels.reason] ?? 0) + value) }
      : noop,
  gauge: () => noop,
  histogram: () => noop,
};

// With `warmup`, a controller of another provisioner name first provisions that many claims of its own class, untimed,
// and stops (its Events written), says { type: 'warmed' } and waits for { type: 'go' }: the timed controller then runs
// on warm code, as the raw creates it is compared with do. Its requests, logs and metrics are not counted.
if (config.warmup !== undefined) {
  const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
  quiet.child = () => quiet;
  const warm = new lib.ProvisionController({
    kubeConfig: kc,
    provisionerName: config.warmup.provisionerName,
    provisioner,
    threadiness: config.threadiness,
    leaderElection: false,
    logger: quiet,
  });
  const stopWarm = new globalThis.AbortController();
  let warmed = 0;
  const allWarm = new Promise((resolve) =>
    warm.on('provisioned', () => {
      warmed += 1;
      if (warmed >= config.warmup.claims) resolve();
    }),
  );
  const warmRun = warm.run(stopWarm.signal);
  await Promise.race([allWarm, warmRun]);
  stopWarm.abort();
  await warmRun;
  requests.clear();
  provisionCalled.clear();
  // The driver now deletes the warm-up's claims and PVs (the timed controller's informers would list them) and
  // creates the claims of the timed run.
  const go = new Promise((resolve) => {
    const onMessage = (message) => {
      if (message?.type !== 'go') return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
  await send({ type: 'warmed' });
  await go;
}

const controller = new lib.ProvisionController({
  kubeConfig: kc,
  provisionerName: PROVISIONER_NAME,
  provisioner,
  threadiness: config.threadiness,
  leaderElection: false,
  logger,
  metrics,
});

let duplicates = 0;
let failures = 0;
let memAtStart;
/** The burst under way: { expected, cpuAtStart, wallAtStart } until its last claim is provisioned. */
let burst;

/** The malloc this process runs with: jemalloc when kprov-node.sh preloaded it (see docker/kprov-node.sh), else glibc's. */
function allocator() {
  try {
    return readFileSync('/proc/self/maps', 'utf8').includes('libjemalloc') ? 'jemalloc' : 'glibc';
  } catch {
    return 'unknown';
  }
}

const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0 };
const sample = () => {
  const m = process.memoryUsage();
  for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  return m;
};
const sampler = setInterval(sample, 50);

controller.on('started', () => {
  // Not with claims pending: the workers start right after this handler, inside the timed run.
  if (typeof config.backlog !== 'number') {
    globalThis.gc?.();
    globalThis.gc?.();
  }
  memAtStart = sample();
  void send({ type: 'started', memory: memAtStart, execArgv: process.execArgv, allocator: allocator() });
});

function burstDone() {
  const cpu = process.cpuUsage(burst.cpuAtStart);
  const wallMs = now() - burst.wallAtStart;
  burst = undefined;
  const memory = sample();
  void send({ type: 'allProvisioned', cpuMs: (cpu.user + cpu.system) / 1000, wallMs, memory, times: takeTimes() });
}
controller.on('provisionFailed', () => {
  failures += 1;
});
controller.on('provisioned', (claim) => {
  const t = now();
  const uid = claim.metadata?.uid ?? '';
  if (provisioned.has(uid)) {
    duplicates += 1;
    return;
  }
  provisioned.add(uid);
  savedAt.set(uid, t);
  if (burst !== undefined && provisioned.size >= burst.expected) burstDone();
});

const stop = new globalThis.AbortController();
// After a warm-up, the driver counts the servers' CPU time of the run from here.
if (config.warmup !== undefined) await send({ type: 'running' });
// Claims created before this process started: the first burst starts with run().
if (typeof config.backlog === 'number')
  burst = { expected: config.backlog, cpuAtStart: process.cpuUsage(), wallAtStart: now() };
const running = controller.run(stop.signal);
let runError;
running.catch((err) => {
  runError = err;
});

process.on('message', (message) => {
  if (message?.type === 'burst') {
    burst = { expected: message.expected, cpuAtStart: process.cpuUsage(), wallAtStart: now() };
    if (provisioned.size >= burst.expected) burstDone();
    return;
  }
  if (message?.type === 'snapshot') {
    // What the caches and queues keep alive once the work is done (`gc: false`: as the process is, no GC forced).
    if (message.gc !== false) {
      globalThis.gc?.();
      globalThis.gc?.();
    }
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
    );
    void send({ type: 'snapshot', memory: { ...process.memoryUsage(), spaces }, provisioned: provisioned.size });
    return;
  }
  if (message?.type !== 'stop') return;
  void (async () => {
    const stopStarted = now();
    stop.abort();
    let timer;
    await Promise.race([
      running.catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, 15_000))),
    ]);
    clearTimeout(timer);
    const stopMs = now() - stopStarted;
    clearInterval(sampler);
    await send({
      type: 'result',
      ...takeTimes(),
      provisionedCount: provisioned.size,
      duplicates,
      failures,
      requests: Object.fromEntries([...requests.named()].sort((a, b) => b[1] - a[1])),
      logs: Object.fromEntries([...logCounts].sort((a, b) => b[1] - a[1])),
      eventsDropped,
      memory: { start: memAtStart, peak, gcExposed: typeof globalThis.gc === 'function' },
      stopMs,
      runError: runError === undefined ? null : lib.describeError(runError),
    });
    finished = true;
    process.disconnect();
  })();
});
