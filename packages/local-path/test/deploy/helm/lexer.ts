// Go text/template's lexer, for the delimiters {{ and }}: splits a template into text and actions, applies the trim
// markers ("{{- " trims all whitespace before the action, " -}}" all whitespace after it, newlines included), drops
// comments ({{/* ... */}}, which must touch the delimiters or trim markers) and splits each action into tokens.
import { TemplateError } from './errors.js';

export type Token =
  | { kind: 'field'; name: string; spaceBefore: boolean } // .Name
  | { kind: 'dot'; spaceBefore: boolean } // .
  | { kind: 'variable'; name: string; spaceBefore: boolean } // $ or $name
  | { kind: 'identifier'; name: string; spaceBefore: boolean } // a function name or keyword
  | { kind: 'string'; value: string; spaceBefore: boolean }
  | { kind: 'number'; text: string; spaceBefore: boolean }
  | { kind: 'char'; value: number; spaceBefore: boolean }
  | { kind: 'bool'; value: boolean; spaceBefore: boolean }
  | { kind: 'nil'; spaceBefore: boolean }
  | { kind: 'punct'; value: '(' | ')' | '|' | ':=' | '=' | ','; spaceBefore: boolean };

export type Item = { kind: 'text'; text: string; line: number } | { kind: 'action'; tokens: Token[]; line: number };

const SPACE = new Set([' ', '\t', '\r', '\n']);
const trimLeft = (s: string): string => s.replace(/^[ \t\r\n]+/, '');
const trimRight = (s: string): string => s.replace(/[ \t\r\n]+$/, '');

