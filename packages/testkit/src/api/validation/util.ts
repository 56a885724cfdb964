/**
 * Small shared pieces for the validators: loose JSON accessors, field-path builders, the `field.Error` kinds that
 * `status.ts` has no builder for, Go-style value rendering, semantic equality and resource quantities.
 */
import { quantityNumber } from '@kprov/quantity';
import { isPlainObject } from '../objects.js';
import type { FieldError } from '../status.js';

/** A JSON object as the validators see it. */
export type Obj = Record<string, unknown>;

/** The value when it is a JSON object, else `undefined`. */
export function asObj(value: unknown): Obj | undefined {
  return isPlainObject(value) ? value : undefined;
}

/** The value when it is an array, else an empty one (Go treats a nil slice as empty). */
export function asArr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value when it is a string, else `''` (Go's zero value). */
export function asStr(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The value when it is a finite number, else `undefined`. */
export function asNum(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string-valued map (labels, annotations, data); entries that are not strings are skipped. */
export function asStringMap(value: unknown): [string, string][] {
  const o = asObj(value);
  if (o === undefined) return [];
  return Object.entries(o).filter((e): e is [string, string] => typeof e[1] === 'string');
}

/** Go's `len()` of a string: its UTF-8 byte count. */
export function byteLen(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** `field.Path.Child`: joins with dots. */
export function child(path: string, ...names: string[]): string {
  return [path, ...names].join('.');
}

/** `field.Path.Index`: `path[i]`. */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** `field.Path.Key`: `path[key]`, unquoted as the real server prints it. */
export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}

/** `field.NotFound` (rendered `Not found: "x"`); the type union in status.ts lacks this reason, hence the widening. */
export function notFound(field: string, value: string): FieldError {
  return {
    type: 'FieldValueNotFound' as string as FieldError['type'],
    field,
    message: `Not found: ${JSON.stringify(value)}`,
  };
}

/** `field.TooLong` with a byte limit, as kube-apiserver 1.32 words it. */
export function tooLong(field: string, maxBytes: number): FieldError {
  return { type: 'FieldValueTooLong', field, message: `Too long: may not be more than ${maxBytes} bytes` };
}

/** An Invalid error whose value is already rendered (for Go types that print without quotes). */
export function invalidRaw(field: string, rendered: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${rendered}: ${detail}` };
}

/** A NotSupported error whose value is already rendered. */
export function notSupportedRaw(field: string, rendered: string, supported: readonly string[]): FieldError {
  const list = supported.map((v) => JSON.stringify(v)).join(', ');
  return {
    type: 'FieldValueNotSupported',
    field,
    message: `Unsupported value: ${rendered}: supported values: ${list}`,
  };
}

/** Go's `%#v` of a `[]string`: `[]string{"a", "b"}`. */
export function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** `time.Time.String()` of an RFC 3339 timestamp, e.g. `2024-01-02 03:04:05 +0000 UTC`; `null` when unset. */
export function goTime(value: unknown): string {
  if (typeof value !== 'string' || value === '') return 'null';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  const iso = d.toISOString();
  const frac = d.getUTCMilliseconds() === 0 ? '' : `.${iso.slice(20, 23).replace(/0+$/, '')}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac} +0000 UTC`;
}

/** Keys under which values are resource quantities, compared by amount rather than spelling. */
const QUANTITY_MAPS = new Set(['requests', 'limits', 'capacity', 'allocatedResources', 'allocatable', 'overhead']);

/** True for what Go would see as an unset value: absent, null, an empty list or an empty map. */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isPlainObject(v) && Object.keys(v).length === 0;
}

/**
 * `apiequality.Semantic.DeepEqual` over JSON: nil and empty lists/maps are equal, and resource quantities compare by
 * amount (`1Gi` equals `1024Mi`).
 */
export function semanticEqual(a: unknown, b: unknown, inQuantityMap = false): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (
    inQuantityMap &&
    (typeof a === 'string' || typeof a === 'number') &&
    (typeof b === 'string' || typeof b === 'number')
  ) {
    const qa = parseQuantity(a);
    const qb = parseQuantity(b);
    if (qa !== undefined && qb !== undefined) return qa === qb;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isPlainObject(a) || isPlainObject(b)) {
    if (!isPlainObject(a) || !isPlainObject(b)) return false;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!semanticEqual(a[k], b[k], QUANTITY_MAPS.has(k))) return false;
    }
    return true;
  }
  return a === b;
}

/**
 * A readable stand-in for the `cmp.Diff` the real server appends to "immutable" messages: one `-`/`+` line pair per
 * top-level field that differs. The real text is Go-specific and not reproduced.
 */
export function diffLines(typeName: string, oldValue: unknown, newValue: unknown): string {
  const o = asObj(oldValue) ?? {};
  const n = asObj(newValue) ?? {};
  const lines = [`  ${typeName}{`];
  for (const k of [...new Set([...Object.keys(o), ...Object.keys(n)])].sort()) {
    if (semanticEqual(o[k], n[k], QUANTITY_MAPS.has(k))) continue;
    if (!isEmpty(o[k])) lines.push(`- \t${k}: ${JSON.stringify(o[k])},`);
    if (!isEmpty(n[k])) lines.push(`+ \t${k}: ${JSON.stringify(n[k])},`);
  }
  lines.push('  }');
  return lines.join('\n');
}

/** The amount of a `resource.Quantity` as a double; `undefined` when it does not parse. */
export const parseQuantity = quantityNumber;

/** `ErrorList.ToAggregate`: drops errors whose rendered text repeats an earlier one. */
export function dedupe(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const text = `${e.field}: ${e.message}`;
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}
