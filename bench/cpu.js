// CPU time and memory of the processes of a local-path run, per phase: the API server (with its simulations), the
// shell processes a kubelet ran for helper pods (its reaped children), the provisioners and this driver; on a real
// control plane also kube-controller-manager with kube-scheduler, and the kubelet process.
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { now, procCpuMs, procRssMiB } from './common.js';

const sum = (pids, fn) => pids.reduce((total, pid) => total + fn(pid), 0);

/**
 * `start()` begins a phase and `stop()` ends it, returning `{ wallMs, ms: {...}, cores: {...}, peakCores: {...},
 * rssMiB: {...}, peakRssMiB: {...} }` per process: CPU ms, mean cores busy (CPU ÷ wall time), the busiest
 * one-second window, and the resident memory at the end and at its highest of the one-second samples. `pids` maps a
 * name to a child's pid or to several pids, whose figures are summed (the node-mode provisioners). `helperShells`
 * is the CPU time of the reaped children of `shellsOf` (default the `server` pid): the helper pods' shells.
 */
export function cpuMeter(pids, { shellsOf = pids.server } = {}) {
  const lists = Object.fromEntries(Object.entries(pids).map(([name, p]) => [name, [p].flat()]));
  const read = () => {
    const own = process.cpuUsage();
    const sample = { at: now(), cpu: { driver: (own.user + own.system) / 1000 }, rss: {} };
    for (const [name, list] of Object.entries(lists)) {
      sample.cpu[name] = sum(list, (pid) => procCpuMs(pid));
      sample.rss[name] = sum(list, procRssMiB);
    }
    sample.cpu.helperShells = procCpuMs(shellsOf, { children: true });
    sample.rss.driver = process.memoryUsage.rss() / 2 ** 20;
    return sample;
  };
  let first;
  let last;
  let peak;
  let peakRss;
  let timer;
  const names = () => Object.keys(first.cpu);
  return {
    start() {
      first = read();
      last = first;
      peak = Object.fromEntries(names().map((n) => [n, 0]));
      peakRss = { ...first.rss };
      timer = setInterval(() => {
        const s = read();
        for (const n of names()) peak[n] = Math.max(peak[n], (s.cpu[n] - last.cpu[n]) / (s.at - last.at));
        for (const n of Object.keys(s.rss)) peakRss[n] = Math.max(peakRss[n], s.rss[n]);
        last = s;
      }, 1000);
    },
    stop() {
      clearInterval(timer);
      const end = read();
      const wallMs = end.at - first.at;
      const ms = Object.fromEntries(names().map((n) => [n, end.cpu[n] - first.cpu[n]]));
      const cores = Object.fromEntries(names().map((n) => [n, ms[n] / wallMs]));
      for (const n of Object.keys(end.rss)) peakRss[n] = Math.max(peakRss[n], end.rss[n]);
      return { wallMs, ms, cores, peakCores: peak, rssMiB: end.rss, peakRssMiB: peakRss };
    },
  };
}
