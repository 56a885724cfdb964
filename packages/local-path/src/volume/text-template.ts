/**
 * The syntax of Go's `text/template`, as `text/template/parse` reads it: a lexer for the delimiters `{{` and `}}`
 * (trim markers `{{- ` and ` -}}`, comments `{{/* … *\/}}`, which must touch the delimiters or trim markers) and a
 * parser for if/else if/else, with/else, range/else, define, template, pipelines with declarations and assignments,
 * parenthesised pipelines and field chains. It only reads: what a template may do is for its executor to decide
 * (the pathPattern's GoTemplate, in go-template.ts, accepts field access, `index` and string literals, and nothing else).
 *
 * @module
 */

/** A template that does not parse, or fails where it runs: the message starts with `template: <name>:<line>:`. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';

  constructor(
    /** The template's name (a file name, say). */
    readonly template: string,
    /** The line the error is on. */
    readonly line: number,
    message: string,
  ) {
    super(`template: ${template}:${line}: ${message}`);
  }
}

// ---- The parse tree (the node kinds of text/template/parse that templates use)

/** A value-producing term of a command. */
export type Operand =
  | { kind: 'dot' }
  | { kind: 'nil' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string; source: string } // source: the literal as written
  | { kind: 'number'; text: string } // a number or character constant, as written
  | { kind: 'field'; names: string[] } // .A.B
  | { kind: 'variable'; name: string; names: string[] } // $x.A.B
  | { kind: 'identifier'; name: string } // a function
  | { kind: 'chain'; base: Operand; names: string[] } // (pipeline).A.B
  | { kind: 'pipeline'; pipe: Pipeline }; // (pipeline)

export interface Command {
  args: Operand[];
}

export interface Pipeline {
  line: number;
  /** `$x := ...` (declare) or `$x = ...` (assign); range may declare two. */
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
}

export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline; source: string } // source: the action as written, delimiters included
  | { kind: 'if' | 'with' | 'range'; line: number; pipe: Pipeline; list: Node[]; elseList: Node[] | undefined }
  | { kind: 'template'; line: number; name: string; pipe: Pipeline | undefined };

/** A template defined with {{ define "name" }}: its name and body. */
export interface Template {
  name: string;
  root: Node[];
}

// ---- The lexer

export type Token =
  | { kind: 'field'; name: string; spaceBefore: boolean } // .Name
  | { kind: 'dot'; spaceBefore: boolean } // .
  | { kind: 'variable'; name: string; spaceBefore: boolean } // $ or $name
  | { kind: 'identifier'; name: string; spaceBefore: boolean } // a function name or keyword
  | { kind: 'string'; value: string; source: string; spaceBefore: boolean }
  | { kind: 'number'; text: string; spaceBefore: boolean }
  | { kind: 'char'; value: number; spaceBefore: boolean }
  | { kind: 'bool'; value: boolean; spaceBefore: boolean }
  | { kind: 'nil'; spaceBefore: boolean }
  | { kind: 'punct'; value: '(' | ')' | '|' | ':=' | '=' | ','; spaceBefore: boolean };

export type Item =
  { kind: 'text'; text: string; line: number } | { kind: 'action'; tokens: Token[]; line: number; source: string };

const SPACE = new Set([' ', '\t', '\r', '\n']);
const trimLeft = (s: string): string => s.replace(/^[ \t\r\n]+/, '');
const trimRight = (s: string): string => s.replace(/[ \t\r\n]+$/, '');

/** Options of {@link lex} and {@link parseTemplate}. */
export interface SyntaxOptions {
  /** Reads a double-quoted string literal (quotes included); throws with the reason when it is not one. */
  unquote: (quoted: string) => string;
}

/** Splits `text` (the template named `name`) into items. */
export function lex(name: string, text: string, options: SyntaxOptions): Item[] {
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
      if (SPACE.has(text[at] ?? '') && text[at + 1] === '-' && text.startsWith('}}', at + 2))
        return { end: at + 4, trim: true };
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
        const source = text.slice(i, j + 1);
        let value: string;
        try {
          value = options.unquote(source);
        } catch (e) {
          if (e instanceof TemplateError) throw e;
          fail(i, e instanceof Error ? e.message : String(e));
        }
        push({ kind: 'string', value: value!, source, spaceBefore });
        i = j + 1;
      } else if (ch === '`') {
        const j = text.indexOf('`', i + 1);
        if (j === -1) fail(i, 'unterminated raw quoted string');
        push({ kind: 'string', value: text.slice(i + 1, j), source: text.slice(i, j + 1), spaceBefore });
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
        if (m === null || m[0] === '' || /^[-+]?\.?$/.test(m[0]))
          fail(i, `bad number syntax: "${text.slice(i, i + 10)}"`);
        if (/[\p{L}_\d.]/u.test(text[i + m![0].length] ?? ''))
          fail(i, `bad number syntax: "${text.slice(i, i + m![0].length + 1)}"`);
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
    items.push({ kind: 'action', tokens, line: actionLine, source: text.slice(open, pos) });
  }
}

