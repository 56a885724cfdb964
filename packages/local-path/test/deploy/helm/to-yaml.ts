// Helm's toYaml: sigs.k8s.io/yaml.Marshal (JSON first, then go-yaml v2's block emitter) with the final newline
// trimmed. So: map keys in go-yaml's natural order, sequences under a key not indented, 2-space indentation, numbers
// as JSON gave them, strings plain when that reads back as the same string, else single- or double-quoted, and
// multi-line strings as literal blocks (|, |-, |+). go-yaml folds long strings at 80 columns; this renderer does not
// and throws instead (see `checkWidth`).
import { EvalError, notImplemented } from './errors.js';
import { goJson } from './go-json.js';
import { formatFloat } from './go-values.js';

const WIDTH = 80;

/** toYaml. */
export function toYaml(v: unknown): string {
  const data: unknown = JSON.parse(goJson(v));
  return emitTop(data).replace(/\n$/, '');
}

function isNonEmptyMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0;
}
const isNonEmptyList = (v: unknown): v is unknown[] => Array.isArray(v) && v.length > 0;

function emitTop(v: unknown): string {
  if (isNonEmptyMap(v) || isNonEmptyList(v)) return `${block(v, 0).join('\n')}\n`;
  const s = scalar(v, 0, 2, false);
  return `${s}\n`;
}

/** The lines of a non-empty map or list whose entries start at column `indent`. */
function block(v: Record<string, unknown> | unknown[], indent: number): string[] {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isNonEmptyMap(item) || isNonEmptyList(item)) {
        const inner = block(item, indent + 2);
        lines.push(`${pad}- ${inner[0]!.slice(indent + 2)}`, ...inner.slice(1));
      } else {
        lines.push(`${pad}- ${scalar(item, indent + 2, indent + 2, false)}`);
      }
    }
    return lines;
  }
  for (const key of Object.keys(v).sort(keyCompare)) {
    if ([...key].length > 128) throw notImplemented('toYaml of a map key longer than 128 characters (a complex key)');
    const k = scalar(key, indent, indent + 2, true);
    const value = v[key];
    if (isNonEmptyMap(value)) lines.push(`${pad}${k}:`, ...block(value, indent + 2));
    else if (isNonEmptyList(value)) lines.push(`${pad}${k}:`, ...block(value, indent));
    else lines.push(`${pad}${k}: ${scalar(value, indent + k.length + 2, indent + 2, false)}`);
  }
  return lines;
}

/**
 * A scalar (or an empty collection) that starts at `column`; a literal block's lines are indented to `blockIndent`.
 * Keys are in YAML's simple-key context: no literal blocks, and an empty key is quoted.
 */
function scalar(v: unknown, column: number, blockIndent: number, isKey: boolean): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && Math.abs(v) < 1e21) {
      if (!Number.isSafeInteger(v)) throw notImplemented(`toYaml of the integer ${v} (beyond 2^53)`);
      return String(v);
    }
    return formatFloat(v);
  }
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'object') return '{}';
  if (typeof v !== 'string') throw new EvalError(`toYaml: unexpected ${typeof v}`);
  return yamlString(v, column, blockIndent, isKey);
}

function yamlString(s: string, column: number, blockIndent: number, isKey: boolean): string {
  const a = analyze(s);
  let style: 'plain' | 'single' | 'double' | 'literal';
  if (s.includes('\n')) style = 'literal';
  else if (resolvesToString(s)) style = 'plain';
  else style = 'double';
  if (isKey && a.multiline) style = 'double';
  if (style === 'plain' && (!a.blockPlainAllowed || (s === '' && isKey))) style = 'single';
  if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
  if (style === 'literal' && (!a.blockAllowed || isKey)) style = 'double';
  switch (style) {
    case 'plain':
      return checkWidth(s, column, s);
    case 'single':
      return checkWidth(s, column, `'${s.replace(/'/g, "''")}'`);
    case 'double':
      return checkWidth(s, column, doubleQuoted(s));
    case 'literal':
      return literal(s, blockIndent);
  }
}

/** go-yaml breaks a flow scalar at a space once past column 80: refuse what would need that. */
function checkWidth(s: string, column: number, text: string): string {
  if (s.includes(' ') && column + text.length > WIDTH) {
    throw notImplemented(
      `toYaml of a string with spaces that goes past column ${WIDTH} (go-yaml folds it): ${JSON.stringify(s)}`,
    );
  }
  return text;
}

