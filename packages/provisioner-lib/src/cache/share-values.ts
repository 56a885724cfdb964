import type { KubernetesObject } from '@kubernetes/client-node';
import type { InternTable } from './intern-table.js';

/**
 * Fields, at any depth, whose values differ from one object to the next (`metadata.name`, `uid`, `resourceVersion`,
 * a claim's `volumeName`, a claimRef's `name` and `uid`, a volume's `path` or CSI `volumeHandle`, a condition's
 * `message`): the table would hold them for nothing.
 */
const UNIQUE_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'uid',
  'resourceVersion',
  'selfLink',
  'volumeName',
  'path',
  'volumeHandle',
  'message',
]);

function shareArray(list: unknown[], table: InternTable, strings: boolean): void {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item === 'string') {
      if (strings) list[i] = table.intern(item);
    } else if (typeof item === 'object' && item !== null) {
      if (Array.isArray(item)) shareArray(item as unknown[], table, strings);
      else if (!(item instanceof Date)) shareObject(item as Record<string, unknown>, table);
    }
  }
}

function shareObject(object: Record<string, unknown>, table: InternTable): void {
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (typeof value === 'string') {
      // Assigned even when it is the same string: equal strings cannot be told apart, and storing a string where a
      // string was keeps the object's shape.
      if (!UNIQUE_FIELDS.has(key)) object[key] = table.intern(value);
    } else if (typeof value === 'object' && value !== null) {
      if (Array.isArray(value)) shareArray(value as unknown[], table, !UNIQUE_FIELDS.has(key));
      else if (!(value instanceof Date)) shareObject(value as Record<string, unknown>, table);
    }
  }
}

/**
 * Replaces, in place, the string values of `object` that repeat across objects (kind, apiVersion, namespace,
 * label and annotation values, finalizers, class name, access modes, volume mode, quantities, phase, reclaim
 * policy, driver names, node names in affinities, …) with `table`'s copy of each, so that a cache holds one copy of
 * each value rather than one per object. Names, uids, resourceVersions and other per-object values are left as they
 * are. Only strings change: every object and array stays the object's own, and every value reads the same.
 */
export function shareRepeatedValues<T extends KubernetesObject>(object: T, table: InternTable): T {
  shareObject(object as unknown as Record<string, unknown>, table);
  return object;
}
