/** Go durations: `time.ParseDuration` for duration flags, and `time.Duration.String()` for messages and helps. */
export { goDuration as formatGoDuration } from '../client/rate-limit/throttle-message.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A Go duration (`15s`, `1m30s`, `1.5h`, `300ms`, `-2s`, `0`) in milliseconds, as Go's `time.ParseDuration` reads
 * it: a sign, then one or more decimal numbers each followed by a unit (`ns`, `us` or `µs`, `ms`, `s`, `m`, `h`).
 * Returns undefined for anything else, including a number without a unit other than `0`.
 */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let ms = 0;
  const part = /^(\d*)(?:\.(\d*))?([^\d.]+)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (m === null) return undefined;
    const [whole, int = '', frac, unit = ''] = m;
    // Go refuses "." and ".s": some digit must stand on one side of the point.
    if (int === '' && (frac === undefined || frac === '')) return undefined;
    const factor = UNIT_MS[unit];
    if (factor === undefined) return undefined;
    ms += Number(`${int === '' ? '0' : int}.${frac ?? ''}0`) * factor;
    rest = rest.slice(whole.length);
  }
  return sign * ms;
}
