// The ProvisionController part of `pnpm bench` (run.js), on one kind of server: `kprov-testkit serve` (tier
// `testkit`) or a real control plane from $KUBEBUILDER_ASSETS (tier `real`). See bench/README.md.
import { execFile, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, URL } from 'node:url';
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
  startRealServer,
  startServer,
  STORAGE_CLASS,
  waitForExit,
} from './common.js';

const CONTROLLER_JS = fileURLToPath(new URL('./controller.js', import.meta.url));
const BASELINE_JS = fileURLToPath(new URL('./baseline.js', import.meta.url));

/**
 * client-node's default agent leaves every connection open until the server's keep-alive timeout (60 s for the
 * testkit, so about 58 s), one per request: 10,000 requests run out of file descriptors (EMFILE). Its runs are capped.
 */
export const DEFAULT_AGENT_CREATES = 1000;

/**
 * The class and provisioner name of the claims a controller process provisions, untimed, before its run with pending
 * claims (see `warmup` in controller.js); the timed controller leaves them alone (not its provisioner name).
 */
const WARMUP_PROVISIONER = 'bench.kprov.dev/warmup';
const WARMUP_CLASS = 'bench-warmup';

/** Buffers a child's IPC messages by type, so none is missed between waits. */
function messagesOf(child) {
  const got = new Map();
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.type);
    if (w === undefined) got.set(m.type, [...(got.get(m.type) ?? []), m]);
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
    const queued = got.get(type);
    if (queued !== undefined && queued.length > 0) return Promise.resolve(queued.shift());
    if (child.exitCode !== null || child.signalCode !== null)
      return Promise.reject(new Error('controller process has exited'));
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
 * A PV shaped as the controller writes it for a claim (a `pvc-<uid>` name, the provisioned-by annotation, a claimRef
 * and the class; the trivial provisioner's hostPath spec): the server's cost per create grows with the object, so
 * the ceiling is measured on the same objects. `claim` names a claim that does not exist (no binder runs there).
 */
function provisionedVolume(claim) {
  const pv = hostPathVolume(`pvc-${randomUUID()}`);
  pv.metadata.annotations = { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME };
  pv.spec.claimRef = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace: 'default',
    name: claim,
    uid: randomUUID(),
    resourceVersion: '1',
  };
  pv.spec.storageClassName = STORAGE_CLASS;
  return pv;
}

/** Creates a StorageClass unless it exists (a later round on the same server). */
async function createIfAbsent(storage, request) {
  try {
    await storage.createStorageClass(request);
  } catch (err) {
    if (err?.code !== 409) throw err;
  }
}

const dist = (xs) => {
  xs.sort((a, b) => a - b);
  return { p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), max: xs.at(-1) ?? NaN };
};

/**
 * Runs the controller part on one tier. `ctx`: { tmpRoot, live (a Set of what to stop on Ctrl-C), log, aborted(), node
 * ({ execPath, env }: how to start the controller process's Node.js, see `nodeLauncher`) }.
 * Returns { tier, runs, qps, cache }: one run per threadiness (raw ceilings and controller bursts), the rate-limited
 * run and the cache-filling run (null when skipped).
 */
