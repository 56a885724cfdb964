/**
 * Capacities as upstream writes and labels them: rounded down to something readable on the PV, bucketed by 500 GiB in
 * the delete duration metric.
 *
 * @module
 */
import { quantityString } from '@kprov/quantity';

const MiB = 1n << 20n;
const GiB = 1n << 30n;

/**
 * Upstream's `roundDownCapacityPretty`: from 10 GiB whole GiB, from 10 MiB whole MiB, below that the bytes as they are.
 */
export function roundDownCapacity(bytes: bigint): bigint {
  if (bytes / GiB >= 10n) return (bytes / GiB) * GiB;
  if (bytes / MiB >= 10n) return (bytes / MiB) * MiB;
  return bytes;
}

/** The capacity as the PV shows it: {@link roundDownCapacity}, printed as a binary-SI quantity (`100Ki`, `10Gi`, `12345`). */
export function capacityQuantity(bytes: bigint): string {
  return quantityString({ unscaled: roundDownCapacity(bytes), scale: 0, format: 'BinarySI' });
}

/**
 * The `capacity` label of the delete duration metric: the size rounded up to whole GiB, then up to a multiple of 500,
 * as `<n>G` (`0G`, `500G`, `1000G`, ...).
 */
export function capacityBucket(bytes: bigint): string {
  const gib = (bytes + GiB - 1n) / GiB;
  const buckets = (gib + 499n) / 500n;
  return `${buckets * 500n}G`;
}
