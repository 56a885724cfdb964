// The markdown section of the local-static part in bench/results/latest.md: emptying beside `rm -rf` (the anchor)
// and upstream's figure, then the provisioner at rest beside upstream's figures and the targets.

export const LOCAL_STATIC_HEADING = '## kprov local-static benchmark';

/** Upstream local-volume-provisioner v2.8.0's figures, as measured beside ours on a real control plane. */
export const UPSTREAM = {
  smallEmptyingS: '3–5',
  restRssMB: 37,
  restTicks: 7,
};
/** What kprov's local-static was before this work, measured the same way. */
export const BEFORE = { smallEmptyingS: 'about 30', restRssMB: 97, restTicks: 36 };
/** The targets. */
export const TARGET = { restRssMB: 60, restTicks: 7 };
/** The goal for each per-node binary at rest (local-static, local-path in node mode), in MiB. */
export const PER_NODE_GOAL_MIB = 50;

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
/** MiB as MB (10⁶ bytes), the unit of upstream's figure and the target. */
const mb = (mib) => (mib * 1024 * 1024) / 1e6;
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const line = (cells) => `| ${cells.join(' | ')} |`;
const markdownTable = (head, rows) =>
  [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');

function workloadName(workload, s) {
  return workload === 'small'
    ? `${f0(s.smallFiles)} files of ${f0(s.smallBytes)} bytes (100 folders × 10)`
    : `${s.largeFiles} files of ${f0(s.largeMiB)} MiB`;
}

function emptyingTable(part) {
  const s = part.settings;
  const skipped = part.emptying.filter((r) => r.skipped !== undefined);
  const runs = part.emptying.filter((r) => r.skipped === undefined);
  const rows = runs.map((r) => [
    `${workloadName(r.workload, s)} · ${r.kind}`,
    `**${f2(r.oursMedian)}** (${r.ours.map(f2).join(', ')})`,
    `${f2(r.anchorMedian)} (${r.anchor.map(f2).join(', ')})`,
    `**${f2(r.oursMedian / r.anchorMedian)}**`,
    r.workload === 'small' ? `${UPSTREAM.smallEmptyingS} s` : 'not measured',
    r.workload === 'small' ? `${BEFORE.smallEmptyingS} s` : 'not measured',
  ]);
  const head = [
    'volume · filesystem',
    'kprov `removeContents` (s, median; each round)',
    '`rm -rf` of the same tree (s; anchor)',
    'kprov / `rm -rf`',
    'upstream v2.8.0',
    'kprov before',
  ];
  return [
    ...(runs.length > 0 ? [markdownTable(head, rows)] : []),
    ...skipped.map((r) => `- ${workloadName(r.workload, s)} on ${r.kind}: skipped (${r.skipped}).`),
  ].join('\n');
}

function restTable(rest) {
  if (rest.skipped !== undefined) return `- Skipped (${rest.skipped}).`;
  const rows = rest.runs.map((r) => [
    r.launcher,
    `**${f1(r.rssEnd)}** (${f1(r.rssMin)}–${f1(r.rssMax)}) = ${f1(mb(r.rssEnd))} MB`,
    `**${f0(r.ticks)}**`,
    f1(r.readyS),
  ]);
  for (const f of rest.floors ?? [])
    rows.push([
      `Node.js alone, ${f.launcher}: a metrics server and one API request`,
      `${f1(f.rss)} = ${f1(mb(f.rss))} MB`,
      '–',
      '–',
    ]);
  rows.push(['upstream v2.8.0', `${UPSTREAM.restRssMB} MB`, `${UPSTREAM.restTicks}`, '–']);
  rows.push(['kprov before', `${BEFORE.restRssMB} MB`, `${BEFORE.restTicks}`, '–']);
  rows.push(['target', `≤ ${TARGET.restRssMB} MB`, `≤ ${TARGET.restTicks}`, '–']);
  rows.push(['goal for each per-node binary', `≤ ${PER_NODE_GOAL_MIB} MiB`, '–', '–']);
  return markdownTable(
    [
      'started',
      `RSS at the end of ${rest.idleS} s idle (MiB; lowest–highest of 1 s samples; = MB of 10⁶ bytes)`,
      `CPU ticks (1/100 s) over those ${rest.idleS} s`,
      `start → ready with ${rest.volumes} PVs (s)`,
    ],
    rows,
  );
}

/** local-path in node mode at rest: one row per launcher, Node.js alone and the per-node goal. */
function nodeModeTable(rest) {
  if (rest.skipped !== undefined) return `- Skipped (${rest.skipped}).`;
  const rows = (rest.nodeMode ?? []).map((r) => [
    r.launcher,
    `**${f1(r.rssEnd)}** (${f1(r.rssMin)}–${f1(r.rssMax)}) = ${f1(mb(r.rssEnd))} MB`,
    `**${f0(r.ticks)}**`,
    f1(r.readyS),
  ]);
  for (const f of rest.floors ?? [])
    rows.push([`Node.js alone, ${f.launcher}`, `${f1(f.rss)} = ${f1(mb(f.rss))} MB`, '–', '–']);
  rows.push(['goal for each per-node binary', `≤ ${PER_NODE_GOAL_MIB} MiB`, '–', '–']);
  return markdownTable(
    [
      'started',
      `RSS at the end of ${rest.idleS} s idle (MiB; lowest–highest of 1 s samples; = MB of 10⁶ bytes)`,
      `CPU ticks (1/100 s) over those ${rest.idleS} s`,
      'start → controller started (s)',
    ],
    rows,
  );
}

/** The section: heading, one line of context, the two tables, and how each figure is taken. */
export function localStaticMarkdown(part, meta) {
  const s = part.settings;
  const how = [...new Set(part.emptying.filter((r) => r.how !== undefined).map((r) => `${r.kind}: ${r.how}`))];
  return [
    LOCAL_STATIC_HEADING,
    '',
    `${meta.date} · load average at start ${meta.loadAverage ?? '–'} · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.platform} · commit ${meta.commit}`,
    '',
    '### Emptying a released Filesystem volume',
    '',
    emptyingTable(part),
    '',
    `- kprov: \`removeContents\` of \`packages/local-static/dist\`, what the provisioner runs on a released Filesystem volume (the mount table read, the entries listed, \`rm -r -f --one-file-system\` on them). Anchor: \`sh -c 'rm -rf -- "$0"/*' <volume>\` on the same tree. ${s.rounds} round${s.rounds === 1 ? '' : 's'} of each, alternating, each on a tree made afresh and synced (\`sync\`) before the clock starts.`,
    ...(how.length > 0 ? [`- Filesystems: ${how.join('; ')}.`] : []),
    '- Upstream and before: measured once side by side on a real control plane (another run); only kprov / `rm -rf` compares figures of one run.',
    '',
    `### At rest with ${part.rest.volumes ?? s.volumes} volumes discovered`,
    '',
    restTable(part.rest),
    '',
    `- \`packages/local-static/dist/cli.js\` (\`local-volume-provisioner\`) against a \`kprov-testkit serve\` child process (binder on, no scheduler or kubelet) with one node, one StorageClass, a config directory naming one discovery folder holding ${s.volumes} bind mounts, \`--discovery-period\` and \`--config-sync-period\` at their defaults (10 s, 5 s). "image": through \`docker/kprov-node.sh\` as the image starts it (jemalloc when the machine has it, V8's \`--optimize-for-size\`, one V8 thread, no TurboFan); "plain node": \`node dist/cli.js\`. The PVs are deleted between the two, so each publishes them all.`,
    `- Once \`/ready\` answers \`ok\` with ${s.volumes} PVs, ${s.settleS} s more, then ${s.idleS} s: RSS (\`VmRSS\`) every second, CPU ticks (user + system, \`/proc/<pid>/stat\`) over the ${s.idleS} s.`,
    '',
    '### The other per-node binary: local-path in node mode, at rest',
    '',
    nodeModeTable(part.rest),
    '',
    `- \`packages/local-path/dist/cli.js start --node-mode\` for the same server's node (one pod of its DaemonSet; a folder standing for the node's root as \`--host-root\`), with the ConfigMap of \`packages/local-path/deploy/local-path-storage.yaml\`, leader election off, no claims; started the same two ways, after the runs above. From its \`Started provisioner controller\` line (informers synced), ${s.settleS} s more, then ${s.idleS} s sampled as above. Node.js alone: the same figures as in the table above.`,
    '',
  ].join('\n');
}