function literal(s: string, indent: number): string {
  const cps = [...s];
  let header = '|';
  if (cps[0] === ' ' || isBreak(cps[0]!)) header += '2';
  const last = cps.at(-1)!;
  if (!isBreak(last)) header += '-';
  else if (cps.length === 1 || isBreak(cps.at(-2)!)) header += '+';
  if (header.endsWith('+')) throw notImplemented('toYaml of a string ending in more than one newline (|+ block)');
  const body = isBreak(last) ? s.slice(0, -1) : s;
  const pad = ' '.repeat(indent);
  return [header, ...body.split('\n').map((l) => (l === '' ? '' : pad + l))].join('\n');
}

const isBreak = (c: string): boolean => c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';

function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

/** go-yaml's yaml_emitter_analyze_scalar, for the block context. */
function analyze(s: string): {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
} {
  if (s === '') return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  const cps = [...s];
  let blockIndicators = s.startsWith('---') || s.startsWith('...');
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  for (const [i, c] of cps.entries()) {
    const next = cps[i + 1];
    const followedByWhitespace = next === undefined || next === ' ' || next === '\t' || isBreak(next);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true;
      else if ((c === '?' || c === ':' || c === '-') && followedByWhitespace) blockIndicators = true;
    } else if (c === ':' && followedByWhitespace) blockIndicators = true;
    else if (c === '#' && precededByWhitespace) blockIndicators = true;
    if (!isPrintable(c.codePointAt(0)!)) special = true;
    if (c === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === cps.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === cps.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === ' ' || c === '\t' || isBreak(c) || c === '\0';
  }
  let blockPlainAllowed = true;
  let singleQuotedAllowed = true;
  let blockAllowed = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlainAllowed = false;
  if (trailingSpace) blockAllowed = false;
  if (breakSpace) blockPlainAllowed = singleQuotedAllowed = false;
  if (spaceBreak || special) blockPlainAllowed = singleQuotedAllowed = blockAllowed = false;
  if (lineBreaks || blockIndicators) blockPlainAllowed = false;
  return { multiline: lineBreaks, blockPlainAllowed, singleQuotedAllowed, blockAllowed };
}

const RESOLVE_MAP = new Set(
  (
    '~ null Null NULL y Y yes Yes YES on On ON true True TRUE n N no No NO off Off OFF false False FALSE ' +
    '.nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<'
  ).split(' '),
);

/** Whether go-yaml v2 reads `s` unquoted as the same string (not null, bool, number, timestamp or base-60 float). */
function resolvesToString(s: string): boolean {
  if (s === '' || RESOLVE_MAP.has(s)) return false;
  if (/^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/.test(s)) return false; // base 60, quoted for old parsers
  const first = s[0]!;
  if (first === '.') return !/^\.\d+([eE][-+]?\d+)?$/.test(s);
  if (!/[-+0-9]/.test(first)) return true;
  if (/^\d{4}-\d{1,2}-\d{1,2}(?:(?:[Tt]| +)\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d*)?(?:Z|[-+]\d{1,2}(?::\d{2})?)?)?$/.test(s))
    return false;
  const plain = s.replace(/_/g, '');
  if (/^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.test(plain)) return false;
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(plain)) return false;
  return true;
}

/** go-yaml's double-quoted scalar. */
function doubleQuoted(s: string): string {
  const named: Record<string, string> = {
    '\0': '\\0',
    '\x07': '\\a',
    '\b': '\\b',
    '\t': '\\t',
    '\n': '\\n',
    '\v': '\\v',
    '\f': '\\f',
    '\r': '\\r',
    '\x1b': '\\e',
    '"': '\\"',
    '\\': '\\\\',
    '\u0085': '\\N',
    '\u00a0': '\\_',
    '\u2028': '\\L',
    '\u2029': '\\P',
  };
  let out = '"';
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (c in named) out += named[c];
    else if (!isPrintable(cp) || cp === 0xfeff) {
      out += cp <= 0xff ? `\\x${hex(cp, 2)}` : cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    } else out += c;
  }
  return `${out}"`;
}

const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');

/** go-yaml v2's key order: runs of digits compare as numbers, and a non-letter sorts before a letter. */
export function keyCompare(a: string, b: string): number {
  return keyLess(a, b) ? -1 : keyLess(b, a) ? 1 : 0;
}

function keyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  const isLetter = (c: string): boolean => /\p{L}/u.test(c);
  const isDigit = (c: string | undefined): boolean => c !== undefined && /\p{Nd}/u.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]!);
    const bl = isLetter(br[i]!);
    if (al && bl) return ar[i]! < br[i]!;
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    let bi = i;
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i]! < br[i]!;
  }
  return ar.length < br.length;
}
