// Helm's values: a chart's values.yaml read as Helm reads it (YAML 1.1 through JSON, so every number is a float64),
// and user values coalesced over it as `helm template -f` does.
import { parse } from 'yaml';
import { notImplemented } from './errors.js';
import { isMap, type GoMap } from './go-values.js';

/** Parses a values file: YAML 1.1 (yes/no/on/off are booleans, as for go-yaml v2), keys as strings. */
export function parseValues(file: string, text: string): GoMap {
  const value: unknown = parse(text, { version: '1.1', uniqueKeys: true, prettyErrors: true }) ?? {};
  if (!isMap(value))
    throw new Error(`${file}: values must be a map, got ${Array.isArray(value) ? 'a list' : typeof value}`);
  return asJsonData(value, file) as GoMap;
}

/** The value as JSON data, which is what sigs.k8s.io/yaml hands Helm. */
export function asJsonData(v: unknown, where: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x, i) => asJsonData(x, `${where}[${i}]`));
  if (isMap(v) && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asJsonData(x, `${where}.${k}`)]));
  }
  throw notImplemented(
    `a values entry of type ${Object.prototype.toString.call(v)} at ${where} (e.g. a timestamp or a binary)`,
  );
}

/**
 * Helm's coalescing of `user` values over the chart's `defaults` (chartutil.CoalesceValues): maps merge key by key,
 * anything else in `user` wins, and a user null deletes the chart's key. Neither argument is changed.
 */
export function coalesceValues(defaults: GoMap, user: GoMap): GoMap {
  const out = structuredClone(user);
  coalesceInto(out, structuredClone(defaults));
  return out;
}

function coalesceInto(dst: GoMap, src: GoMap): void {
  for (const [key, value] of Object.entries(src)) {
    if (!Object.hasOwn(dst, key)) dst[key] = value;
    else if (dst[key] === null) delete dst[key];
    else if (isMap(dst[key]) && isMap(value)) coalesceInto(dst[key], value);
  }
}
