// Go's encoding/json Marshal and MarshalIndent for template values: map keys sorted, HTML characters escaped as
// \u003c \u003e \u0026 (Marshal always does), U+2028/U+2029 escaped, float64 in Go's JSON number form.
import { notImplemented } from './errors.js';
import { GoStruct, isMap } from './go-values.js';

/** The value as plain JSON data (maps with sorted keys), or an error for what JSON cannot hold. */
function toJsonData(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw notImplemented(`JSON for the float64 ${v} (Go fails: unsupported value)`);
    return v;
  }
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toJsonData);
  if (isMap(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, toJsonData(v[k])]),
    );
  if (v instanceof GoStruct) throw notImplemented(`JSON of a ${v.typeName}`);
  throw notImplemented(`JSON of a JavaScript ${typeof v}`);
}

// JavaScript's number-to-JSON text matches Go's for float64 (integers plain, exponents from 1e21 and below 1e-6).
const escapeGo = (json: string): string =>
  json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** json.Marshal. */
export function goJson(v: unknown): string {
  return escapeGo(JSON.stringify(toJsonData(v)));
}

/** json.MarshalIndent(v, "", "  "). */
export function goPrettyJson(v: unknown): string {
  return escapeGo(JSON.stringify(toJsonData(v), null, 2));
}
