// Go text/template's parser over the lexer's items: if/else if/else, with/else, range/else, define, template,
// pipelines with declarations and assignments, parenthesised pipelines and field chains. Functions are checked when
// parsed, as Go does, so a function the renderer lacks fails even in a branch the values never take.
import type { Command, Node, Operand, Pipeline, Template } from './ast.js';
import { TemplateError } from './errors.js';
import { lex, type Item, type Token } from './lexer.js';

export interface ParsedFile {
  /** The file's own body (empty for a file of definitions only). */
  root: Node[];
  /** The templates it defines with {{ define "name" }}. */
  defines: Template[];
}

type Stop = { word: 'end' | 'else' | 'eof'; item: Item & { kind: 'action' }; rest: Token[] };

const UNSUPPORTED = new Set(['block', 'break', 'continue']);

/** Parses the file `file`; `isFunction` tells whether a name is a function the renderer has. */
export function parseTemplate(file: string, text: string, isFunction: (name: string) => boolean): ParsedFile {
  const items = lex(file, text);
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
        defines.push({ name, file, root: body.nodes });
      } else if (word === 'template') {
        const name = templateName(rest, item.line, 'template');
        const pipe = rest.length > 1 ? parsePipeline(rest.slice(1), item.line, false, 'template') : undefined;
        nodes.push({ kind: 'template', line: item.line, name, pipe });
      } else if (word !== undefined && UNSUPPORTED.has(word) && !isFunction(word)) {
        fail(item.line, `{{${word}}} is not implemented by the test renderer (test/deploy/helm/)`);
      } else {
        nodes.push({ kind: 'action', pipe: parsePipeline(item.tokens, item.line, true, 'command') });
      }
    }
    return { nodes, stop: { word: 'eof', item: { kind: 'action', tokens: [], line: items.at(-1)?.line ?? 1 }, rest: [] } };
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
        term = { kind: 'string', value: t.value };
        break;
      case 'char':
        term = { kind: 'number', value: BigInt(t.value) };
        break;
      case 'number':
        term = { kind: 'number', value: parseNumber(file, t.text, line) };
        break;
      case 'field':
        term = { kind: 'field', names: [t.name] };
        break;
      case 'variable':
        term = { kind: 'variable', name: t.name, names: [] };
        break;
      case 'identifier':
        if (!isFunction(t.name)) {
          fail(line, `function "${t.name}" not defined (or not implemented by the test renderer: see test/deploy/helm/functions.ts)`);
        }
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
        term = { kind: 'pipeline', pipe: parsePipeline(tokens.slice(i + 1, j - 1), line, true, 'parenthesized pipeline') };
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

/** A Go number constant: an integer literal is an int (bigint here), one with a point or exponent a float64. */
function parseNumber(file: string, text: string, line: number): number | bigint {
  if (text.endsWith('i')) throw new TemplateError(file, line, `complex constant ${text} is not implemented by the test renderer`);
  const clean = text.replace(/_/g, '');
  const sign = clean.startsWith('-') ? -1n : 1n;
  const body = clean.replace(/^[-+]/, '');
  if (/^0[xX][0-9a-fA-F]+$/.test(body) || /^0[bB][01]+$/.test(body) || /^0[oO][0-7]+$/.test(body)) return sign * BigInt(body.toLowerCase());
  if (/^0[0-7]+$/.test(body)) return sign * BigInt(`0o${body.slice(1)}`);
  if (/^\d+$/.test(body)) return sign * BigInt(body);
  const value = Number(clean);
  if (Number.isNaN(value)) throw new TemplateError(file, line, `bad number syntax: ${text}`);
  return value;
}
