/**
 * The mount table of the provisioner's mount namespace, as a set of mount point paths.
 *
 * @module
 */
import { readFile } from '../fs/async.js';

/** Where the mount table is read from by default: this process's own view, `/proc/self/mountinfo`. */
export const DEFAULT_MOUNT_INFO = '/proc/self/mountinfo';

/** Undoes the kernel's octal escapes of space, tab, newline and backslash (`\040`, `\011`, `\012`, `\134`). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The mount points of a mount table's text: the fifth field of each line of the `mountinfo` format
 * (`36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw`), unescaped. Lines that are too short are
 * skipped.
 */
export function parseMountInfo(text: string): Set<string> {
  const points = new Set<string>();
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4];
    if (fields.length < 5 || point === undefined || point === '') continue;
    points.add(unescape(point));
  }
  return points;
}

/** Reads the mount table at `file` (default {@link DEFAULT_MOUNT_INFO}). */
export async function readMountPoints(file: string = DEFAULT_MOUNT_INFO): Promise<Set<string>> {
  return parseMountInfo(await readFile(file, 'utf8'));
}
