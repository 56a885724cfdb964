/**
 * A YAML number or boolean read into a string field, as upstream reads it. sigs.k8s.io/yaml (`convertToJSONableObject`)
 * turns a scalar whose Go target is a string into that string before encoding/json sees it: an int (Go's `int`,
 * `int64`, `uint64`) into its decimal digits, a float into `strconv.FormatFloat(f, 'g', -1, 32)` (float32's shortest
 * digits, `1.0` → `1`, `1e3` → `1000`, `1000000.0` → `1e+06`), a boolean (YAML 1.1's `yes`, `on`, `true`… or `no`,
 * `off`, `false`…) into `true` or `false`.
 *
 * The YAML is parsed with ints as bigints and floats as numbers (see `parseConfigTexts`), so that the two stay apart as
 * they do in Go.
 *
 * @module
 */

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * `value` as upstream reads it into a Go string: a bigint (a YAML int), a number (a YAML float) or a boolean as its text
 * (see the module comment); anything else as it is.
 */
export function goString(value: unknown): unknown {
  if (typeof value === 'boolean') return String(value);
  // go-yaml reads an int beyond int64 and uint64 as a float.
  if (typeof value === 'bigint')
    return value >= INT64_MIN && value <= UINT64_MAX ? value.toString() : formatFloat32(Number(value));
  if (typeof value === 'number') return formatFloat32(value);
  return value;
}

/**
 * Go's `strconv.FormatFloat(value, 'g', -1, 32)`: the fewest decimal digits that read back as the same float32 (the
 * nearer of the two candidates when both do), in `%e` form when the decimal exponent is below -4 or at least 6
 * (`1e+06`, `1.5e-05`), else in `%f` form; `+Inf`, `-Inf`, `NaN`.
 */
export function formatFloat32(value: number): string {
  const f = Math.fround(value);
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const sign = f < 0 ? '-' : '';
  const { digits, exp } = shortestDigits(Math.abs(f));
  if (exp < -4 || exp >= 6) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/**
 * The shortest digits (no trailing zeros) of the positive float32 `f`, with the decimal exponent of the first one: at
 * the fewest digits where `f` rounded down or up reads back as `f`, the nearer of them (an even last digit on a tie),
 * as Go's shortest formatting picks.
 */
function shortestDigits(f: number): { digits: string; exp: number } {
  for (let precision = 1; ; precision++) {
    const [mantissa, e] = f.toExponential(precision - 1).split('e') as [string, string];
    const exp = Number(e);
    const nearest = Number(mantissa.replace('.', ''));
    const scale = exp - precision + 1;
    const readsBack = (n: number): boolean => Math.fround(Number(`${n}e${scale}`)) === f;
    const found = [nearest, nearest - 1, nearest + 1]
      .filter(readsBack)
      .sort(
        (a, b) => Math.abs(Number(`${a}e${scale}`) - f) - Math.abs(Number(`${b}e${scale}`) - f) || (a % 2) - (b % 2),
      );
    if (found.length > 0) {
      const text = String(found[0]);
      // A carry (9.99… up to 10) adds a digit: the exponent grows with it.
      return { digits: text.replace(/0+$/, ''), exp: exp + text.length - precision };
    }
  }
}
