// Measuring and printing durations.

/** Starts a stopwatch: the function returned gives the milliseconds since. */
export function stopwatch(): () => number {
  const start = performance.now();
  return () => performance.now() - start;
}

/** `12.3 s`, or `4 min 05 s` from a minute on. */
export function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, '0')} s`;
}

/** `1.234 s`: for times of a second or so. */
export function precise(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}
