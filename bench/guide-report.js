// The markdown of the guide part (guide.js): each figure beside the goal and the Go library's figure.
import { median } from './common.js';

export const GUIDE_HEADINGS = {
  testkit: "## kprov guide's provisioner (examples/hostpath.ts) benchmark",
  real: "## kprov guide's provisioner (examples/hostpath.ts) benchmark, real control plane",
};

/**
 * The Go anchor, measured once side by side with kprov: the Go sig-storage-lib-external-provisioner v11 hostPath example, measured on
 * the same kind of machine, v1.32 control plane (one run; claims pre-annotated so the PV binder is out of the
 * PVC→PV path). Ranges are that run's.
 */
const GO_SOURCE =
  'Go sig-storage-lib-external-provisioner v11 hostPath example, measured on the same kind of machine, v1.32 control plane';

const f0 = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const met = (ok) => (ok === undefined ? '' : ok ? 'met' : '**not met**');

/** A row of CPU per provision of a burst, beside Go's figure, the goal's ceiling. */
function cpuRow(what, burstOf, go) {
  return [
    `CPU ms per provision, ${what}`,
    (r) => burstOf(r)?.cpuMsPerProvision,
    f2,
    `≤ Go ${f2(go)}`,
    (x) => (Number.isFinite(x) ? x <= go : undefined),
    f2(go),
  ];
}

/** Rows: [figure, value for one launcher's results, goal text, goal check, Go text]. */
function rows(options) {
  const big = options.claims.toLocaleString('en-US');
  const small = options.latencyClaims.toLocaleString('en-US');
  const cache = options.cacheClaims.toLocaleString('en-US');
  const le = (max) => (x) => (Number.isFinite(x) ? x <= max : undefined);
  const ge = (min) => (x) => (Number.isFinite(x) ? x >= min : undefined);
  return [
    [
      'RSS when ready, empty cluster (MiB; 1 s after the start line)',
      (r) => r.t16?.settled.rss,
      f1,
      '≤ 60',
      le(60),
      '37',
    ],
    [
      'start → informers synced, empty cluster (ms; spawn → `Started provisioner controller`)',
      (r) => r.t16?.ready.startMs,
      f0,
      '≤ 400',
      le(400),
      '163–201',
    ],
    [`peak RSS after a ${big} burst (MiB, VmHWM)`, (r) => r.t16?.afterBig.peak, f1, '≤ 80', le(80), '59'],
    [`PVs/s, ${big}-claim burst, threadiness 16`, (r) => r.t16?.big.perSecond, f1, '', undefined, '188.0'],
    [`PVs/s, ${big}-claim burst, threadiness 4`, (r) => r.t4?.big.perSecond, f1, '', undefined, '170.5'],
    [
      `PVs/s, ${small}-claim burst, threadiness 16`,
      (r) => r.t16?.small.perSecond,
      f1,
      '≥ Go 200.6',
      ge(200.6),
      '200.6',
    ],
    [`PVs/s, ${small}-claim burst, threadiness 4`, (r) => r.t4?.small.perSecond, f1, '≥ Go 139.2', ge(139.2), '139.2'],
    [`PVC→PV p99, ${big} burst, threadiness 16 (ms)`, (r) => r.t16?.big.p99, f0, '', undefined, '652'],
    [`PVC→PV p99, ${small} burst, threadiness 16 (ms)`, (r) => r.t16?.small.p99, f0, '', undefined, '205'],
    cpuRow(`${big} burst, threadiness 16`, (r) => r.t16?.big, 1.15),
    cpuRow(`${big} burst, threadiness 4`, (r) => r.t4?.big, 1.34),
    cpuRow(`${small} burst, threadiness 4`, (r) => r.t4?.small, 1.5),
    [
      `CPU ms per provision, the guide's defaults (QPS 5, burst 10, 4 workers), ${options.qpsClaims} claims`,
      (r) => r.qps?.burst.cpuMsPerProvision,
      f2,
      '≤ Go 3.70',
      le(3.7),
      '3.70',
    ],
    [
      `the guide's defaults: PVs/s, PVC→PV p50 (s)`,
      (r) => (r.qps === undefined ? undefined : `${f1(r.qps.burst.perSecond)}, ${f1(r.qps.burst.p50 / 1000)}`),
      (x) => x ?? '–',
      '',
      undefined,
      '4.3, 10.1',
    ],
    [
      "Events dropped (the recorder's metric, every run above) / written",
      (r) => dropped(r),
      (x) => x ?? '–',
      '0 dropped',
      (x) => (x === undefined ? undefined : x.startsWith('0 ')),
      '(client-go drops Events in a burst)',
    ],
    [
      `${cache} claims + ${cache} PVs cached, arrived while running: RSS idle (lowest 1 s sample) / peak (MiB)`,
      (r) => r.cacheRunning,
      (x) => (x === undefined ? '–' : `${f1(x.rss)} / ${f1(x.peak)}`),
      '≤ 100, peak included',
      (x) => (x === undefined ? undefined : x.peak <= 100),
      '161 (161)',
    ],
    [
      `the same, process started with them in place: RSS idle / peak (MiB)`,
      (r) => r.cacheAtStart,
      (x) => (x === undefined ? '–' : `${f1(x.rss)} / ${f1(x.peak)}`),
      '≤ 100, peak included',
      (x) => (x === undefined ? undefined : x.peak <= 100),
      '158 (158)',
    ],
    [
      `↳ start → informers synced with ${cache} + ${cache} objects to list (ms; median of the starts, lowest–highest)`,
      (r) => r.cacheAtStart?.startsMs ?? (r.cacheAtStart === undefined ? undefined : [r.cacheAtStart.ready.startMs]),
      (ms) => (ms === undefined ? '–' : `${f0(median(ms))} (${f0(Math.min(...ms))}–${f0(Math.max(...ms))})`),
      '≤ Go 1,200',
      (ms) => (ms === undefined ? undefined : le(1200)(median(ms))),
      '1,200',
    ],
  ];
}

