// Go values as the renderer models them, and how Go prints and tests them.
//   undefined        an invalid reflect.Value (what a nil pipeline result becomes; printed "<no value>")
//   null             a nil interface{} (a missing map key under Helm's missingkey=zero, or a YAML null)
//   string, boolean  string, bool
//   number           float64 (every number of values.yaml: Helm decodes values through JSON)
//   bigint           int (integer constants in templates, e.g. `trunc 63`)
//   unknown[]        []interface{}
//   plain object     map[string]interface{}
//   GoStruct         a struct with fixed fields (.Chart is *chart.Metadata)
import { EvalError, notImplemented } from './errors.js';

export type GoMap = Record<string, unknown>;

/** A Go struct: its fields, and its type name for errors. Reading a field it lacks is an error, as in Go. */
export class GoStruct {
  constructor(
    readonly typeName: string,
    readonly fields: Readonly<Record<string, unknown>>,
  ) {}
}

/** A built-in object Helm has but this renderer does not (e.g. .Files): reading any field of it fails clearly. */
export class Unimplemented {
  constructor(readonly what: string) {}
}

export function isMap(v: unknown): v is GoMap {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof GoStruct) &&
    !(v instanceof Unimplemented)
  );
}

/** The Go type name of a value, as Go's error messages spell it. */
export function goTypeName(v: unknown): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'bigint') return 'int';
  if (Array.isArray(v)) return '[]interface {}';
  if (v instanceof GoStruct) return v.typeName;
  if (isMap(v)) return 'map[string]interface {}';
  throw notImplemented(`a value of JavaScript type ${typeof v}`);
}

/** text/template's truth: false for nil, false, 0, "", and empty maps and slices; structs are always true. */
export function truth(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

/**
 * strconv.FormatFloat(v, 'g', -1, 64), which fmt's %v uses for a float64: the shortest digits that round-trip, in %e
 * form when the decimal exponent is < -4 or >= 6 (so 1000000 prints as 1e+06, a known Helm surprise).
 */
export function formatFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  return v.toFixed(Math.max(0, mantissa.replace(/^-/, '').replace('.', '').length - 1 - exp));
}

/** fmt's %v. */
export function formatV(v: unknown): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return formatFloat(v);
  if (Array.isArray(v)) return `[${v.map(formatV).join(' ')}]`;
  if (isMap(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${formatV(v[k])}`)
      .join(' ')}]`;
  if (v instanceof GoStruct) return `&{${Object.values(v.fields).map(formatV).join(' ')}}`;
  throw notImplemented(`printing a ${goTypeName(v)}`);
}

/** sprig's strval: strings as they are, everything else with %v. */
export function strval(v: unknown): string {
  return typeof v === 'string' ? v : formatV(v);
}

/** strconv.Quote (fmt's %q of a string): Go escapes, non-printable ASCII as \x.., printable Unicode kept. */
export function goQuote(s: string): string {
  const named: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch in named) out += named[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Converts a template argument to a Go int parameter (an int constant, not a float64 from values). */
export function toIntParam(v: unknown, fn: string): number {
  if (typeof v === 'bigint') return Number(v);
  throw new EvalError(`wrong type for value; expected int; got ${goTypeName(v)} (in ${fn})`);
}

/** Converts a template argument to a Go string parameter. */
export function toStringParam(v: unknown, fn: string): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) throw new EvalError(`invalid value; expected string (in ${fn})`);
  throw new EvalError(`wrong type for value; expected string; got ${goTypeName(v)} (in ${fn})`);
}
