// CPU time of the processes of a local-path run, per phase: the API server (with its simulations), the shell
// processes its kubelet ran for helper pods (the server's reaped children), the provisioner and this driver.
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { now, procCpuMs } from './common.js';

/**
 * `start()` begins a phase and `stop()` ends it, returning `{ wallMs, ms: {...}, cores: {...}, peakCores: {...} }`
 * per process: CPU ms, mean cores busy (CPU ÷ wall time) and the busiest one-second window. `pids` maps a name to
 * a child's pid.
 */
export function cpuMeter(pids) {
  const read = () => {
    const own = process.cpuUsage();
    const sample = { at: now(), driver: (own.user + own.system) / 1000 };
    for (const [name, pid] of Object.entries(pids)) sample[name] = procCpuMs(pid);
    sample.helperShells = procCpuMs(pids.server, { children: true });
    return sample;
  };
  let first;
  let last;
  let peak;
  let timer;
  const names = () => Object.keys(first).filter((k) => k !== 'at');
  return {
    start() {
      first = read();
      last = first;
      peak = Object.fromEntries(names().map((n) => [n, 0]));
      timer = setInterval(() => {
        const s = read();
        for (const n of names()) peak[n] = Math.max(peak[n], (s[n] - last[n]) / (s.at - last.at));
        last = s;
      }, 1000);
    },
    stop() {
      clearInterval(timer);
      const end = read();
      const wallMs = end.at - first.at;
      const ms = Object.fromEntries(names().map((n) => [n, end[n] - first[n]]));
      const cores = Object.fromEntries(names().map((n) => [n, ms[n] / wallMs]));
      return { wallMs, ms, cores, peakCores: peak };
    },
  };
}