export async function controllerPart(tier, options, ctx) {
  const { log } = ctx;
  const say = (m) => log(`${tier}: ${m}`);

  /**
   * A fresh server for one setting, warmed up, stopped and removed afterwards. `pvBinder` (real tier): whether
   * kube-controller-manager binds the PVs (the testkit's binder follows `--binder`).
   */
  async function withServer(name, fn, { pvBinder = true } = {}) {
    if (ctx.aborted()) throw new Error('stopped');
    const dir = await mkdtemp(join(ctx.tmpRoot, `${tier}-${name}-`));
    let server;
    if (tier === 'real') {
      say(`${name}: starting a control plane`);
      server = await startRealServer({ pvBinder, track: ctx.live });
    } else {
      const s = await startServer(dir, { binder: options.binder, track: ctx.live });
      server = {
        kubeconfig: s.kubeconfig,
        serverCpuMs: () => procCpuMs(s.child.pid),
        kcmCpuMs: () => NaN,
        stop: async () => {
          await s.stop();
          ctx.live.delete(s.child);
        },
      };
    }
    const kc = loadKubeConfig(server.kubeconfig);
    try {
      if (options.warmup > 0) {
        const core = lib.makeApiClient(kc, k8s.CoreV1Api);
        await pool(options.warmup, 8, (i) =>
          core.createNamespacedConfigMap({
            namespace: 'default',
            body: { metadata: { name: `warmup-${i}` }, data: { i: String(i) } },
          }),
        );
      }
      return await fn(kc, server);
    } finally {
      await lib
        .sharedAgent(kc)
        .close()
        .catch(() => undefined);
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Raw PV creates straight to the server, `inFlight` at a time: the ceiling for the controller's PV writes. The
   * median of `--raw-repeats` runs of `--claims` creates (a run takes a fraction of a second, and one GC pause of the
   * server moves it).
   */
  async function rawRun(kc, server, inFlight, agentKind, prefix) {
    const creates = agentKind === 'shared' ? options.claims : Math.min(options.claims, DEFAULT_AGENT_CREATES);
    const core = agentKind === 'shared' ? lib.makeApiClient(kc, k8s.CoreV1Api) : kc.makeApiClient(k8s.CoreV1Api);
    await pool(inFlight, inFlight, () => core.readNamespace({ name: 'default' })); // open the connections
    const reps = [];
    for (let r = 0; r < options.rawRepeats; r++) {
      const serverCpu = server.serverCpuMs();
      const ownCpu = process.cpuUsage();
      const start = now();
      await pool(creates, inFlight, (i) =>
        core.createPersistentVolume({ body: provisionedVolume(`${prefix}-${agentKind}-${r}-${i}`) }),
      );
      const ms = now() - start;
      const own = process.cpuUsage(ownCpu);
      reps.push({
        ms,
        perSecond: (creates / ms) * 1000,
        serverCpuMsPerCreate: (server.serverCpuMs() - serverCpu) / creates,
        clientCpuMsPerCreate: (own.user + own.system) / 1000 / creates,
      });
    }
    const median = [...reps].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(reps.length / 2)];
    return { agent: agentKind, inFlight, creates, ...median, repeats: reps };
  }

  /**
   * Rounds of (the controller with claims pending, then raw PV creates) on one server, each round on the same
   * objects: the server's speed drifts from second to second on a shared machine, so the controller is compared
   * with the ceiling measured right after it, and the round reported is the one whose ratio is the median.
   */
  async function pairedRounds(kc, server, threadiness) {
    // Untimed raw creates first: the server's create path and the driver's client reach the speed they keep
    // (on the testkit the ceiling of a first run is about half that of a fifth).
    say(`threadiness ${threadiness}: warming up with untimed raw PV creates`);
    await rawRun(kc, server, threadiness, 'shared', 'warmup');
    const rounds = [];
    for (let r = 0; r < options.rounds; r++) {
      await clearClaimsAndVolumes(kc);
      const round = `threadiness ${threadiness}, round ${r + 1} of ${options.rounds}`;
      say(`${round}: controller, ${options.claims} claims pending at its start`);
      const backlog = await controllerRun(kc, server, threadiness, [options.claims], undefined, 0, true);
      say(`${round}: raw PV creates, shared agent`);
      const raw = await rawRun(kc, server, threadiness, 'shared', `raw-${r}`);
      rounds.push({ backlog, raw, ratio: backlog.bursts[0].perSecond / raw.perSecond });
    }
    const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
    return {
      ...median,
      rounds: rounds.map((r) => ({ perSecond: r.backlog.bursts[0].perSecond, raw: r.raw.perSecond, ratio: r.ratio })),
    };
  }

  /** Deletes the claims, PVs and Events in the cluster and waits until the server has none left. */
  async function clearClaimsAndVolumes(kc) {
    const core = lib.makeApiClient(kc, k8s.CoreV1Api);
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace: 'default' });
    await core.deleteCollectionPersistentVolume({});
    await core.deleteCollectionNamespacedEvent({ namespace: 'default' });
    const until = now() + 60_000;
    for (;;) {
      const [claims, volumes] = await Promise.all([
        core.listNamespacedPersistentVolumeClaim({ namespace: 'default', limit: 1 }),
        core.listPersistentVolume({ limit: 1 }),
      ]);
      if (claims.items.length === 0 && volumes.items.length === 0) return;
      if (now() > until) throw new Error('the claims and PVs were not gone 60 s after their deletion');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Without the binder, the claim carries what the binder would add for an Immediate class of an external
   * provisioner (kube-controller-manager's PV controller does the same), which is what tells the provisioner to act.
   */
  function claimBody(name, storageClassName = STORAGE_CLASS, provisionerName = PROVISIONER_NAME) {
    const annotations =
      options.binder && tier === 'testkit'
        ? {}
        : {
            annotations: {
              'volume.kubernetes.io/storage-provisioner': provisionerName,
              'volume.beta.kubernetes.io/storage-provisioner': provisionerName,
            },
          };
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'default', ...annotations },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName,
        resources: { requests: { storage: '1Gi' } },
      },
    };
  }

  /**
   * One ProvisionController (its own process) through `bursts` of claims, one after another: each burst's claims are
   * created by the load generator while the controller runs, then the driver waits for the last PV and takes a
   * memory snapshot after full GCs. `limit`: a client-side rate limit { qps, burst } for the controller.
   */
  async function controllerRun(kc, server, threadiness, bursts, limit, idleMs = 0, backlog = false) {
    const storage = lib.makeApiClient(kc, k8s.StorageV1Api);
    await createIfAbsent(storage, {
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: STORAGE_CLASS },
        provisioner: PROVISIONER_NAME,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    if (ctx.aborted()) throw new Error('stopped');
    const core = lib.makeApiClient(kc, k8s.CoreV1Api);
    const created = new Map();
    /** With `backlog`, the first burst's claims, created before the controller process starts (after its warm-up). */
    let pending;
    const warmup = backlog ? options.controllerWarmup : 0;
    if (warmup > 0) {
      // Claims for the controller process to provision untimed before its timed run, so that the run with pending
      // claims measures warm code, as the raw creates it is compared with do.
      await createIfAbsent(storage, {
        body: {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name: WARMUP_CLASS },
          provisioner: WARMUP_PROVISIONER,
          reclaimPolicy: 'Delete',
          volumeBindingMode: 'Immediate',
        },
      });
      await pool(warmup, options.createConcurrency, (i) =>
        core.createNamespacedPersistentVolumeClaim({
          namespace: 'default',
          body: claimBody(`warmup-${i}`, WARMUP_CLASS, WARMUP_PROVISIONER),
        }),
      );
    }
    const createBacklog = async () => {
      const uids = new Set();
      const createStart = now();
      await pool(bursts[0], options.createConcurrency, async (i) => {
        const pvc = await core.createNamespacedPersistentVolumeClaim({
          namespace: 'default',
          body: claimBody(`claim-0-${i}`),
        });
        const uid = pvc.metadata?.uid ?? '';
        created.set(uid, now());
        uids.add(uid);
      });
      pending = { uids, createMs: now() - createStart };
    };
    if (backlog && warmup === 0) await createBacklog();
    const child = fork(CONTROLLER_JS, [], {
      execPath: ctx.node.execPath,
      execArgv: ['--expose-gc', ...options.controllerNodeArgs],
      env: {
        ...process.env,
        ...ctx.node.env,
        KPROV_BENCH_CONFIG: JSON.stringify({
          kubeconfig: server.kubeconfig,
          threadiness,
          ...(limit ?? {}),
          ...(backlog ? { backlog: bursts[0] } : {}),
          ...(warmup > 0 ? { warmup: { claims: warmup, provisionerName: WARMUP_PROVISIONER } } : {}),
        }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    ctx.live.add(child);
    const next = messagesOf(child);
    const label = `threadiness ${threadiness}${limit === undefined ? '' : `, QPS ${limit.qps}/burst ${limit.burst}`}`;
    let result;
    // The claims' provision() call and PV save times, as the controller process sends them (with each burst's end and
    // with its result).
    const times = { provisioned: [], provisionCalled: [] };
    const takeTimes = (message) => {
      for (const entry of message.provisioned) times.provisioned.push(entry);
      for (const entry of message.provisionCalled) times.provisionCalled.push(entry);
    };
    try {
      if (warmup > 0) {
        // The warm-up's claims and PVs go before the timed claims come, so that the timed controller lists only its
        // own; then the run starts when the process says so (its message comes just before run()).
        await next('warmed', 60_000 + warmup * 100);
        await clearClaimsAndVolumes(kc);
        await createBacklog();
        child.send({ type: 'go' });
        await next('running', 60_000);
      }
      const runServerCpu = server.serverCpuMs();
      const runKcmCpu = server.kcmCpuMs();
      const runDriverCpu = process.cpuUsage();
      const runWallStart = now();
      const started = await next('started', 60_000);
      const syncMs = now() - runWallStart;
      say(`${label}: controller started`);
      const burstResults = [];
      let total = 0;
      let complete = true;
      for (const [b, claims] of bursts.entries()) {
        total += claims;
        const backlogged = b === 0 && pending !== undefined;
        if (!backlogged) child.send({ type: 'burst', expected: total });
        const serverCpu = backlogged ? runServerCpu : server.serverCpuMs();
        const kcmCpu = backlogged ? runKcmCpu : server.kcmCpuMs();
        const driverCpu = backlogged ? runDriverCpu : process.cpuUsage();
        const wallStart = backlogged ? runWallStart : now();
        let uids = new Set();
        let createMs;
        if (backlogged) ({ uids, createMs } = pending);
        else {
          const createStart = now();
          await pool(claims, options.createConcurrency, async (i) => {
            const pvc = await core.createNamespacedPersistentVolumeClaim({
              namespace: 'default',
              body: claimBody(`claim-${b}-${i}`),
            });
            const uid = pvc.metadata?.uid ?? '';
            created.set(uid, now());
            uids.add(uid);
          });
          createMs = now() - createStart;
        }
        let done;
        const timeoutMs = limit === undefined ? options.timeoutMs : Math.ceil(60 + (claims * 3) / limit.qps) * 1000;
        try {
          done = await next('allProvisioned', timeoutMs);
          takeTimes(done.times);
        } catch (err) {
          complete = false;
          say(
            `${label}: burst ${b + 1}: ${err instanceof Error ? err.message : String(err)}; stopping with partial results`,
          );
        }
        const driver = process.cpuUsage(driverCpu);
        const cpu = {
          wallMs: now() - wallStart,
          serverMs: server.serverCpuMs() - serverCpu,
          kcmMs: server.kcmCpuMs() - kcmCpu,
          driverMs: (driver.user + driver.system) / 1000,
        };
        if (done === undefined) {
          burstResults.push({ claims, complete: false, uids, createMs, cpu });
          break;
        }
        child.send({ type: 'snapshot' });
        const snapshot = await next('snapshot', 30_000);
        say(`${label}: burst ${b + 1} (${claims} claims) provisioned`);
        burstResults.push({
          claims,
          complete: true,
          uids,
          createMs,
          cpu,
          controllerCpuMs: done.cpuMs,
          memory: done.memory,
          afterGc: snapshot.memory,
          ...(backlogged ? { runMs: done.wallMs, syncMs } : {}),
        });
      }
      if (limit !== undefined && complete) {
        // Under a client-side limit the Events trail the PVs (they wait at low priority): give them the time their
        // requests take at the limit, so that the run shows whether any was lost.
        const expected = 2 * total;
        const until = now() + ((expected / limit.qps) * 1000 + 30_000);
        let written = 0;
        while (now() < until && !ctx.aborted()) {
          written = Object.values(await eventsWritten(core)).reduce((n, e) => n + e.objects, 0);
          if (written >= expected) break;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        say(`${label}: ${written} of ${expected} Events written`);
      }
      let idle;
      if (idleMs > 0 && complete) {
        // RSS once the controller has been idle a while: V8 gives back young-generation space it grew during the
        // bursts only when allocation slows down (its memory reducer), not on a forced GC.
        say(`${label}: idle for ${idleMs / 1000} s`);
        const samples = [];
        const until = now() + idleMs;
        while (now() < until && !ctx.aborted()) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          child.send({ type: 'snapshot', gc: false });
          samples.push((await next('snapshot', 30_000)).memory);
        }
        // Then what stays once the Events queued during the bursts are written and the garbage is collected.
        child.send({ type: 'snapshot' });
        const afterGc = (await next('snapshot', 30_000)).memory;
        idle = { ms: idleMs, end: samples.at(-1), minRss: Math.min(...samples.map((m) => m.rss)), afterGc };
      }
      child.send({ type: 'stop' });
      result = await next('result', 60_000);
      takeTimes(result);
      result = { ...result, ...times };
      say(`${label}: controller stopped in ${result.stopMs.toFixed(0)} ms`);
      const events = await eventsWritten(core);
      return {
        ...summarize(threadiness, limit, result, created, burstResults, started.memory, events, complete),
        idle: idle ?? null,
        execArgv: started.execArgv,
        allocator: started.allocator,
      };
    } finally {
      if (result === undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child, 15_000);
      ctx.live.delete(child);
    }
  }

  /** Memory of a process that imports what the controller imports and loads the KubeConfig, nothing more. */
  async function baselineMemory(kubeconfig) {
    const out = await new Promise((resolve, reject) => {
      execFile(
        ctx.node.execPath,
        ['--expose-gc', ...options.controllerNodeArgs, BASELINE_JS, kubeconfig],
        { env: { ...process.env, ...ctx.node.env } },
        (err, stdout) => (err === null ? resolve(stdout) : reject(err)),
      );
    });
    return JSON.parse(out);
  }

  /** The controller's Events in `default`: objects and their total count, by reason. */
  async function eventsWritten(core) {
    const byReason = {};
    let token;
    do {
      const page = await core.listNamespacedEvent({
        namespace: 'default',
        limit: 500,
        ...(token === undefined ? {} : { _continue: token }),
      });
      for (const e of page.items) {
        if (!(e.source?.component ?? '').startsWith(PROVISIONER_NAME)) continue;
        const r = (byReason[e.reason ?? ''] ??= { objects: 0, count: 0 });
        r.objects += 1;
        r.count += e.count ?? 1;
      }
      token = page.metadata?._continue || undefined;
    } while (token !== undefined);
    return byReason;
  }

  function summarize(threadiness, limit, result, created, bursts, startMemory, events, complete) {
    const provisionedAt = new Map(result.provisioned);
    // The first call of each claim (a later one is a retry).
    const called = new Map([...result.provisionCalled].reverse());
    const burstSummaries = bursts.map((b) => {
      const latencies = [];
      const toCall = [];
      const toSave = [];
      let first = Infinity;
      let last = 0;
      let provisioned = 0;
      for (const uid of b.uids) {
        const c = created.get(uid);
        first = Math.min(first, c);
        const t = provisionedAt.get(uid);
        if (t === undefined) continue;
        provisioned += 1;
        last = Math.max(last, t);
        latencies.push(t - c);
        const p = called.get(uid);
        if (p !== undefined) {
          toCall.push(p - c);
          toSave.push(t - p);
        }
      }
      // A backlog (claims created before the controller started) counts from the controller's run() to the last PV.
      const spanMs = b.runMs ?? last - first;
      return {
        claims: b.claims,
        provisioned,
        complete: b.complete,
        spanMs,
        perSecond: (provisioned / spanMs) * 1000,
        backlog: b.runMs !== undefined,
        syncMs: b.syncMs ?? NaN,
        latencyMs: dist(latencies),
        latencySplitMs: { createdToProvisionCall: dist(toCall), provisionCallToSaved: dist(toSave) },
        loadGenerator: {
          concurrency: options.createConcurrency,
          ms: b.createMs,
          perSecond: (b.claims / b.createMs) * 1000,
        },
        cpuMsPerProvision: (b.controllerCpuMs ?? NaN) / provisioned,
        cpu: {
          ...b.cpu,
          controllerMs: b.controllerCpuMs ?? NaN,
          serverMsPerProvision: b.cpu.serverMs / provisioned,
          kcmMsPerProvision: b.cpu.kcmMs / provisioned,
          driverMsPerProvision: b.cpu.driverMs / provisioned,
          coresBusy:
            (b.cpu.serverMs +
              (Number.isNaN(b.cpu.kcmMs) ? 0 : b.cpu.kcmMs) +
              b.cpu.driverMs +
              (b.controllerCpuMs ?? 0)) /
            b.cpu.wallMs,
        },
        memory: b.memory,
        afterGc: b.afterGc,
      };
    });
    const provisioned = result.provisionedCount;
    const byVerb = {};
    let total = 0;
    for (const [key, n] of Object.entries(result.requests)) {
      const verb = key.split(' ')[0];
      byVerb[verb] = (byVerb[verb] ?? 0) + n;
      total += n;
    }
    return {
      threadiness,
      limit: limit ?? null,
      complete: complete && burstSummaries.every((b) => b.complete),
      provisioned,
      duplicates: result.duplicates,
      failures: result.failures,
      bursts: burstSummaries,
      requests: { total, perProvision: total / provisioned, byVerb, byVerbResource: result.requests },
      eventsDropped: result.eventsDropped.queue_full ?? 0,
      eventsDroppedByReason: result.eventsDropped,
      eventsWritten: events,
      logs: result.logs,
      memory: { start: startMemory, peak: result.memory.peak },
      stopMs: result.stopMs,
      runError: result.runError,
    };
  }

  const runs = [];
  for (const t of options.threadiness) {
    const bursts =
      t === Math.max(...options.threadiness) && options.latencyClaims > 0
        ? [options.claims, options.latencyClaims, options.claims, options.latencyClaims]
        : [options.claims];
    let rawDefault = null;
    if (tier === 'testkit' && options.defaultAgent) {
      say(`threadiness ${t}: raw PV creates, client-node default agent`);
      // For context only: a failure here (EMFILE on a low descriptor limit) is reported, not fatal.
      rawDefault = await withServer(`raw-default-${t}`, (kc, server) => rawRun(kc, server, t, 'default', 'raw')).catch(
        (err) => {
          const message = err instanceof Error ? err.message : String(err);
          say(`threadiness ${t}: default agent run failed: ${message}`);
          return { agent: 'default', inFlight: t, error: message, perSecond: NaN };
        },
      );
    }
    // On a real control plane kube-controller-manager's PV binder is off on this server, as the testkit's binder is:
    // binding the PVs as they come is work of the server that the raw PV creates do not have.
    const paired = await withServer(`backlog-${t}`, (kc, server) => pairedRounds(kc, server, t), { pvBinder: false });
    const controller = await withServer(`threadiness-${t}`, async (kc, server) => {
      say(`threadiness ${t}: controller, bursts of ${bursts.join(', ')} claims`);
      return controllerRun(kc, server, t, bursts);
    });
    runs.push({
      threadiness: t,
      controller,
      backlog: paired.backlog,
      raw: { shared: paired.raw, default: rawDefault },
      ratio: paired.ratio,
      rounds: paired.rounds,
      burstRatio: controller.bursts[0].perSecond / paired.raw.perSecond,
    });
  }

  let qps = null;
  if (options.qpsClaims > 0) {
    const t = Math.max(...options.threadiness);
    const limit = { qps: options.qps, burst: options.qpsBurst };
    say(`threadiness ${t}, QPS ${limit.qps}/burst ${limit.burst}: controller, ${options.qpsClaims} claims`);
    qps = await withServer(`qps-${t}`, (kc, server) => controllerRun(kc, server, t, [options.qpsClaims], limit));
  }

  let cache = null;
  if (options.cacheClaims > 0) {
    const t = Math.max(...options.threadiness);
    const bursts = [];
    for (let left = options.cacheClaims; left > 0; left -= options.claims) bursts.push(Math.min(options.claims, left));
    say(
      `threadiness ${t}: controller until ${options.cacheClaims} claims and PVs are cached, bursts of ${options.claims}`,
    );
    cache = await withServer(`cache-${t}`, async (kc, server) => {
      const baseline = await baselineMemory(server.kubeconfig);
      return { ...(await controllerRun(kc, server, t, bursts, undefined, options.idleS * 1000)), baseline };
    });
  }
  return { tier, runs, qps, cache };
}

const MiB = 1024 * 1024;
const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const mib = (n) => f1(n / MiB);
const line = (cells) => `| ${cells.join(' | ')} |`;
const grid = (head, rows) =>
  [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
const memPair = (m) => (m === undefined ? '–' : `${mib(m.rss)} / ${mib(m.heapUsed)}`);
const eventsCell = (events) =>
  Object.entries(events)
    .sort()
    .map(([reason, e]) => `${reason} ${f0(e.objects)}${e.count === e.objects ? '' : ` (count ${f0(e.count)})`}`)
    .join(', ') || 'none';

function mainTable(part, options) {
  const { runs } = part;
  const head = ['', ...runs.map((r) => `threadiness ${r.threadiness}`)];
  const rows = [];
  const row = (label, fn) => rows.push([label, ...runs.map(fn)]);
  const first = (r) => r.controller.bursts[0];
  const pending = (r) => r.backlog.bursts[0];
  row(`claims provisioned: ${f0(options.claims)} pending at the start / a burst of ${f0(options.claims)}`, (r) =>
    [pending(r), first(r)]
      .map((b) => `${f0(b.provisioned)} / ${f0(b.claims)}${b.complete ? '' : ' (timed out)'}`)
      .join('<br>'),
  );
  row(
    `**provisions/s, ${f0(options.claims)} claims pending when the controller starts** (run() → last PV created)`,
    (r) => `**${f0(pending(r).perSecond)}**`,
  );
  row('raw PV creates/s, shared agent, *threadiness* in flight (ceiling)', (r) => f0(r.raw.shared.perSecond));
  row(
    `**controller / raw** (the median of ${options.rounds} rounds; each round's under it)`,
    (r) => `**${f2(r.ratio)}**<br>${r.rounds.map((x) => f2(x.ratio)).join(', ')}`,
  );
  row("↳ of which run() → informers synced (ms; the claims' and PVs' lists)", (r) => f1(pending(r).syncMs));
  row(
    '↳ CPU ms per provision: controller / server',
    (r) => `${f2(pending(r).cpuMsPerProvision)} / ${f2(pending(r).cpu.serverMsPerProvision)}`,
  );
  row(
    '↳ Events written / dropped (queue full)',
    (r) =>
      `${f0(Object.values(r.backlog.eventsWritten).reduce((n, e) => n + e.objects, 0))} / ${f0(r.backlog.eventsDropped)}`,
  );
  row(
    `**provisions/s, a burst of ${f0(options.claims)}** created while the controller runs (first PVC created → last PV created)`,
    (r) => `**${f0(first(r).perSecond)}**`,
  );
  row(
    `↳ load generator PVC creates/s in that burst (${options.createConcurrency} in flight): the most the controller can provision`,
    (r) => f0(first(r).loadGenerator.perSecond),
  );
  row('↳ controller / raw, in the burst', (r) => f2(r.burstRatio));
  row('PVC created → PV created, p50 / p95 / p99 (ms)', (r) => {
    const l = first(r).latencyMs;
    return `${f1(l.p50)} / ${f1(l.p95)} / ${f1(l.p99)}`;
  });
  row('↳ PVC created → provision() called, p50 / p95 (ms)', (r) => {
    const l = first(r).latencySplitMs.createdToProvisionCall;
    return `${f1(l.p50)} / ${f1(l.p95)}`;
  });
  row('↳ provision() called → PV created, p50 / p95 (ms)', (r) => {
    const l = first(r).latencySplitMs.provisionCallToSaved;
    return `${f1(l.p50)} / ${f1(l.p95)}`;
  });
  if (part.tier === 'testkit' && options.defaultAgent) {
    row(
      `raw PV creates/s, client-node default agent (new connection per request; ${f0(Math.min(options.claims, DEFAULT_AGENT_CREATES))} creates)`,
      (r) => (r.raw.default?.error === undefined ? f0(r.raw.default?.perSecond) : 'failed, see JSON'),
    );
  }
  row('later bursts: claims → provisions/s, latency p50 / p99 (ms)', (r) =>
    r.controller.bursts.length < 2
      ? '–'
      : r.controller.bursts
          .slice(1)
          .map((b) => `${f0(b.claims)} → ${f0(b.perSecond)}/s, ${f1(b.latencyMs.p50)} / ${f1(b.latencyMs.p99)}`)
          .join('<br>'),
  );
  row('API requests per provision (controller, client side, whole run)', (r) => f2(r.controller.requests.perProvision));
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.controller.requests.byVerbResource)))].sort();
  for (const k of keys) row(`↳ ${k} (requests in all)`, (r) => f0(r.controller.requests.byVerbResource[k] ?? 0));
  row(
    `CPU ms per provision (first burst): controller / server${part.tier === 'real' ? ' (kube-apiserver + etcd) / kube-controller-manager' : ''} / load generator`,
    (r) => {
      const c = first(r).cpu;
      return [
        first(r).cpuMsPerProvision,
        c.serverMsPerProvision,
        ...(part.tier === 'real' ? [c.kcmMsPerProvision] : []),
        c.driverMsPerProvision,
      ]
        .map(f2)
        .join(' / ');
    },
  );
  row('controller CPU ms per provision, later bursts', (r) =>
    r.controller.bursts.length < 2
      ? '–'
      : r.controller.bursts
          .slice(1)
          .map((b) => f2(b.cpuMsPerProvision))
          .join(' / '),
  );
  row('server CPU ms per raw PV create', (r) => f2(r.raw.shared.serverCpuMsPerCreate));
  row(`cores busy during the first burst (of ${os.availableParallelism()})`, (r) => f2(first(r).cpu.coresBusy));
  row('controller RSS / heap used (MiB): informers synced (after GC)', (r) => memPair(r.controller.memory.start));
  row('↳ at the last PV of each burst', (r) => r.controller.bursts.map((b) => memPair(b.memory)).join('<br>'));
  row('↳ after each burst, after full GCs', (r) => r.controller.bursts.map((b) => memPair(b.afterGc)).join('<br>'));
  row('↳ peak RSS / heap used (50 ms samples)', (r) => memPair(r.controller.memory.peak));
  row("Events written (the controller's, in the namespace, by reason)", (r) => eventsCell(r.controller.eventsWritten));
  row('Events dropped, recorder queue full (`event_recorder_dropped_events_total`)', (r) =>
    f0(r.controller.eventsDropped),
  );
  row('duplicate provisions / failed attempts', (r) => `${r.controller.duplicates} / ${r.controller.failures}`);
  return grid(head, rows);
}

