/**
 * Kubernetes resource quantities (`128Mi`, `1.5Gi`, `1e3`, `500M`) as whole bytes, rounded up as Go's
 * `resource.Quantity.Value()` rounds them.
 *
 * @module
 */

const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/**
 * The quantity in bytes, rounded up to an integer; `0n` for `undefined` or `""`.
 *
 * @throws Error `invalid quantity "<q>"` when the text is not a Kubernetes quantity or is negative.
 */
export function quantityToBytes(quantity: string | undefined): bigint {
  if (quantity === undefined || quantity === '') return 0n;
  const m = QUANTITY.exec(quantity.trim());
  if (m === null || m[1] === '-') throw new Error(`invalid quantity "${quantity}"`);
  const [intPart = '', fracPart = ''] = (m[2] ?? '0').split('.');
  let numerator = BigInt(`${intPart}${fracPart}` || '0');
  let denominator = 10n ** BigInt(fracPart.length);
  const suffix = m[3] ?? '';
  if (suffix in BINARY) {
    numerator *= 1024n ** BigInt(BINARY[suffix]!);
  } else {
    const exponent = m[4] !== undefined ? Number(m[4]) : DECIMAL[suffix]!;
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return (numerator + denominator - 1n) / denominator;
}