/** Go's strconv.Unquote for a double-quoted literal: the body of a character constant, quoted. */
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
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
      '"': '"',
      "'": "'",
    };
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

// ---- The parser

export interface ParsedFile {
  /** The file's own body (empty for a file of definitions only). */
  root: Node[];
  /** The templates it defines with {{ define "name" }}. */
  defines: Template[];
}

type Stop = { word: 'end' | 'else' | 'eof'; item: Item & { kind: 'action' }; rest: Token[] };

/**
 * Parses the file `file`. Every identifier that is not a keyword parses as a function name: which functions exist
 * is for the caller to decide.
 */
export function parseTemplate(file: string, text: string, options: SyntaxOptions): ParsedFile {
  const items = lex(file, text, options);
  const defines: Template[] = [];
  let at = 0;

  const fail = (line: number, message: string): never => {
    throw new TemplateError(file, line, message);
  };

  function parseList(top: boolean): { nodes: Node[]; stop: Stop } {
    const nodes: Node[] = [];
    while (at < items.length) {
      const item = items[at++]!;
      if (item.kind === 'text') {
        nodes.push({ kind: 'text', text: item.text });
        continue;
      }
      const [first, ...rest] = item.tokens;
      const word = first?.kind === 'identifier' ? first.name : undefined;
      if (word === 'end' || word === 'else') {
        if (top) fail(item.line, `unexpected {{${word}}}`);
        return { nodes, stop: { word, item, rest } };
      }
      if (word === 'if' || word === 'with' || word === 'range') nodes.push(parseBlock(word, item.line, rest));
      else if (word === 'define') {
        if (!top) fail(item.line, 'define must be at the top level of a file');
        const name = templateName(rest, item.line, 'define');
        if (rest.length > 1) fail(item.line, 'unexpected tokens after the define name');
        const body = parseList(false);
        if (body.stop.word !== 'end') fail(body.stop.item.line, `unexpected {{${body.stop.word}}} in define`);
        defines.push({ name, root: body.nodes });
      } else if (word === 'template') {
        const name = templateName(rest, item.line, 'template');
        const pipe = rest.length > 1 ? parsePipeline(rest.slice(1), item.line, false, 'template') : undefined;
        nodes.push({ kind: 'template', line: item.line, name, pipe });
      } else {
        nodes.push({
          kind: 'action',
          pipe: parsePipeline(item.tokens, item.line, true, 'command'),
          source: item.source,
        });
      }
    }
    return {
      nodes,
      stop: { word: 'eof', item: { kind: 'action', tokens: [], line: items.at(-1)?.line ?? 1, source: '' }, rest: [] },
    };
  }

  function parseBlock(kind: 'if' | 'with' | 'range', line: number, tokens: Token[]): Node {
    const pipe = parsePipeline(tokens, line, true, kind);
    if (pipe.decl.length > (kind === 'range' ? 2 : 1)) fail(line, `too many declarations in ${kind}`);
    const body = parseList(false);
    if (body.stop.word === 'eof') fail(line, `unexpected EOF: {{${kind}}} has no {{end}}`);
    let elseList: Node[] | undefined;
    if (body.stop.word === 'else') {
      const [next, ...rest] = body.stop.rest;
      if (next?.kind === 'identifier' && (next.name === 'if' || next.name === 'with') && kind !== 'range') {
        // {{else if x}} / {{else with x}}: a nested block that shares the outer {{end}}.
        elseList = [parseBlock(next.name, body.stop.item.line, rest)];
      } else {
        if (next !== undefined) fail(body.stop.item.line, `unexpected tokens after {{else}} in ${kind}`);
        const alt = parseList(false);
        if (alt.stop.word !== 'end') fail(alt.stop.item.line, `expected {{end}} for {{${kind}}} of line ${line}`);
        elseList = alt.nodes;
      }
    } else if (body.stop.rest.length > 0) fail(body.stop.item.line, 'unexpected tokens after {{end}}');
    return { kind, line, pipe, list: body.nodes, elseList };
  }

  function templateName(tokens: Token[], line: number, what: string): string {
    const t = tokens[0];
    if (t?.kind !== 'string') fail(line, `${what} needs a quoted template name`);
    return (t as Token & { kind: 'string' }).value;
  }

  function parsePipeline(tokens: Token[], line: number, allowDecl: boolean, context: string): Pipeline {
    let i = 0;
    const decl: string[] = [];
    let isAssign = false;
    const t0 = tokens[0];
    const t1 = tokens[1];
    if (allowDecl && t0?.kind === 'variable' && t1?.kind === 'punct') {
      if (t1.value === ':=' || t1.value === '=') {
        decl.push(t0.name);
        isAssign = t1.value === '=';
        i = 2;
      } else if (t1.value === ',' && tokens[2]?.kind === 'variable' && tokens[3]?.kind === 'punct') {
        const t3 = tokens[3];
        if (t3.kind === 'punct' && (t3.value === ':=' || t3.value === '=')) {
          decl.push(t0.name, tokens[2].name);
          isAssign = t3.value === '=';
          i = 4;
        }
      }
    }
    const cmds: Command[] = [];
    let args: Operand[] = [];
    const closeCommand = (): void => {
      if (args.length === 0) fail(line, `missing command in ${context} pipeline`);
      cmds.push({ args });
      args = [];
    };
    while (i < tokens.length) {
      const t = tokens[i]!;
      if (t.kind === 'punct' && t.value === '|') {
        closeCommand();
        i++;
        continue;
      }
      const [operand, next] = parseOperand(tokens, i, line);
      args.push(operand);
      i = next;
    }
    if (args.length > 0 || cmds.length > 0) closeCommand();
    if (cmds.length === 0) fail(line, `missing value for ${context}`);
    return { line, decl, isAssign, cmds };
  }

  function parseOperand(tokens: Token[], i: number, line: number): [Operand, number] {
    const t = tokens[i]!;
    let term: Operand;
    let next = i + 1;
    switch (t.kind) {
      case 'dot':
        term = { kind: 'dot' };
        break;
      case 'nil':
        term = { kind: 'nil' };
        break;
      case 'bool':
        term = { kind: 'bool', value: t.value };
        break;
      case 'string':
        term = { kind: 'string', value: t.value, source: t.source };
        break;
      case 'char':
        term = { kind: 'number', text: String.fromCodePoint(t.value) };
        break;
      case 'number':
        term = { kind: 'number', text: t.text };
        break;
      case 'field':
        term = { kind: 'field', names: [t.name] };
        break;
      case 'variable':
        term = { kind: 'variable', name: t.name, names: [] };
        break;
      case 'identifier':
        term = { kind: 'identifier', name: t.name };
        break;
      case 'punct': {
        if (t.value !== '(') fail(line, `unexpected "${t.value}" in operand`);
        let depth = 1;
        let j = i + 1;
        for (; j < tokens.length && depth > 0; j++) {
          const u = tokens[j]!;
          if (u.kind === 'punct' && u.value === '(') depth++;
          if (u.kind === 'punct' && u.value === ')') depth--;
        }
        if (depth > 0) fail(line, 'unclosed left paren');
        term = {
          kind: 'pipeline',
          pipe: parsePipeline(tokens.slice(i + 1, j - 1), line, true, 'parenthesized pipeline'),
        };
        next = j;
        break;
      }
    }
    // Fields that touch the term (no space between) chain onto it: .A.B, $x.A, (pipeline).A
    const names: string[] = [];
    while (tokens[next]?.kind === 'field' && !tokens[next]!.spaceBefore) {
      names.push((tokens[next] as Token & { kind: 'field' }).name);
      next++;
    }
    if (names.length > 0) {
      if (term.kind === 'field' || term.kind === 'variable') term.names.push(...names);
      else if (term.kind === 'pipeline') term = { kind: 'chain', base: term, names };
      else fail(line, `unexpected . after term ${t.kind}`);
    }
    return [term, next];
  }

  const { nodes } = parseList(true);
  return { root: nodes, defines };
}
