/** Helpers shared by the per-kind printers: loose JSON access, timestamps, the age format, common columns. */

import { isPlainObject, type KubeObject } from '../../api/objects.js';
import type { TableColumnDefinition } from './types.js';

/** `v` when it is a JSON object, else an empty one, so nested fields can be read without checks. */
export function rec(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

/** `v` when it is a string, else `''` (Go's zero value for a missing string field). */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `v` when it is a finite number, else 0 (Go's zero value for a missing integer field). */
export function int(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `v` when it is an array, else an empty one. */
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** The number of keys of a JSON object field (`len(map)` in Go); 0 when absent. */
export function keyCount(v: unknown): number {
  return Object.keys(rec(v)).length;
}

/**
 * A `metav1.Time` field as epoch milliseconds, cut to whole seconds as the server stores it (RFC 3339 without
 * fraction); `undefined` for a missing or unparsable value, which Go sees as the zero time.
 */
export function parseTime(v: unknown): number | undefined {
  const ms = parseMicroTime(v);
  return ms === undefined ? undefined : Math.floor(ms / 1000) * 1000;
}

/** A `metav1.MicroTime` field as epoch milliseconds (sub-millisecond digits dropped); `undefined` when zero. */
export function parseMicroTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * A duration as kubectl shows ages, with two or three significant figures: `5s`, `119s`, `3m20s`, `45m`, `3h5m`,
 * `20h`, `2d3h`, `30d`, `2y47d`, `9y` (apimachinery's `duration.HumanDuration`). Up to a second in the future
 * reads `0s`; further ahead is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 3 * 60) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 8 * 24) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 2 * 365 * 24) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 8 * 365 * 24) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** The time since `at` in {@link humanDuration} form, `<unknown>` for a zero time (`translateTimestampSince`). */
export function since(at: number | undefined, now: number): string {
  return at === undefined ? '<unknown>' : humanDuration(now - at);
}

/** The AGE cell of an object: time since its creationTimestamp. */
export function age(metadata: { creationTimestamp?: unknown }, now: number): string {
  return since(parseTime(metadata.creationTimestamp), now);
}

/** Builds a column definition; `format` and `priority` default to `''` and 0 as in Go. */
export function column(
  name: string,
  type: string,
  description: string,
  extra: { format?: string; priority?: number } = {},
): TableColumnDefinition {
  return { name, type, format: extra.format ?? '', description, priority: extra.priority ?? 0 };
}

/** `ObjectMeta.name`'s API description, which the Name columns carry. */
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** `ObjectMeta.creationTimestamp`'s API description, which the Age columns carry. */
export const CREATION_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** The `Name` column every printer starts with. */
export const NAME_COLUMN = column('Name', 'string', NAME_DESCRIPTION, { format: 'name' });

/** The `Age` column most printers have. */
export const AGE_COLUMN = column('Age', 'string', CREATION_DESCRIPTION);

/** Whether `obj[key]` is set to an object: a non-nil pointer in Go, such as `state.terminated`. */
export function has(obj: Record<string, unknown>, key: string): boolean {
  return isPlainObject(obj[key]);
}

/** Whether the object has a deletionTimestamp, i.e. is being deleted and waits on finalizers. */
export function deleting(obj: KubeObject): boolean {
  const v: unknown = obj.metadata.deletionTimestamp;
  return v !== undefined && v !== null;
}