/** Splits `text` (the template named `name`) into items. */
export function lex(name: string, text: string): Item[] {
  const items: Item[] = [];
  let line = 1;
  let pos = 0;
  let trimNext = false;
  const countLines = (from: number, to: number): number => {
    let n = 0;
    for (let i = from; i < to; i++) if (text[i] === '\n') n++;
    return n;
  };
  const fail = (at: number, message: string): never => {
    throw new TemplateError(name, line + countLines(pos, at), message);
  };
  for (;;) {
    const open = text.indexOf('{{', pos);
    let plain = text.slice(pos, open === -1 ? undefined : open);
    const leftTrim = open !== -1 && text[open + 2] === '-' && SPACE.has(text[open + 3] ?? '');
    if (trimNext) plain = trimLeft(plain);
    if (leftTrim) plain = trimRight(plain);
    if (plain !== '') items.push({ kind: 'text', text: plain, line });
    if (open === -1) return items;
    line += countLines(pos, open);
    pos = open;
    const actionLine = line;
    let i = open + 2 + (leftTrim ? 2 : 0);
    const atRight = (at: number): { end: number; trim: boolean } | undefined => {
      if (SPACE.has(text[at] ?? '') && text[at + 1] === '-' && text.startsWith('}}', at + 2)) return { end: at + 4, trim: true };
      if (text.startsWith('}}', at)) return { end: at + 2, trim: false };
      return undefined;
    };
    if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      if (close === -1) fail(i, 'unclosed comment');
      const right = atRight(close + 2);
      if (right === undefined) fail(close, 'comment ends before closing delimiter');
      trimNext = right!.trim;
      line += countLines(pos, right!.end);
      pos = right!.end;
      continue;
    }
    const tokens: Token[] = [];
    let spaceBefore = true;
    for (;;) {
      const right = atRight(i);
      if (right !== undefined) {
        trimNext = right.trim;
        line += countLines(pos, right.end);
        pos = right.end;
        break;
      }
      if (i >= text.length) fail(i, 'unclosed action');
      const ch = text[i]!;
      if (SPACE.has(ch)) {
        spaceBefore = true;
        i++;
        continue;
      }
      const start = i;
      const push = (t: Token): void => {
        tokens.push(t);
        spaceBefore = false;
      };
      if (text.startsWith('{{', i)) fail(i, 'unexpected "{{" in action');
      if (text.startsWith('/*', i)) fail(i, 'comment inside an action (a comment must be the whole action)');
      if (ch === '"') {
        let j = i + 1;
        while (j < text.length && text[j] !== '"') {
          if (text[j] === '\n') fail(j, 'unterminated quoted string');
          j += text[j] === '\\' ? 2 : 1;
        }
        if (j >= text.length) fail(i, 'unterminated quoted string');
        push({ kind: 'string', value: unquoteGo(text.slice(i, j + 1), () => fail(i, `bad string ${text.slice(i, j + 1)}`)), spaceBefore });
        i = j + 1;
      } else if (ch === '`') {
        const j = text.indexOf('`', i + 1);
        if (j === -1) fail(i, 'unterminated raw quoted string');
        push({ kind: 'string', value: text.slice(i + 1, j), spaceBefore });
        i = j + 1;
      } else if (ch === "'") {
        const m = /^'(\\.[^']*|[^'\\])'/u.exec(text.slice(i));
        if (m === null) fail(i, 'unterminated or bad character constant');
        const value = unquoteGo(`"${m![1]!}"`, () => fail(i, `bad character constant ${m![0]}`));
        push({ kind: 'char', value: value.codePointAt(0)!, spaceBefore });
        i += m![0].length;
      } else if (ch === '(' || ch === ')' || ch === '|' || ch === ',') {
        push({ kind: 'punct', value: ch, spaceBefore });
        i++;
      } else if (text.startsWith(':=', i)) {
        push({ kind: 'punct', value: ':=', spaceBefore });
        i += 2;
      } else if (ch === '=') {
        push({ kind: 'punct', value: '=', spaceBefore });
        i++;
      } else if (ch === '$') {
        const m = /^\$[\p{L}_\d]*/u.exec(text.slice(i))!;
        push({ kind: 'variable', name: m[0], spaceBefore });
        i += m[0].length;
      } else if (ch === '.' && !/[0-9]/.test(text[i + 1] ?? '')) {
        const m = /^\.[\p{L}_][\p{L}_\d]*/u.exec(text.slice(i));
        if (m === null) push({ kind: 'dot', spaceBefore });
        else push({ kind: 'field', name: m[0].slice(1), spaceBefore });
        i += m === null ? 1 : m[0].length;
      } else if (/[-+0-9.]/.test(ch)) {
        const m = /^[-+]?(0[xX][0-9a-fA-F_]+|0[oObB][0-7_]+|(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?)i?/.exec(text.slice(i));
        if (m === null || m[0] === '' || /^[-+]?\.?$/.test(m[0])) fail(i, `bad number syntax: "${text.slice(i, i + 10)}"`);
        if (/[\p{L}_\d.]/u.test(text[i + m![0].length] ?? '')) fail(i, `bad number syntax: "${text.slice(i, i + m![0].length + 1)}"`);
        push({ kind: 'number', text: m![0], spaceBefore });
        i += m![0].length;
      } else if (/[\p{L}_]/u.test(ch)) {
        const m = /^[\p{L}_][\p{L}_\d]*/u.exec(text.slice(i))!;
        const word = m[0];
        if (word === 'true' || word === 'false') push({ kind: 'bool', value: word === 'true', spaceBefore });
        else if (word === 'nil') push({ kind: 'nil', spaceBefore });
        else push({ kind: 'identifier', name: word, spaceBefore });
        i += word.length;
      } else {
        fail(start, `unrecognized character in action: ${JSON.stringify(ch)}`);
      }
    }
    items.push({ kind: 'action', tokens, line: actionLine });
  }
}

/** Go's strconv.Unquote for a double-quoted string literal. */
function unquoteGo(quoted: string, bad: () => never): string {
  const body = quoted.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };
    if (e !== undefined && e in simple) out += simple[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) bad();
      out += e === 'x' ? Buffer.from([parseInt(hex, 16)]).toString('latin1') : String.fromCodePoint(parseInt(hex, 16));
      i += len;
    } else if (e !== undefined && /[0-7]/.test(e)) {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) bad();
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else bad();
  }
  return out;
}
