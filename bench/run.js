// `pnpm bench`: ProvisionController throughput, latency, API requests and memory against `kprov-testkit serve`
// (and a real control plane), next to the server's raw PV create throughput at the same concurrency; then the
// local-path provisioner binary through real helper pods and in node mode, on the same servers (local-path.js); then
// local-static's emptying of volumes beside `rm -rf`, and its binary and local-path's node mode at rest
// (local-static.js). See bench/README.md.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { LIB_PATH, nodeLauncher, now, ROOT, testkit, waitForExit } from './common.js';
import { provisionerBinary } from './provisioner-binary.js';
import { CONTROLLER_HEADINGS, controllerMarkdown, controllerPart } from './controller-part.js';
import { writeLatest } from './latest.js';
import { localPathRun } from './local-path.js';
import { guideLaunchers, guidePart } from './guide.js';
import { GUIDE_HEADINGS, guideMarkdown } from './guide-report.js';
import { memoryLimitedNode, parseMemoryLimit } from './memory-limit.js';
import { LOCAL_PATH_HEADINGS, localPathMarkdown } from './local-path-report.js';
import { localStaticPart } from './local-static.js';
import { LOCAL_STATIC_HEADING, localStaticMarkdown } from './local-static-report.js';

const USAGE = `Usage: pnpm bench [-- options]   (or: node bench/run.js [options] after pnpm build)

  --only PART              run only one part: controller, guide, local-path or local-static (default all four)
  --no-write               print only; do not write bench/results/
  -h, --help

ProvisionController part (on the testkit, and on a real control plane when KUBEBUILDER_ASSETS is set):
  --tiers LIST             testkit, real or both, comma-separated (default testkit, and real with KUBEBUILDER_ASSETS)
  --claims N               PVCs per burst, and PVs per raw run (default 1000)
  --threadiness LIST       controller threadiness values, comma-separated (default 4,16)
  --latency-claims N       at the highest threadiness, bursts of --claims, N, --claims, N (default 100; 0: one burst)
  --qps-claims N           claims of the run under a client-side rate limit (default 100; 0: skip it)
  --qps Q, --qps-burst B   that limit (default 5 and 10, client-go's defaults)
  --cache-claims N         a run that fills the caches to N claims and N PVs in bursts of --claims, for memory
                           (default 10000; 0: skip it)
  --idle-s S               after that run, S seconds idle with RSS sampled every second (default 30; 0: none)
  --create-concurrency N   PVC creates in flight from the load generator (default 32)
  --warmup N               untimed ConfigMap creates on each fresh server before timing (default 300)
  --controller-warmup N    untimed provisions of the controller process before its run with pending claims; their
                           claims and PVs are deleted before that run's claims are created (default 3000)
  --raw-repeats N          raw runs of --claims creates in each round; the median is the round's ceiling (default 3)
  --rounds N               rounds of (controller with --claims pending, raw PV creates) on one server per
                           threadiness; the median round's ratio is reported (default 5)
  --timeout-s S            give up on a controller run after S seconds (default 60 + claims/50)
  --binder                 run the testkit PV binder (default off: claims are created with the
                           storage-provisioner annotations the binder would add; see bench/README.md)
  --no-default-agent       skip the raw runs with client-node's per-request agent
  --controller-node-args A Node.js flags for the controller process, space-separated, e.g.
                           "--cpu-prof --cpu-prof-dir=/tmp/prof" or "--heap-prof" (see bench/README.md)
  --plain-node             start the controller process (and the local-path provisioners) with plain \`node\`
                           rather than through docker/kprov-node.sh, as the images start it (see bench/README.md)
  --unbundled              load the library and client-node into the controller process from node_modules, as an
                           unbundled program does, rather than bundled as the provisioner binaries are built
                           (binaryBundle; see bench/README.md)
  --controller-memory-limit M
                           run the controller process in a memory cgroup limited to M (512M, 1G), as a
                           container with that memory limit; needs root (default: no limit)

guide part (examples/hostpath.ts as the guide runs it, plain node and docker/kprov-node.sh, on a real control plane
when KUBEBUILDER_ASSETS is set, else the testkit; --claims, --latency-claims, --qps-claims, --cache-claims and
--idle-s apply; see bench/README.md):
  --guide-threadiness LIST --worker-threads of its burst runs (default 16,4)
  --guide-starts N         starts with the --cache-claims objects in place, each once the servers are quiet; the
                           start → synced figure is their median (default 5)

local-path part (the local-path-provisioner binary, through real helper pods and in node mode; see bench/README.md):
  --lp-tiers LIST          testkit, real or both, comma-separated (default testkit, and real with KUBEBUILDER_ASSETS)
  --lp-modes LIST          helper (one provisioner, helper pods), node (one --node-mode provisioner per node) or
                           both, comma-separated (default helper,node)
  --lp-claims LIST         PVCs per run, comma-separated (default 100,1000)
  --lp-workers LIST        --worker-threads values, comma-separated (default 4,16; 4 is upstream's default); in
                           node mode every node's provisioner gets it
  --lp-qps Q               --kube-api-qps of the provisioner (default -1: no client-side limit)
  --lp-burst N             --kube-api-burst of the provisioner (default 10, its own default)
  --lp-nodes N             simulated nodes the claims are spread over, and node-mode provisioners (default 3)
  --lp-timeout-s S         give up on provisioning, and on deletion, after S seconds each
                           (default 60 + claims/5)
  (--create-concurrency and --warmup apply here too)

local-static part (emptying volumes beside rm -rf; the local-volume-provisioner binary at rest, and local-path in
node mode beside it; see bench/README.md):
  --ls-rounds N            rounds of emptying each volume, ours and rm -rf alternating (default 5)
  --ls-small-files N       small files of the first volume (default 150000)
  --ls-small-bytes N       size of each (default 1024)
  --ls-large-files N       large files of the second volume (default 4)
  --ls-large-mib N         size of each in MiB (default 256)
  --ls-volumes N           volumes discovered by the provisioner at rest (default 50)
  --ls-settle-s S          seconds between ready and the idle measurement (default 10)
  --ls-idle-s S            seconds of the idle measurement (default 20)
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
  if (value.trim() === '' || !Number.isFinite(n))
    throw new Error(`--${name} must be a number (negative: no limit), got "${value}"`);
  return n;
}

function nonNegativeInt(name, value, fallback) {
  return value === '0' ? 0 : positiveInt(name, value, fallback);
}

// The real tier needs the Kubernetes binaries; without them the controller part runs on the testkit only.
const realTierAvailable = (process.env[testkit.ASSETS_ENV] ?? '') !== '';

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
      'controller-warmup': { type: 'string' },
      rounds: { type: 'string' },
      'raw-repeats': { type: 'string' },
      binder: { type: 'boolean' },
      'timeout-s': { type: 'string' },
      'no-default-agent': { type: 'boolean' },
      'no-write': { type: 'boolean' },
      'controller-node-args': { type: 'string' },
      'plain-node': { type: 'boolean' },
      unbundled: { type: 'boolean' },
      'controller-memory-limit': { type: 'string' },
      tiers: { type: 'string' },
      'latency-claims': { type: 'string' },
      'qps-claims': { type: 'string' },
      qps: { type: 'string' },
      'qps-burst': { type: 'string' },
      'cache-claims': { type: 'string' },
      'idle-s': { type: 'string' },
      only: { type: 'string' },
      'lp-claims': { type: 'string' },
      'lp-workers': { type: 'string' },
      'lp-qps': { type: 'string' },
      'lp-burst': { type: 'string' },
      'lp-nodes': { type: 'string' },
      'lp-timeout-s': { type: 'string' },
      'lp-tiers': { type: 'string' },
      'lp-modes': { type: 'string' },
      'ls-rounds': { type: 'string' },
      'ls-small-files': { type: 'string' },
      'ls-small-bytes': { type: 'string' },
      'ls-large-files': { type: 'string' },
      'ls-large-mib': { type: 'string' },
      'ls-volumes': { type: 'string' },
      'ls-settle-s': { type: 'string' },
      'ls-idle-s': { type: 'string' },
      'guide-threadiness': { type: 'string' },
      'guide-starts': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const claims = positiveInt('claims', values.claims, 1000);
  const defaultTiers = realTierAvailable ? 'testkit,real' : 'testkit';
  options = {
    claims,
    threadiness: (values.threadiness ?? '4,16').split(',').map((t) => positiveInt('threadiness', t.trim(), 4)),
    createConcurrency: positiveInt('create-concurrency', values['create-concurrency'], 32),
    warmup: values.warmup === '0' ? 0 : positiveInt('warmup', values.warmup, 300),
    controllerWarmup:
      values['controller-warmup'] === '0' ? 0 : positiveInt('controller-warmup', values['controller-warmup'], 3000),
    rounds: positiveInt('rounds', values.rounds, 5),
    rawRepeats: positiveInt('raw-repeats', values['raw-repeats'], 3),
    binder: values.binder === true,
    timeoutMs: positiveInt('timeout-s', values['timeout-s'], Math.ceil(60 + claims / 50)) * 1000,
    defaultAgent: values['no-default-agent'] !== true,
    write: values['no-write'] !== true,
    controllerNodeArgs: (values['controller-node-args'] ?? '').split(' ').filter((a) => a !== ''),
    plainNode: values['plain-node'] === true,
    unbundled: values.unbundled === true,
    controllerMemoryLimit:
      values['controller-memory-limit'] === undefined ? undefined : parseMemoryLimit(values['controller-memory-limit']),
    tiers: (values.tiers ?? defaultTiers).split(',').map((t) => t.trim()),
    latencyClaims: nonNegativeInt('latency-claims', values['latency-claims'], 100),
    qpsClaims: nonNegativeInt('qps-claims', values['qps-claims'], 100),
    qps: finiteNumber('qps', values.qps, 5),
    qpsBurst: positiveInt('qps-burst', values['qps-burst'], 10),
    cacheClaims: nonNegativeInt('cache-claims', values['cache-claims'], 10_000),
    idleS: nonNegativeInt('idle-s', values['idle-s'], 30),
    only: values.only,
    guideThreadiness: (values['guide-threadiness'] ?? '16,4')
      .split(',')
      .map((t) => positiveInt('guide-threadiness', t.trim(), 16)),
    guideStarts: positiveInt('guide-starts', values['guide-starts'], 5),
    localPath: {
      tiers: (values['lp-tiers'] ?? defaultTiers).split(',').map((t) => t.trim()),
      modes: (values['lp-modes'] ?? 'helper,node').split(',').map((m) => m.trim()),
      claims: (values['lp-claims'] ?? '100,1000').split(',').map((c) => positiveInt('lp-claims', c.trim(), 100)),
      workers: (values['lp-workers'] ?? '4,16').split(',').map((w) => positiveInt('lp-workers', w.trim(), 4)),
      qps: finiteNumber('lp-qps', values['lp-qps'], -1),
      burst: positiveInt('lp-burst', values['lp-burst'], 10),
      nodes: positiveInt('lp-nodes', values['lp-nodes'], 3),
      timeoutS:
        values['lp-timeout-s'] === undefined ? undefined : positiveInt('lp-timeout-s', values['lp-timeout-s'], 0),
    },
    localStatic: {
      rounds: positiveInt('ls-rounds', values['ls-rounds'], 5),
      smallFiles: positiveInt('ls-small-files', values['ls-small-files'], 150_000),
      smallBytes: nonNegativeInt('ls-small-bytes', values['ls-small-bytes'], 1024),
      largeFiles: positiveInt('ls-large-files', values['ls-large-files'], 4),
      largeMiB: positiveInt('ls-large-mib', values['ls-large-mib'], 256),
      volumes: positiveInt('ls-volumes', values['ls-volumes'], 50),
      settleS: nonNegativeInt('ls-settle-s', values['ls-settle-s'], 10),
      idleS: positiveInt('ls-idle-s', values['ls-idle-s'], 20),
    },
  };
  for (const [flag, tiers] of [
    ['tiers', options.tiers],
    ['lp-tiers', options.localPath.tiers],
  ]) {
    for (const tier of tiers) {
      if (tier !== 'testkit' && tier !== 'real') throw new Error(`--${flag} takes testkit and real, got "${tier}"`);
      if (tier === 'real' && !realTierAvailable)
        throw new Error(`--${flag} real needs KUBEBUILDER_ASSETS (see docs/testkit.md)`);
    }
  }
  for (const mode of options.localPath.modes) {
    if (mode !== 'helper' && mode !== 'node') throw new Error(`--lp-modes takes helper and node, got "${mode}"`);
  }
  if (options.only !== undefined && !['controller', 'guide', 'local-path', 'local-static'].includes(options.only)) {
    throw new Error(
      `--only must be "controller", "guide", "local-path" or "local-static", got "${options.only}"; leave it out to run all four`,
    );
  }
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  process.exit(2);
}

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
      [...live].map((item) => {
        // Child processes, and real control planes (which stop their own processes).
        if (typeof item.kill !== 'function') return item.stop().catch(() => undefined);
        if (item.exitCode === null && item.signalCode === null) item.kill('SIGTERM');
        return waitForExit(item, 10_000);
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

// ---- run -------------------------------------------------------------------------------------------------------

const controllerParts = [];
const localPathRuns = [];
let localStatic;
const runController = options.only === undefined || options.only === 'controller';
const runGuide = options.only === undefined || options.only === 'guide';
const runLocalPath = options.only === undefined || options.only === 'local-path';
const runLocalStatic = options.only === undefined || options.only === 'local-static';
const guideParts = [];
let failed = false;
let memoryLimit;
/** How Node.js is started for the controller process (in the memory cgroup if there is one) and the provisioners. */
const launcher = nodeLauncher(options.plainNode);
const started = new Date();
// Other work on the machine skews every figure; the 1/5/15-minute load average before the bench says how much there was.
const loadAverage = os.loadavg();
try {
  if (runController && options.controllerMemoryLimit !== undefined)
    memoryLimit = await memoryLimitedNode(options.controllerMemoryLimit, tmpRoot, launcher.execPath);
  // The module the controller process loads its code from (provisioner-binary.js).
  const binary = runController ? await provisionerBinary(tmpRoot, !options.unbundled) : undefined;
  for (const tier of runController ? options.tiers : []) {
    log(`controller part on ${tier === 'real' ? 'a real control plane' : 'the testkit'}`);
    const node = {
      execPath: memoryLimit?.execPath ?? launcher.execPath,
      env: { ...launcher.env, KPROV_BENCH_BINARY: binary },
    };
    const part = await controllerPart(tier, options, { tmpRoot, live, log, aborted: () => aborted, node });
    const all = [
      ...part.runs.map((r) => r.controller),
      ...(part.qps === null ? [] : [part.qps]),
      ...(part.cache === null ? [] : [part.cache]),
    ];
    if (all.some((r) => !r.complete)) failed = true;
    controllerParts.push(part);
  }
  if (runGuide) {
    const tier = realTierAvailable ? 'real' : 'testkit';
    log(`guide part on ${tier === 'real' ? 'a real control plane' : 'the testkit'}`);
    const part = await guidePart(tier, options, { tmpRoot, live, log, launchers: guideLaunchers(nodeLauncher) });
    if (Object.values(part.results).some((r) => r.error !== undefined)) failed = true;
    guideParts.push(part);
  }
  const lp = options.localPath;
  const lpSettings = [];
  for (const tier of runLocalPath ? lp.tiers : [])
    for (const claims of lp.claims)
      for (const workers of lp.workers) for (const mode of lp.modes) lpSettings.push({ tier, claims, workers, mode });
  for (const { tier, claims, workers, mode } of lpSettings) {
    if (aborted) throw new Error('stopped');
    const name = `local-path on ${tier === 'real' ? 'a real control plane' : 'the testkit'}, ${mode === 'node' ? 'node mode' : 'helper pods'}, ${claims} PVCs, ${workers} workers`;
    log(name);
    const timeoutMs = (lp.timeoutS ?? Math.ceil(60 + claims / 5)) * 1000;
    const setting = {
      tier,
      mode,
      claims,
      workers,
      qps: lp.qps,
      burst: lp.burst,
      nodes: lp.nodes,
      createConcurrency: options.createConcurrency,
      warmup: options.warmup,
      timeoutMs,
    };
    const result = await localPathRun(setting, {
      tmpRoot,
      track: live,
      log,
      aborted: () => aborted,
      node: launcher,
    }).catch((err) => {
      if (aborted) throw err;
      const cause = err instanceof Error && err.cause !== undefined ? ` (${String(err.cause)})` : '';
      log(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${cause}`);
      return {
        tier,
        mode,
        claims,
        workers,
        qps: lp.qps,
        burst: lp.burst,
        complete: false,
        error: `${err instanceof Error ? err.message : String(err)}${cause}`,
      };
    });
    if (!result.complete) failed = true;
    localPathRuns.push(result);
  }
  if (runLocalStatic) {
    if (aborted) throw new Error('stopped');
    log('local-static: emptying volumes, then the provisioner at rest');
    localStatic = await localStaticPart(options.localStatic, {
      tmpRoot,
      track: live,
      log,
      aborted: () => aborted,
      launchers: [
        { name: 'image (`docker/kprov-node.sh`)', ...nodeLauncher(false) },
        { name: 'plain `node`', ...nodeLauncher(true) },
      ],
    });
  }
} catch (err) {
  failed = true;
  const cause = err instanceof Error && err.cause !== undefined ? `\n  cause: ${String(err.cause)}` : '';
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${cause}`);
} finally {
  await cleanup();
  await memoryLimit?.remove();
}

// ---- report ----------------------------------------------------------------------------------------------------

function gitCommit() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
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
  library: LIB_PATH,
  options,
};

const localPathSections = new Map(
  (runLocalPath ? options.localPath.tiers : [])
    .filter((tier) => localPathRuns.some((r) => r.tier === tier))
    .map((tier) => [
      LOCAL_PATH_HEADINGS[tier],
      localPathMarkdown(
        localPathRuns.filter((r) => r.tier === tier),
        meta,
        { ...options.localPath, createConcurrency: options.createConcurrency },
        tier,
      ),
    ]),
);
const controllerSections = new Map(
  controllerParts.map((part) => [CONTROLLER_HEADINGS[part.tier], controllerMarkdown(part, options, meta)]),
);
const guideSections = new Map(
  guideParts.map((part) => [GUIDE_HEADINGS[part.tier], guideMarkdown(part, options, meta)]),
);
for (const section of controllerSections.values()) process.stdout.write(`\n${section}\n`);
for (const section of guideSections.values()) process.stdout.write(`\n${section}\n`);
for (const section of localPathSections.values()) process.stdout.write(`\n${section}\n`);
const localStaticSection = localStatic === undefined ? undefined : localStaticMarkdown(localStatic, meta);
if (localStaticSection !== undefined) process.stdout.write(`\n${localStaticSection}\n`);

if (
  options.write &&
  (controllerParts.length > 0 || guideParts.length > 0 || localPathRuns.length > 0 || localStatic !== undefined)
) {
  await mkdir(RESULTS, { recursive: true });
  const stamp = meta.date.replace(/[:.]/g, '-');
  const json = join(RESULTS, `${stamp}.json`);
  await writeFile(
    json,
    `${JSON.stringify({ meta, controller: controllerParts, guide: guideParts, localPath: localPathRuns, localStatic }, null, 2)}\n`,
  );
  await writeLatest(
    join(RESULTS, 'latest.md'),
    // Every section in a fixed order; those of parts and tiers not run are kept from the file.
    new Map(
      [
        ...Object.values(CONTROLLER_HEADINGS),
        ...Object.values(GUIDE_HEADINGS),
        ...Object.values(LOCAL_PATH_HEADINGS),
        LOCAL_STATIC_HEADING,
      ].map((heading) => [
        heading,
        controllerSections.get(heading) ??
          guideSections.get(heading) ??
          localPathSections.get(heading) ??
          (heading === LOCAL_STATIC_HEADING ? localStaticSection : undefined),
      ]),
    ),
  );
  log(`wrote ${json} and bench/results/latest.md (${meta.durationS.toFixed(0)} s)`);
}
process.exitCode = failed ? 1 : 0;
