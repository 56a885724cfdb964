// The markdown sections of the local-path runs in bench/results/latest.md, one per tier: node mode beside helper-pod
// mode for each setting, then one column per run, side by side.
import os from 'node:os';

export const LOCAL_PATH_HEADINGS = {
  testkit: '## kprov local-path benchmark',
  real: '## kprov local-path benchmark, real control plane',
};

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const ms4 = (l) => `${f0(l.p50)} / ${f0(l.p95)} / ${f0(l.p99)} / ${f0(l.max)}`;
const lag = (l) => `${f1(l.p50)} / ${f1(l.p99)} / ${f1(l.max)}`;

// The processes whose CPU time is measured, per tier, and how the tables name them.
const PROCESSES = {
  testkit: [
    ['server', 'server'],
    ['helperShells', 'helper shells'],
    ['provisioner', 'provisioners'],
    ['driver', 'driver'],
  ],
  real: [
    ['server', 'kube-apiserver + etcd'],
    ['controlPlane', 'kube-controller-manager + kube-scheduler'],
    ['kubelet', 'kubelet'],
    ['helperShells', 'helper shells'],
    ['provisioner', 'provisioners'],
    ['driver', 'driver'],
  ],
};

const MODE = { helper: 'helper pods', node: 'node mode' };
const ok = (r) => r.error === undefined;

/** The helper-pod run of the same setting as `r`, for the node mode / helper-pod mode ratios. */
function helperOf(runs, r) {
  return runs.find((h) => h.mode === 'helper' && h.claims === r.claims && h.workers === r.workers && ok(h));
}

function ratio(runs, r, fn) {
  const h = r.mode === 'node' && ok(r) ? helperOf(runs, r) : undefined;
  return h === undefined ? '–' : `**${f2(fn(r) / fn(h))}**`;
}

