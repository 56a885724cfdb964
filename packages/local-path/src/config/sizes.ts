/**
 * Sizes, on `@kprov/quantity`: Kubernetes quantities (`128Mi`, `1.5Gi`, `1e3`, `500M`) as whole bytes, rounded up as
 * Go's `resource.Quantity.Value()` rounds them (a claim's request, a PV's capacity); the size settings of the config
 * (`capacity`, `minSize`, `maxSize`, and `auto` for a path's capacity); and byte counts printed back in binary units
 * for messages and the status table.
 *
 * @module
 */
import { parseQuantity, quantityValue } from '@kprov/quantity';
import { ConfigError } from './errors.js';
import type { PathCapacity } from './schema.js';

/**
 * The quantity in bytes, rounded up to an integer; `0n` for `undefined` or `""`.
 *
 * @throws Error `invalid quantity "<q>"` when the text is not a Kubernetes quantity or is negative.
 */
export function quantityToBytes(quantity: string | undefined): bigint {
  if (quantity === undefined || quantity === '') return 0n;
  let bytes: bigint;
  try {
    bytes = quantityValue(parseQuantity(quantity.trim()));
  } catch {
    throw new Error(`invalid quantity "${quantity}"`);
  }
  if (bytes < 0n) throw new Error(`invalid quantity "${quantity}"`);
  return bytes;
}

/** The `capacity` value that asks for the size of the path's file system. */
export const AUTO_CAPACITY = 'auto';

/**
 * A size setting in bytes. `what` names the setting in the error (`capacity of /data on node "a"`).
 *
 * @throws {@link ConfigError} `invalid-size` when the text is not a non-negative quantity.
 */
export function parseSize(text: string, what: string): bigint {
  const invalid = (): ConfigError =>
    new ConfigError(
      'invalid-size',
      `invalid ${what} "${text}"`,
      'write a Kubernetes quantity such as 500Mi, 20Gi or 1Ti',
    );
  // quantityToBytes reads an empty text as no request (0); a size setting must say something.
  if (text === '') throw invalid();
  try {
    return quantityToBytes(text);
  } catch {
    throw invalid();
  }
}

/**
 * A path's `capacity`: `auto` (any case), or a quantity in bytes.
 *
 * @throws {@link ConfigError} `invalid-size` for anything else.
 */
export function parsePathCapacity(text: string, what: string): PathCapacity {
  if (text.trim().toLowerCase() === AUTO_CAPACITY) return AUTO_CAPACITY;
  try {
    return parseSize(text, what);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.code, err.upstream, `${err.hint}, or "${AUTO_CAPACITY}" for the file system's size`);
  }
}

const UNITS = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

/**
 * Bytes for people: the largest binary unit that divides the number exactly (`600Mi`, `1Gi`), else the largest unit
 * below it with up to one decimal (`1.5Gi`, `23.4Mi`), else plain bytes.
 */
export function formatBytes(bytes: bigint): string {
  const negative = bytes < 0n;
  let n = negative ? -bytes : bytes;
  const sign = negative ? '-' : '';
  if (n < 1024n) return `${sign}${n}`;
  let unit = -1;
  let scale = 1n;
  while (unit + 1 < UNITS.length && n >= scale * 1024n) {
    scale *= 1024n;
    unit++;
  }
  const name = UNITS[unit]!;
  if (n % scale === 0n) return `${sign}${n / scale}${name}`;
  const tenths = (n * 10n) / scale;
  n = tenths;
  return `${sign}${n / 10n}.${n % 10n}${name}`;
}