/** How long each launcher's start with the objects in place waited for the servers to settle. */
function settled(results) {
  const waits = Object.entries(results)
    .filter(([, r]) => r.cacheAtStart?.settle !== undefined)
    .map(
      ([n, r]) =>
        `${n} ${f0(r.cacheAtStart.settle.seconds)} s${r.cacheAtStart.settle.settled ? '' : ' (not settled: started anyway)'}`,
    );
  if (waits.length === 0) return [];
  return [
    `- Started with the objects in place: once the servers were quiet (under 15% of one core over two 2 s windows in a row; kube-apiserver, etcd and kube-controller-manager on the real tier), as a provisioner restarts in a settled cluster; waited ${waits.join(', ')}. Start → synced: the median of ${starts(results)} such starts (the first one's memory is the row above it), each once the servers were quiet again.`,
  ];
}

/** How many starts with the objects in place each launcher made (the same for all). */
function starts(results) {
  const counts = Object.values(results).map((r) => r.cacheAtStart?.startsMs?.length ?? 1);
  return Math.max(...counts);
}

function dropped(r) {
  const runs = [r.t16?.events, r.t4?.events, r.qps?.events].filter((e) => e !== undefined);
  if (runs.length === 0) return undefined;
  return `${runs.reduce((s, e) => s + e.dropped, 0)} / ${runs.reduce((s, e) => s + e.written, 0).toLocaleString('en-US')}`;
}

/** The section of one tier. */
export function guideMarkdown(part, options, meta) {
  const names = Object.keys(part.results);
  const head = `| | ${names.map((n) => `${n}`).join(' | ')} | goal | Go lib v11 |`;
  const sep = `| --- | ${names.map(() => '---:').join(' | ')} | --- | ---: |`;
  const lines = rows(options).map(([label, get, fmt, goal, check, go]) => {
    const cells = names.map((n) => {
      const v = get(part.results[n]);
      const verdict = met(check?.(v));
      return `${fmt(v)}${verdict === '' ? '' : ` (${verdict})`}`;
    });
    return `| ${label} | ${cells.join(' | ')} | ${goal} | ${go} |`;
  });
  const floor =
    part.floor === undefined
      ? []
      : [
          `Node.js alone, for comparison (no library, no client-node): a \`node:http\` server and one request to the API server${part.tier === 'real' ? ' over TLS' : ''}, RSS 1 s after the answer: **${f1(part.floor.ts)} MiB** as a \`.ts\` file (Node.js loads its TypeScript stripper), **${f1(part.floor.mjs)} MiB** as \`.mjs\`.`,
          '',
        ];
  return [
    GUIDE_HEADINGS[part.tier],
    '',
    `${meta.date} · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · load average at start ${meta.loadAverage} · commit ${meta.commit}`,
    '',
    head,
    sep,
    ...lines,
    '',
    ...floor,
    ...names
      .filter((n) => part.results[n].error !== undefined)
      .map((n) => `- **${n} failed**: ${part.results[n].error}`),
    `- Provisioner: \`node examples/hostpath.ts\` in \`packages/provisioner-lib\`, the guide's file as it is, loading the library's build and client-node from node_modules (no bundler), leader election on as the guide runs it, \`--http-endpoint\` (its metrics give the dropped Events), no client-side limit (\`--kube-api-qps=-1\`) and \`--worker-threads\` as the row says, but in the row of the guide's defaults. *plain node*: started with \`node\`; *kprov-node.sh*: through \`docker/kprov-node.sh\`, as the images start Node.js (${part.allocator ?? 'allocator as the machine has it'}).`,
    `- Measured from outside: start from spawn to the \`Started provisioner controller\` line (the informers synced, workers started); RSS and peak (VmHWM) from \`/proc\`; CPU from \`/proc/<pid>/stat\` over a burst (from its first claim create to its last PV), ÷ claims; PVs/s and PVC→PV from the driver's PV watch. Claims pre-annotated (the PV binder is out of the PVC→PV path), 32 creates in flight; a fresh process per row group, the claims and PVs deleted between.`,
    ...settled(part.results),
    `- Go: ${GO_SOURCE}.`,
  ].join('\n');
}
