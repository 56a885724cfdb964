/**
 * `resource.Quantity` as apimachinery decodes and serialises it (`k8s.io/apimachinery/pkg/api/resource`): a string
 * (or a bare JSON number) is parsed, and served back in canonical form unless it already was canonical, in which case
 * the client's own spelling is kept. So `1024Mi` comes back as `1Gi`, `1.5Gi` as `1536Mi`, `1000M` as `1G`, `0.5` as
 * `500m`, `2147483648` stays, and `010Mi` too (apimachinery only re-checks the digits of the int64 fast path).
 * Arithmetic is exact, on BigInt.
 */

/** apimachinery's error texts: `ErrFormatWrong`, `ErrNumeric`, `ErrSuffix`. */
export const QUANTITY_FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

/** A quantity that does not parse; `message` is apimachinery's. */
export class QuantityError extends Error {
  override readonly name = 'QuantityError';
}

type Format = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** A parsed quantity: `unscaled × 10^-scale`, its format, and the client's spelling when that was canonical. */
export interface Quantity {
  unscaled: bigint;
  scale: number;
  format: Format;
  cached?: string;
}

const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const MAX_INT64 = (1n << 63n) - 1n;
const NANO = -9;
const MAX_INT64_FACTORS = 18;
const DIGITS = /[0-9]/;

/** `parseQuantityString`: sign, numerator (leading zeros stripped), denominator, the numeric text and the suffix. */
function split(str: string): { positive: boolean; value: string; num: string; denom: string; suffix: string } {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (true) {
    if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
    if (str[pos] !== '0') break;
    pos++;
  }
  let num: string;
  let i = pos;
  while (i < end && DIGITS.test(str[i] ?? '')) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  num = str.slice(pos, i);
  pos = i;
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    let j = pos;
    while (j < end && DIGITS.test(str[j] ?? '')) j++;
    if (j >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: '' };
    denom = str.slice(pos, j);
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  let k = pos;
  while (k < end && 'eEinumkKMGTP'.includes(str[k] ?? '')) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  if (str[k] === '-' || str[k] === '+') k++;
  while (k < end && DIGITS.test(str[k] ?? '')) k++;
  if (k < end) throw new QuantityError(QUANTITY_FORMAT_WRONG);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** `suffixer.interpret`: base, exponent and format of a suffix. */
function interpret(suffix: string): { base: 10 | 2; exponent: number; format: Format } | undefined {
  const d = DECIMAL[suffix];
  if (d !== undefined) return { base: 10, exponent: d, format: 'DecimalSI' };
  const b = BINARY[suffix];
  if (b !== undefined) return { base: 2, exponent: b, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const rest = suffix.slice(1);
    if (!/^[+-]?\d+$/.test(rest)) return undefined;
    const n = Number(rest);
    if (!Number.isSafeInteger(n)) return undefined;
    return { base: 10, exponent: n, format: 'DecimalExponent' };
  }
  return undefined;
}

/** A decimal string (`-12.34`) as unscaled and scale. */
function decimal(text: string): { unscaled: bigint; scale: number } {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (m === null || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) throw new QuantityError(NUMERIC);
  const digits = `${m[2] ?? ''}${m[3] ?? ''}`;
  const unscaled = BigInt(digits === '' ? '0' : digits);
  return { unscaled: m[1] === '-' ? -unscaled : unscaled, scale: (m[3] ?? '').length };
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/**
 * `resource.ParseQuantity`: the quantity `str` spells.
 *
 * @throws QuantityError with apimachinery's text when it does not parse.
 */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(QUANTITY_FORMAT_WRONG);
  if (str === '0') return { unscaled: 0n, scale: 0, format: 'DecimalSI', cached: str };
  const { positive, value, num, denom, suffix } = split(str);
  const s = interpret(suffix);
  if (s === undefined) throw new QuantityError(SUFFIX);
  let format = s.format;
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (s.exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(s.exponent);
      precision = 15 - num.length - Math.trunc((s.exponent * 3) / 10) - 1;
    } else precision = -1;
  } else {
    scale = s.exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const v = BigInt(shifted);
      if (v > MAX_INT64) throw new QuantityError(NUMERIC);
      let result = v * mantissa;
      if (result <= MAX_INT64) {
        if (!positive) result = -result;
        const canonical =
          format === 'BinarySI'
            ? s.exponent % 10 === 0 && (v & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return { unscaled: result, scale: -scale, format, ...(canonical ? { cached: str } : {}) };
      }
    }
  }
  // The arbitrary-precision path.
  let { unscaled, scale: dscale } = decimal(value);
  if (s.base === 10) dscale -= s.exponent;
  else unscaled *= 1n << BigInt(s.exponent);
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  if (unscaled !== 0n && dscale > -NANO) {
    // Round up to the nano: asking for a little is asking for something.
    const div = pow10(dscale + NANO);
    unscaled = (unscaled + div - 1n) / div;
    dscale = -NANO;
  }
  if (format === 'BinarySI') {
    if (compare(unscaled, dscale, MAX_INT64, 0) > 0) {
      unscaled = MAX_INT64;
      dscale = 0;
    }
    if (compare(unscaled, dscale, 1n, 0) < 0 && unscaled > 0n) format = 'DecimalSI';
  }
  return { unscaled: negative ? -unscaled : unscaled, scale: dscale, format };
}