const line = (cells) => `| ${cells.join(' | ')} |`;
const markdownTable = (head, rows) =>
  [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');

/** One row per setting run in both modes: the headline figures of each mode and their ratio. */
function comparison(runs) {
  const pairs = runs
    .filter((r) => r.mode === 'node' && ok(r) && helperOf(runs, r) !== undefined)
    .map((n) => [helperOf(runs, n), n]);
  if (pairs.length === 0) return undefined;
  const head = [
    '',
    'PVCs/s: helper pods / node mode',
    '**node / helper**',
    'deletes/s: helper pods / node mode',
    '**node / helper**',
    'PVC→Bound p50 (ms): helper pods / node mode',
    'provisioner CPU ms per PVC: helper pods / node mode (summed)',
    'provisioner peak RSS (MiB): helper pods / node mode (summed)',
  ];
  const rows = pairs.map(([h, n]) => [
    `${n.claims.toLocaleString('en-US')} PVCs · ${n.workers} workers`,
    `${f1(h.provision.perSecond)} / ${f1(n.provision.perSecond)}`,
    `**${f2(n.provision.perSecond / h.provision.perSecond)}**`,
    `${f1(h.delete.perSecond)} / ${f1(n.delete.perSecond)}`,
    `**${f2(n.delete.perSecond / h.delete.perSecond)}**`,
    `${f0(h.provision.latencyMs.p50)} / ${f0(n.provision.latencyMs.p50)}`,
    `${f1(h.provision.cpu.ms.provisioner / h.bound)} / ${f1(n.provision.cpu.ms.provisioner / n.bound)}`,
    `${f1(h.provision.cpu.peakRssMiB?.provisioner)} / ${f1(n.provision.cpu.peakRssMiB?.provisioner)}`,
  ]);
  return markdownTable(head, rows);
}

function table(runs, tier) {
  const processes = PROCESSES[tier];
  const names = processes.map(([, label]) => label).join(' / ');
  const cores = (cpu) => processes.map(([p]) => `${f2(cpu.cores[p])} (${f2(cpu.peakCores[p])})`).join(' / ');
  const perPvc = (cpu, n) => processes.map(([p]) => f1(cpu.ms[p] / n)).join(' / ');
  const head = [
    '',
    ...runs.map((r) => `${r.claims.toLocaleString('en-US')} PVCs · ${r.workers} workers · ${MODE[r.mode]}`),
  ];
  const rows = [];
  const row = (label, fn) => rows.push([label, ...runs.map((r) => (ok(r) ? fn(r) : 'failed, see JSON'))]);
  row(
    'provisioner processes · `--worker-threads` / `--kube-api-qps` / `--kube-api-burst` (each)',
    (r) => `${r.provisioners} · ${r.workers} / ${r.qps} / ${r.burst}`,
  );
  row('PVCs Bound', (r) => `${f0(r.bound)} / ${f0(r.claims)}${r.bound < r.claims ? ' (timed out)' : ''}`);
  row('**PVCs/s** (first PVC created → last PVC Bound)', (r) => `**${f1(r.provision.perSecond)}**`);
  rows.push(['**node mode / helper pods**, PVCs/s', ...runs.map((r) => ratio(runs, r, (x) => x.provision.perSecond))]);
  row('PVC created → PV created p50 / p95 / p99 / max (ms)', (r) => ms4(r.provision.pvLatencyMs));
  row('PVC created → Bound p50 / p95 / p99 / max (ms)', (r) => ms4(r.provision.latencyMs));
  row(
    "directories on the right node with the setup script's mode / missing / wrong",
    (r) =>
      `${f0(r.disk.ok)} / ${f0(r.disk.missing + r.disk.notBound)} / ${f0(r.disk.wrongMode + r.disk.wrongNode + r.disk.wrongPath)}`,
  );
  row(
    'helper pods run: setup + teardown (failed)',
    (r) => `${f0(r.helperPods.forSetup)} + ${f0(r.helperPods.forTeardown)} (${f0(r.helperPods.Failed)})`,
  );
  row('helper pod created → Succeeded p50 / p95 / p99 / max (ms, watch in the driver)', (r) => ms4(r.helperPods.runMs));
  row('**deletes/s** (first PVC deleted → last PV and directory gone)', (r) => `**${f1(r.delete.perSecond)}**`);
  rows.push(['**node mode / helper pods**, deletes/s', ...runs.map((r) => ratio(runs, r, (x) => x.delete.perSecond))]);
  row('deletion time (s) · directories left', (r) => `${f1(r.delete.spanMs / 1000)} · ${f0(r.delete.dirsLeft)}`);
  row('PVC deleted → PV deleted p50 / p95 / p99 / max (ms)', (r) => ms4(r.delete.latencyMs));
  row(`provisioning, cores busy: ${names} (busiest second)`, (r) => cores(r.provision.cpu));
  row(`provisioning, CPU ms per PVC: ${names}`, (r) => perPvc(r.provision.cpu, r.bound));
  row(
    'provisioners, RSS summed: after provisioning / peak of 1 s samples (MiB)',
    (r) => `${f1(r.provision.cpu.rssMiB?.provisioner)} / ${f1(r.provision.cpu.peakRssMiB?.provisioner)}`,
  );
  row('provisioning, server response to a GET every 100 ms p50 / p99 / max (ms)', (r) => lag(r.provision.serverLagMs));
  row(`deletion, cores busy: ${names} (busiest second)`, (r) => cores(r.delete.cpu));
  row(`deletion, CPU ms per PVC: ${names}`, (r) => perPvc(r.delete.cpu, r.claims));
  row(
    'provisioners, RSS summed: after deletion / peak (MiB)',
    (r) => `${f1(r.delete.cpu.rssMiB?.provisioner)} / ${f1(r.delete.cpu.peakRssMiB?.provisioner)}`,
  );
  row('deletion, server response to a GET every 100 ms p50 / p99 / max (ms)', (r) => lag(r.delete.serverLagMs));
  return markdownTable(head, rows);
}

const SERVER = {
  testkit: (n) =>
    `- Server: a fresh \`kprov-testkit serve\` per column with the PV binder, scheduler and kubelet on and ${n} nodes whose roots are temporary folders`,
  real: (n) =>
    `- Server: a fresh real control plane per column from \`$KUBEBUILDER_ASSETS\` (etcd, kube-apiserver, kube-controller-manager with its client limit raised to 1,000 QPS / burst 2,000, kube-scheduler) and the testkit's simulated kubelet as a child process (\`kprov-testkit kubelet\`) for ${n} nodes whose roots are temporary folders`,
};

/** The section of one tier: heading, one line of context, the comparison, the table, and how each figure is taken. */
export function localPathMarkdown(runs, meta, settings, tier) {
  const kubelet = tier === 'real' ? 'the kubelet process' : "the testkit's kubelet";
  const summary = comparison(runs);
  return [
    LOCAL_PATH_HEADINGS[tier],
    '',
    `${meta.date} · ${settings.nodes} nodes · leader election off · load average at start ${meta.loadAverage ?? '–'} · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.platform} · commit ${meta.commit}`,
    '',
    ...(summary === undefined ? [] : ['Node mode beside helper-pod mode, same run:', '', summary, '']),
    runs.length > 0 ? table(runs, tier) : '_no run_',
    '',
    `${SERVER[tier](settings.nodes)}; the namespace, \`local-path-config\` ConfigMap, ServiceAccount and \`local-path\` StorageClass (WaitForFirstConsumer, Delete) of \`packages/local-path/deploy/local-path-storage.yaml\`.`,
    `- Helper pods: one \`packages/local-path/dist/cli.js start\` child process (ConfigMap as config source, \`--leader-election=false\`, the flags above); its helper pods run the deploy manifest's \`setup\` and \`teardown\` scripts as \`sh\` processes of ${kubelet}.`,
    `- Node mode: one such process per node with \`--node-mode --node-name <node> --host-root <that node's root>\`, making and removing the directories itself; CPU and RSS of the provisioners are the sum over the ${settings.nodes} processes.`,
    `- PVCs: created ${settings.createConcurrency} at a time with \`volume.kubernetes.io/selected-node\` already set (what the scheduler sets for a consumer pod), round-robin over the nodes, in both modes. Bound and PV created: seen through PVC and PV watches in the driver; latency from each create response. Deletion: all PVCs deleted ${settings.createConcurrency} at a time; latency from each delete response to the PV's DELETED event, which comes after the directory is removed.`,
    `- CPU: user + system time from \`/proc\` per phase (helper shells: the reaped \`sh\` children of ${tier === 'real' ? 'the kubelet process' : 'the server, which runs the kubelet'}), mean cores busy over the phase and the busiest one-second window, of ${os.availableParallelism()} cores. The machine is shared: compare columns of the same run only.`,
    '',
  ].join('\n');
}
