// How responsive the API server stays during a phase: one small GET at a time, every `intervalMs`, timed from the
// driver. The testkit serves everything, its simulations included, on one event loop, so this is that loop's lag
// as a client feels it; blocking calls (fork/exec, synchronous file system calls) show here even where they cost
// little CPU time.
import { clearTimeout, setTimeout } from 'node:timers';
import { now, percentile } from './common.js';

/** `start()` begins probing with `request` (a function returning a promise); `stop()` ends it and returns p50/p99/max in ms. */
export function latencyProbe(request, intervalMs = 100) {
  let samples = [];
  let timer;
  let running = false;
  const tick = async () => {
    const t = now();
    await request().catch(() => undefined);
    samples.push(now() - t);
    if (running) timer = setTimeout(() => void tick(), intervalMs);
  };
  return {
    start() {
      samples = [];
      running = true;
      void tick();
    },
    stop() {
      running = false;
      clearTimeout(timer);
      const xs = [...samples].sort((a, b) => a - b);
      return { p50: percentile(xs, 50), p99: percentile(xs, 99), max: xs.at(-1) ?? NaN, n: xs.length };
    },
  };
}
