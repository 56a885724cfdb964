// The markdown section of the local-path runs in bench/results/latest.md: one column per setting, side by side.
import os from 'node:os';

export const LOCAL_PATH_HEADING = '## kprov local-path benchmark';

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const ms3 = (l) => `${f0(l.p50)} / ${f0(l.p95)} / ${f0(l.p99)}`;
const lag = (l) => `${f1(l.p50)} / ${f1(l.p99)} / ${f1(l.max)}`;
const PROCESSES = ['server', 'helperShells', 'provisioner', 'driver'];
const cores = (cpu) => PROCESSES.map((p) => `${f2(cpu.cores[p])} (${f2(cpu.peakCores[p])})`).join(' / ');
const perPvc = (cpu, n) => PROCESSES.map((p) => f1(cpu.ms[p] / n)).join(' / ');

function table(runs) {
  const head = ['', ...runs.map((r) => `${r.claims.toLocaleString('en-US')} PVCs · ${r.workers} workers`)];
  const rows = [];
  const row = (label, fn) =>
    rows.push([label, ...runs.map((r) => (r.error === undefined ? fn(r) : 'failed, see JSON'))]);
  row('`--worker-threads` / `--kube-api-qps` / `--kube-api-burst`', (r) => `${r.workers} / ${r.qps} / ${r.burst}`);
  row('PVCs Bound', (r) => `${f0(r.bound)} / ${f0(r.claims)}${r.bound < r.claims ? ' (timed out)' : ''}`);
  row('**PVCs/s** (first PVC created → last PVC Bound)', (r) => `**${f1(r.provision.perSecond)}**`);
  row('bind latency p50 / p95 / p99 (ms, PVC created → Bound)', (r) => ms3(r.provision.latencyMs));
  row(
    "directories on the right node with the setup script's mode / missing / wrong",
    (r) =>
      `${f0(r.disk.ok)} / ${f0(r.disk.missing + r.disk.notBound)} / ${f0(r.disk.wrongMode + r.disk.wrongNode + r.disk.wrongPath)}`,
  );
  row(
    'helper pods run: setup + teardown (failed)',
    (r) => `${f0(r.helperPods.forSetup)} + ${f0(r.helperPods.forTeardown)} (${f0(r.helperPods.Failed)})`,
  );
  row('helper pod created → Succeeded p50 / p95 / p99 (ms, watch in the driver)', (r) => ms3(r.helperPods.runMs));
  row(
    '**deletes/s** (first PVC deleted → last PV and directory gone)',
    (r) => `**${f1(r.delete.perSecond)}**${r.delete.dirsLeft > 0 ? ` (${r.delete.dirsLeft} dirs left)` : ''}`,
  );
  row('delete latency p50 / p95 / p99 (ms, PVC deleted → PV deleted)', (r) => ms3(r.delete.latencyMs));
  row('provisioning, cores busy: server / helper shells / provisioner / driver (busiest second)', (r) =>
    cores(r.provision.cpu),
  );
  row('provisioning, CPU ms per PVC: server / helper shells / provisioner / driver', (r) =>
    perPvc(r.provision.cpu, r.bound),
  );
  row('provisioning, server response to a GET every 100 ms p50 / p99 / max (ms)', (r) => lag(r.provision.serverLagMs));
  row('deletion, cores busy: server / helper shells / provisioner / driver (busiest second)', (r) =>
    cores(r.delete.cpu),
  );
  row('deletion, CPU ms per PVC: server / helper shells / provisioner / driver', (r) => perPvc(r.delete.cpu, r.claims));
  row('deletion, server response to a GET every 100 ms p50 / p99 / max (ms)', (r) => lag(r.delete.serverLagMs));
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** The section: heading, one line of context, the table, and how each figure is taken. */
export function localPathMarkdown(runs, meta, settings) {
  return [
    LOCAL_PATH_HEADING,
    '',
    `${meta.date} · ${settings.nodes} nodes · leader election off · load average at start ${meta.loadAverage ?? '–'} · Node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.platform} · commit ${meta.commit}`,
    '',
    runs.length > 0 ? table(runs) : '_no run_',
    '',
    `- Server: a fresh \`kprov-testkit serve\` per column with the PV binder, scheduler and kubelet on and ${settings.nodes} nodes whose roots are temporary folders; the namespace, \`local-path-config\` ConfigMap and \`local-path\` StorageClass (WaitForFirstConsumer, Delete) of \`packages/local-path/deploy/local-path-storage.yaml\`.`,
    "- Provisioner: `packages/local-path/dist/cli.js start` as a child process (ConfigMap as config source, `--leader-election=false`, the flags above); its helper pods run the deploy manifest's `setup` and `teardown` scripts as `sh` processes of the testkit's kubelet.",
    `- PVCs: created ${settings.createConcurrency} at a time with \`volume.kubernetes.io/selected-node\` already set (what the scheduler sets for a consumer pod), round-robin over the nodes. Bound: seen through a PVC watch in the driver; latency from each create response. Deletion: all PVCs deleted ${settings.createConcurrency} at a time; latency from each delete response to the PV's DELETED event, which comes after the teardown pod.`,
    `- CPU: user + system time from \`/proc\` per phase (server: the testkit and its simulations; helper shells: the server's reaped \`sh\` children), mean cores busy over the phase and the busiest one-second window, of ${os.availableParallelism()} cores.`,
    '',
  ].join('\n');
}