function qpsTable(q) {
  const b = q.bursts[0];
  return grid(
    ['', `threadiness ${q.threadiness}, client QPS ${q.limit.qps} / burst ${q.limit.burst}`],
    [
      ['claims provisioned', `${f0(b.provisioned)} / ${f0(b.claims)}${b.complete ? '' : ' (timed out)'}`],
      ['**provisions/s**', `**${f1(b.perSecond)}**`],
      [
        'PVC created → PV created, p50 / p95 / p99 (ms)',
        `${f0(b.latencyMs.p50)} / ${f0(b.latencyMs.p95)} / ${f0(b.latencyMs.p99)}`,
      ],
      ['API requests per provision (whole run, the Events included)', f2(q.requests.perProvision)],
      [
        "Events written (the controller's, by reason; they trail the PVs, and the run waits for them)",
        eventsCell(q.eventsWritten),
      ],
    ],
  );
}

function cacheTable(c) {
  const rows = c.bursts.map((b, i) => {
    const cached = c.bursts.slice(0, i + 1).reduce((n, x) => n + x.provisioned, 0);
    return [
      `${f0(cached)} claims + ${f0(cached)} PVs cached`,
      memPair(b.memory),
      memPair(b.afterGc),
      f0(b.perSecond),
      f2(b.cpuMsPerProvision),
    ];
  });
  rows.unshift(['informers synced (empty cluster)', '–', memPair(c.memory.start), '–', '–']);
  if (c.baseline !== undefined) {
    rows.unshift([
      'Node.js with client-node and the library loaded as the controller loads them, a KubeConfig loaded, no controller (another process)',
      '–',
      memPair(c.baseline),
      '–',
      '–',
    ]);
    const last = c.bursts.at(-1)?.afterGc;
    if (last !== undefined) {
      rows.push([
        `the controller's own, with ${f0(c.bursts.reduce((n, x) => n + x.provisioned, 0))} claims and PVs cached (after full GCs, less the row above)`,
        '–',
        `${mib(last.rss - c.baseline.rss)} / ${mib(last.heapUsed - c.baseline.heapUsed)}`,
        '–',
        '–',
      ]);
    }
  }
  const young = c.bursts.at(-1)?.afterGc?.spaces?.new_space?.size;
  if (young !== undefined)
    rows.push([
      "of which V8's young generation (new space, both semi-spaces, committed), with the caches full",
      '–',
      mib(young),
      '–',
      '–',
    ]);
  if (c.idle !== null)
    rows.push([
      `then idle for ${f0(c.idle.ms / 1000)} s (no GC forced; RSS lowest of 1 s samples), and after full GCs at its end`,
      `${mib(c.idle.minRss)} / ${mib(c.idle.end.heapUsed)}`,
      c.idle.afterGc === undefined ? '–' : `${mib(c.idle.afterGc.rss)} / ${mib(c.idle.afterGc.heapUsed)}`,
      '–',
      '–',
    ]);
  return grid(
    [
      '',
      "RSS / heap used at the burst's last PV (MiB)",
      'after full GCs (MiB)',
      'provisions/s',
      'controller CPU ms per provision',
    ],
    rows,
  );
}

