/**
 * Kubernetes resource quantities (`128Mi`, `1.5Gi`, `1e3`, `500M`) as whole bytes, rounded up as Go's
 * `resource.Quantity.Value()` rounds them.
 *
 * @module
 */
import { parseQuantity, quantityValue } from '@kprov/quantity';

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
