/**
 * PV names of discovered volumes, as upstream names them: `local-pv-` and the FNV-1a 32-bit hash of the entry name,
 * the node name and the class name.
 *
 * @module
 */

/** Prefix of every PV name. */
export const PV_NAME_PREFIX = 'local-pv-';

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  // An index loop, not for...of: every pass hashes every entry, in code that runs too seldom to be optimized, where an
  // iterator per byte was most of the idle provisioner's own CPU time.
  const bytes = Buffer.from(text, 'utf8');
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ (bytes[i] ?? 0), 0x01000193);
  return hash >>> 0;
}

/**
 * `local-pv-<hex>`: the FNV-1a 32-bit hash of `entry`, `node` and `className` concatenated without separator, in
 * lowercase hexadecimal **without zero padding** (Go's `%x` of a uint32), so a name may have fewer than 8 digits.
 * The node's name is hashed (not its UID), so the same layout on two nodes gives two names.
 */
export function volumeName(entry: string, node: string, className: string): string {
  return `${PV_NAME_PREFIX}${fnv1a32(entry + node + className).toString(16)}`;
}