/** The goal's reading of the memory table: RSS with the caches full, once the controller is idle (≤ 100 MiB). */
const RSS_GOAL_MIB = 100;
function cacheGoal(c) {
  const last = c.bursts.at(-1);
  if (last === undefined || c.idle === null) return [];
  const cached = f0(c.bursts.reduce((n, x) => n + x.provisioned, 0));
  const settled = c.idle.minRss / 2 ** 20;
  return [
    `**RSS with ${cached} claims and ${cached} PVs cached, the controller idle: ${mib(c.idle.minRss)} MiB** (the lowest 1 s sample of the idle time, no GC forced; goal ≤ ${RSS_GOAL_MIB} MiB: ${settled <= RSS_GOAL_MIB ? 'met' : '**not met**'}). Right after the last burst, with the Events it left queued: ${mib(last.memory.rss)} MiB at its last PV, ${mib(last.afterGc.rss)} after full GCs.`,
    '',
  ];
}

export const CONTROLLER_HEADINGS = {
  testkit: '## kprov ProvisionController benchmark',
  real: '## kprov ProvisionController benchmark, real control plane',
};

/** The markdown section of one tier. */
export function controllerMarkdown(part, options, meta) {
  const server =
    part.tier === 'real'
      ? `a real control plane from \`$KUBEBUILDER_ASSETS\` (etcd, kube-apiserver and kube-controller-manager; \`startControlPlane\` with kube-controller-manager's client limit raised to 1,000 QPS / burst 2,000, no scheduler), a fresh one for each threadiness and each extra run, warmed up with ${options.warmup} untimed ConfigMap creates. Claims are created with the storage-provisioner annotations kube-controller-manager would add, so it is out of the PVC→PV path (it binds the PVs afterwards, which the controller sees as updates), except on the server of the run with pending claims, whose kube-controller-manager runs without its PV binder (\`--controllers=-persistentvolume-binder-controller\`): the raw PV creates that follow that run on the same server have no binding to pay for either, and the testkit runs without its binder too`
      : `\`kprov-testkit serve --no-scheduler --no-kubelet\`, a fresh child process for each raw setting and each controller run, warmed up with ${options.warmup} untimed ConfigMap creates. ${options.binder ? 'PV binder **on**' : 'PV binder **off** (`--no-binder`): claims are created with the storage-provisioner annotations the binder would add, and stay Pending'}`;
  return [
    CONTROLLER_HEADINGS[part.tier],
    '',
    `${meta.date} · ${options.claims.toLocaleString('en-US')} claims · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.platform} · load average at start ${meta.loadAverage} · commit ${meta.commit}`,
    '',
    part.runs.length > 0 ? mainTable(part, options) : '_no complete run_',
    '',
    ...(part.qps === null
      ? []
      : [
          "Under a client-side rate limit (`setClientRateLimit`, client-go's defaults), a fresh server:",
          '',
          qpsTable(part.qps),
          '',
        ]),
    ...(part.cache === null
      ? []
      : [
          `Memory while the caches fill (threadiness ${part.cache.threadiness}, bursts of ${options.claims.toLocaleString('en-US')}, a fresh server):`,
          '',
          cacheTable(part.cache),
          '',
          ...cacheGoal(part.cache),
          `The controller process of this run loaded the library and client-node ${options.unbundled ? 'from `node_modules` (`--unbundled`)' : "bundled, as the provisioner binaries are built (the library's `binaryBundle`)"} and started with Node.js flags \`${(part.cache.execArgv ?? []).join(' ')}\` (${options.plainNode ? 'plain `node`, `--plain-node`' : 'through `docker/kprov-node.sh`, as the images start it'}), with ${part.cache.allocator === 'jemalloc' ? 'jemalloc as its allocator' : part.cache.allocator === 'glibc' ? "glibc's malloc (the images run jemalloc; this machine has no libjemalloc2)" : 'an allocator the bench could not tell'}. Its Events over the run: ${f0(Object.values(part.cache.eventsWritten).reduce((n, e) => n + e.objects, 0))} written, ${f0(part.cache.eventsDropped)} dropped (queue full); they trail the bursts, which follow one another at once, so the memory rows include the Events still queued at the time.`,
          '',
        ]),
    `- Server: ${server}.`,
    `- Controller: its own process (loading only client-node and the library, ${options.unbundled ? 'from `node_modules`' : 'bundled as the binaries are'}${options.controllerMemoryLimit === undefined ? '' : `, in a memory cgroup limited to ${mib(options.controllerMemoryLimit)} MiB, as a container with that limit`}), leader election off, a trivial in-memory provisioner (hostPath PV template at once). With pending claims, the controller process first provisions ${options.controllerWarmup.toLocaleString('en-US')} claims of another class untimed (warm code, as the raw client's after its own warm-up), the driver deletes them and their PVs, creates the claims (${options.createConcurrency} in flight), and the time runs from the timed controller's \`run()\` to the last PV; in a burst, it creates them while the controller runs, so the server shares its time between the PVC creates and the controller's writes, and the load generator's rate is the most the controller can provision.${options.latencyClaims > 0 ? ` At the highest threadiness the controller takes bursts of ${options.claims.toLocaleString('en-US')}, ${options.latencyClaims}, ${options.claims.toLocaleString('en-US')} and ${options.latencyClaims} claims, one after the other.` : ''}`,
    "- Provisions/s: claims provisioned ÷ (the controller's `run()` → last PV saved) with pending claims, ÷ (first PVC create response → last PV saved) per burst. Latency: PVC create response (load generator) → `provisioned` event, i.e. PV create response (controller); both clocks are `performance.timeOrigin + now()` on this machine.",
    "- Requests: every request on the controller's shared agent from start to stop (informer lists and watches, PV creates, Events), divided by claims provisioned.",
    `- Raw: \`createPersistentVolume\` of PVs shaped as the controller's (name, provisioned-by annotation, claimRef, class) through \`makeApiClient\` (client-node's generated client on the shared keep-alive agent) with *threadiness* requests in flight, ${options.claims.toLocaleString('en-US')} creates, median of ${options.rawRepeats} runs, on the server of the run with pending claims right after it. That server runs ${options.rounds} rounds of the two, deleting the claims, PVs and Events between rounds; the ratio is the median of the rounds' ratios, and the figures of the run with pending claims (its rate, CPU, Events) and the raw ceiling are those of that round.`,
    "- CPU: user + system time of a burst, from the driver's message that starts it to its last provision (controller: `process.cpuUsage`; servers: `/proc/<pid>/stat`; load generator: the driver process).",
    '- Memory: `process.memoryUsage()` of the controller; "after full GCs" is after two `gc()` calls (`--expose-gc`).',
    '',
  ].join('\n');
}
