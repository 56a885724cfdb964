// The template functions the chart uses, with Helm's semantics (Go text/template built-ins, sprig, Helm's own).
// A function missing here fails the parse of any template that names it; add it here, with its Go semantics.
import type { ParseOptions } from '../../../src/volume/text-template.js';
import { EvalError } from './errors.js';
import type { TemplateFunction } from './exec.js';
import { goJson, goPrettyJson } from './go-json.js';
import { goQuote, goTypeName, isMap, strval, toIntParam, toStringParam, truth, type GoMap } from './go-values.js';
import { sprintf } from './printf.js';
import { toYaml } from './to-yaml.js';

function arity(name: string, args: unknown[], want: number): void {
  if (args.length !== want) throw new EvalError(`wrong number of args for ${name}: want ${want} got ${args.length}`);
}

/** sprig's empty: nil, false, 0, "", and empty maps and lists (what `default` replaces). */
function empty(v: unknown): boolean {
  return !truth(v);
}

/** sprig's strslice: a list's non-nil items as strings; nil is no items; anything else one item. */
function strslice(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.filter((x) => x !== null && x !== undefined).map(strval);
  return [strval(v)];
}

function mapParam(v: unknown, fn: string): GoMap {
  if (isMap(v)) return v;
  throw new EvalError(`wrong type for value; expected map[string]interface {}; got ${goTypeName(v)} (in ${fn})`);
}

/** Go's eq for basic kinds: same-kind values compare; different kinds (other than nil) are an error. */
function basicEqual(a: unknown, b: unknown): boolean {
  const kind = (v: unknown): string => (v === null || v === undefined ? 'nil' : typeof v);
  if (kind(a) !== kind(b)) {
    if (kind(a) === 'nil' || kind(b) === 'nil') return false;
    throw new EvalError(`incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`);
  }
  if (typeof a === 'object' && a !== null) throw new EvalError(`non-comparable type ${goTypeName(a)}`);
  return a === b;
}

export const FUNCTIONS: ReadonlyMap<string, TemplateFunction> = new Map<string, TemplateFunction>([
  // text/template built-ins (and/or are evaluated lazily by the executor)
  ['and', () => undefined],
  ['or', () => undefined],
  ['not', (a) => (arity('not', a, 1), !truth(a[0]))],
  [
    'eq',
    (a) => {
      if (a.length < 2) throw new EvalError('missing argument for comparison');
      return a.slice(1).some((b) => basicEqual(a[0], b));
    },
  ],
  ['ne', (a) => (arity('ne', a, 2), !basicEqual(a[0], a[1]))],
  // Helm
  ['include', (a, env) => (arity('include', a, 2), env.include(toStringParam(a[0], 'include'), a[1]))],
  ['toYaml', (a) => (arity('toYaml', a, 1), toYaml(a[0]))],
  // sprig
  [
    'default',
    (a) => {
      if (a.length === 0) throw new EvalError('wrong number of args for default: want at least 1 got 0');
      if (a.length > 2) throw new EvalError(`wrong number of args for default: want at most 2 got ${a.length}`);
      return a.length === 1 || empty(a[1]) ? a[0] : a[1];
    },
  ],
  [
    'quote',
    (a) =>
      a
        .filter((v) => v !== null && v !== undefined)
        .map((v) => goQuote(strval(v)))
        .join(' '),
  ],
  ['indent', (a) => (arity('indent', a, 2), indent(toIntParam(a[0], 'indent'), toStringParam(a[1], 'indent')))],
  [
    'nindent',
    (a) => (arity('nindent', a, 2), `\n${indent(toIntParam(a[0], 'nindent'), toStringParam(a[1], 'nindent'))}`),
  ],
  ['trunc', (a) => (arity('trunc', a, 2), trunc(toIntParam(a[0], 'trunc'), toStringParam(a[1], 'trunc')))],
  [
    'trimSuffix',
    (a) => {
      arity('trimSuffix', a, 2);
      const [suffix, s] = [toStringParam(a[0], 'trimSuffix'), toStringParam(a[1], 'trimSuffix')];
      return suffix !== '' && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s;
    },
  ],
  [
    'replace',
    (a) => (
      arity('replace', a, 3),
      toStringParam(a[2], 'replace').replaceAll(toStringParam(a[0], 'replace'), toStringParam(a[1], 'replace'))
    ),
  ],
  [
    'contains',
    (a) => (arity('contains', a, 2), toStringParam(a[1], 'contains').includes(toStringParam(a[0], 'contains'))),
  ],
  ['printf', (a) => sprintf(toStringParam(a[0], 'printf'), a.slice(1))],
  ['b64enc', (a) => (arity('b64enc', a, 1), Buffer.from(toStringParam(a[0], 'b64enc'), 'utf8').toString('base64'))],
  ['toJson', (a) => (arity('toJson', a, 1), goJson(a[0]))],
  ['toPrettyJson', (a) => (arity('toPrettyJson', a, 1), goPrettyJson(a[0]))],
  [
    'dict',
    (a) => {
      const d: GoMap = {};
      for (let i = 0; i < a.length; i += 2) d[strval(a[i])] = i + 1 < a.length ? a[i + 1] : '';
      return d;
    },
  ],
  [
    'set',
    (a) => {
      arity('set', a, 3);
      const d = mapParam(a[0], 'set');
      d[toStringParam(a[1], 'set')] = a[2];
      return d;
    },
  ],
  // Go's map order is random: keys' order means nothing until sortAlpha sorts it.
  ['keys', (a) => a.flatMap((d) => Object.keys(mapParam(d, 'keys')))],
  ['sortAlpha', (a) => (arity('sortAlpha', a, 1), Array.isArray(a[0]) ? strslice(a[0]).sort() : [strval(a[0])])],
  ['join', (a) => (arity('join', a, 2), strslice(a[1]).join(toStringParam(a[0], 'join')))],
]);

function indent(n: number, s: string): string {
  const pad = ' '.repeat(Math.max(0, n));
  return pad + s.replaceAll('\n', `\n${pad}`);
}

/** sprig's trunc: the first n bytes, or with n < 0 the last -n. */
function trunc(n: number, s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  if (n < 0 && bytes.length + n > 0) return bytes.subarray(bytes.length + n).toString('utf8');
  if (n >= 0 && bytes.length > n) return bytes.subarray(0, n).toString('utf8');
  return s;
}

/** How the renderer parses chart templates: with these functions, pointing at this folder for anything missing. */
export const PARSE_OPTIONS: ParseOptions = {
  isFunction: (name) => FUNCTIONS.has(name),
  note: 'not implemented by the test renderer: see test/deploy/helm/functions.ts',
};