/** Compares `a × 10^-as` with `b × 10^-bs`. */
function compare(a: bigint, as: number, b: bigint, bs: number): number {
  const s = Math.max(as, bs);
  const x = a * pow10(s - as);
  const y = b * pow10(s - bs);
  return x < y ? -1 : x > y ? 1 : 0;
}

function removeFactors(value: bigint, base: bigint): [bigint, number] {
  let v = value < 0n ? -value : value;
  let times = 0;
  while (v >= base && v % base === 0n) {
    v /= base;
    times++;
  }
  return [value < 0n ? -v : v, times];
}

/** `Quantity.String`: the client's spelling when it was canonical, else the canonical form. */
export function quantityString(q: Quantity): string {
  if (q.unscaled === 0n) return '0';
  if (q.cached !== undefined) return q.cached;
  let format = q.format;
  if (format === 'BinarySI') {
    const exact = q.scale <= 0 || q.unscaled % pow10(q.scale) === 0n;
    if ((compare(q.unscaled, q.scale, -1024n, 0) > 0 && compare(q.unscaled, q.scale, 1024n, 0) < 0) || !exact)
      format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const integer = q.scale <= 0 ? q.unscaled * pow10(-q.scale) : q.unscaled / pow10(q.scale);
    const [amount, times] = removeFactors(integer, 1024n);
    const suffix = Object.entries(BINARY).find(([, e]) => e === times * 10)?.[0] ?? '';
    return `${amount}${times === 0 ? '' : suffix}`;
  }
  const [stripped, times] = removeFactors(q.unscaled, 10n);
  let amount = stripped;
  let exponent = -q.scale + times;
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent--;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  const suffix = Object.entries(DECIMAL).find(([, e]) => e === exponent)?.[0] ?? '';
  return `${amount}${suffix}`;
}

/**
 * A quantity value as the apiserver serves it back after decoding it from JSON: a string (surrounding spaces
 * dropped) or a number, `null` being zero. Throws {@link QuantityError} for anything else that does not parse.
 */
export function canonicalQuantity(value: unknown): string {
  if (value === null) return '0';
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else throw new QuantityError(QUANTITY_FORMAT_WRONG);
  return quantityString(parseQuantity(text));
}

/** `Quantity.Value`: the value rounded up to an integer, away from zero (`1.5` is 2, `-1.5` is -2, `100m` is 1). */
export function quantityValue(q: Quantity): bigint {
  if (q.scale <= 0) return q.unscaled * pow10(-q.scale);
  const div = pow10(q.scale);
  const negative = q.unscaled < 0n;
  const magnitude = negative ? -q.unscaled : q.unscaled;
  const rounded = (magnitude + div - 1n) / div;
  return negative ? -rounded : rounded;
}

/**
 * A quantity's value as a double (`"1Gi"`, `"500m"`, or a bare JSON number), for comparing sizes; `undefined` when it
 * does not parse.
 */
export function quantityNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  let q: Quantity;
  try {
    q = parseQuantity(value.trim());
  } catch {
    return undefined;
  }
  return Number(q.unscaled) * 10 ** -q.scale;
}
