/**
 * A deliberately small, safe subset of Go's `text/template`, enough for the templates users write in
 * local-path-provisioner StorageClasses (`pathPattern`, `userPattern`, `groupPattern`, `permPattern`).
 *
 * Supported:
 * - plain text, `{{ … }}` actions, the trim markers `{{- ` and ` -}}`, and comments `{{/* … *\/}}`;
 * - field chains on the data: `.`, `.PVName`, `.PVC.Namespace`, `.PVC.Labels.app` (map keys by field syntax);
 * - string literals, `"…"` and `` `…` ``;
 * - the `index` function: `index .PVC.Annotations "example.com/key"` (several keys index nested maps).
 *
 * Everything else — pipelines (`|`), variables (`$x`), parentheses, control structures (`if`, `range`, `with`,
 * `define`, `template`, `block`, …), other functions (`printf`, `lower`, …), numbers and constants — is rejected
 * when the template is parsed, with an error naming the construct. Nothing is ever evaluated beyond reading the
 * data, so a template cannot call code or reach outside the data it is given.
 *
 * Semantics follow Go where they apply: a missing map key read by field syntax prints `<no value>` (or is an
 * error with `missingkey=error`), `index` of a missing key yields the empty string, maps print as
 * `map[k1:v1 k2:v2]` with sorted keys.
 *
 * @module
 */

/** A value as the template sees it, mirroring the Go types of upstream's data. */
export type GoValue =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'int'; readonly value: number }
  | {
      readonly kind: 'map';
      /** Go type name used in messages, e.g. `map[string]string`. */
      readonly type: string;
      /** `undefined` is a nil map. */
      readonly entries: Readonly<Record<string, string>> | undefined;
    }
  | {
      readonly kind: 'struct';
      /** Go type name used in messages, e.g. `v1.ObjectMeta`. */
      readonly type: string;
      readonly fields: Readonly<Record<string, GoValue>>;
      /** Fields that exist on the Go type but that this renderer does not offer (rejected with a clear error). */
      readonly unsupported?: readonly string[];
    }
  /** Go's invalid `reflect.Value`: what a missing map key yields; prints as `<no value>`. */
  | { readonly kind: 'invalid' };

/** How a map key missing at a field access is handled: Go's `missingkey=default` or `missingkey=error`. */
export type MissingKey = 'default' | 'error';

/** A template that failed to parse or to execute. The message starts with `template: <name>:<line>:`. */
export class GoTemplateError extends Error {
  override readonly name = 'GoTemplateError';
}

type Operand =
  | { readonly kind: 'field'; readonly path: readonly string[]; readonly source: string }
  | { readonly kind: 'string'; readonly value: string; readonly source: string };

type Command =
  | { readonly kind: 'operand'; readonly operand: Operand }
  | { readonly kind: 'index'; readonly target: Operand; readonly keys: readonly Operand[] };

type TemplateNode =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'action'; readonly source: string; readonly line: number; readonly command: Command };

type Token =
  | Operand
  | { readonly kind: 'ident'; readonly name: string; readonly source: string };

const CONTROL_KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);
const CONSTANTS = new Set(['true', 'false', 'nil']);
const SUPPORTED = 'only field access (such as .PVC.Name), index and string literals are supported';

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}

function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && /^[\p{L}\p{N}_]$/u.test(c);
}

function isIdentStart(c: string | undefined): boolean {
  return c !== undefined && /^[\p{L}_]$/u.test(c);
}

function trimLeadingSpace(s: string): string {
  return s.replace(/^[ \t\r\n]+/, '');
}

function trimTrailingSpace(s: string): string {
  return s.replace(/[ \t\r\n]+$/, '');
}

/** A parsed template; {@link GoTemplate.execute} renders it over some data. */
export class GoTemplate {
  private constructor(
    /** The template's name, used in messages (upstream uses e.g. `pathPattern`). */
    readonly name: string,
    /** The template text as given. */
    readonly text: string,
    private readonly nodes: readonly TemplateNode[],
  ) {}

  /**
   * Parses `text`. Throws a {@link GoTemplateError} for malformed actions and for any construct outside the
   * supported subset, naming it.
   */
  static parse(name: string, text: string): GoTemplate {
    return new GoTemplate(name, text, new Parser(name, text).parse());
  }

  /**
   * Renders the template over `data`. Throws a {@link GoTemplateError} when a field does not exist, when a value
   * cannot be printed or indexed, or (with `missingKey: 'error'`) when a map has no entry for a key.
   */
  execute(data: GoValue, missingKey: MissingKey = 'default'): string {
    let out = '';
    for (const node of this.nodes) {
      if (node.kind === 'text') {
        out += node.text;
        continue;
      }
      try {
        out += printValue(evalCommand(node.command, data, missingKey));
      } catch (err) {
        if (!(err instanceof ExecError)) throw err;
        throw new GoTemplateError(`template: ${this.name}:${node.line}: executing "${this.name}" at <${node.source}>: ${err.message}`);
      }
    }
    return out;
  }
}

class ExecError extends Error {}

class Parser {
  private pos = 0;
  private readonly nodes: TemplateNode[] = [];

  constructor(
    private readonly name: string,
    private readonly text: string,
  ) {}

  parse(): TemplateNode[] {
    let trimNext = false;
    while (this.pos < this.text.length) {
      const open = this.text.indexOf('{{', this.pos);
      let before = this.text.slice(this.pos, open < 0 ? undefined : open);
      if (trimNext) before = trimLeadingSpace(before);
      if (open < 0) {
        this.pushText(before);
        break;
      }
      let p = open + 2;
      if (this.text[p] === '-' && isSpace(this.text[p + 1])) {
        before = trimTrailingSpace(before);
        p += 2;
      }
      this.pushText(before);
      const action = this.action(open, p);
      trimNext = action.trimRight;
      this.pos = action.end;
    }
    return this.nodes;
  }

  private pushText(text: string): void {
    if (text !== '') this.nodes.push({ kind: 'text', text });
  }

  private lineAt(offset: number): number {
    let line = 1;
    for (let i = 0; i < offset; i++) if (this.text[i] === '\n') line++;
    return line;
  }

  private fail(offset: number, message: string): never {
    throw new GoTemplateError(`template: ${this.name}:${this.lineAt(offset)}: ${message}`);
  }

  /** Parses one action whose content starts at `p`; returns where the text after its closing delimiter starts. */
  private action(open: number, start: number): { end: number; trimRight: boolean } {
    const text = this.text;
    const tokens: Token[] = [];
    let p = start;
    for (;;) {
      const hadSpace = isSpace(text[p]);
      while (isSpace(text[p])) p++;
      if (p >= text.length) this.fail(open, 'unclosed action');
      if (hadSpace && text.startsWith('-}}', p)) {
        return this.finish(open, tokens, p + 3, true, text.slice(open, p + 3));
      }
      if (text.startsWith('}}', p)) {
        return this.finish(open, tokens, p + 2, false, text.slice(open, p + 2));
      }
      if (text.startsWith('/*', p) && tokens.length === 0) {
        const close = text.indexOf('*/', p + 2);
        if (close < 0) this.fail(open, 'unclosed comment');
        let q = close + 2;
        if (text.startsWith('}}', q)) return { end: q + 2, trimRight: false };
        if (isSpace(text[q]) && text.startsWith('-}}', q + 1)) return { end: q + 4, trimRight: true };
        while (isSpace(text[q])) q++;
        this.fail(open, 'comment ends before closing delimiter');
      }
      const [token, next] = this.token(open, p);
      tokens.push(token);
      p = next;
    }
  }

  private token(open: number, p: number): [Token, number] {
    const text = this.text;
    const c = text[p];
    if (c === '"') {
      let q = p + 1;
      while (q < text.length && text[q] !== '"') {
        if (text[q] === '\n') break;
        q += text[q] === '\\' ? 2 : 1;
      }
      if (text[q] !== '"') this.fail(open, 'unterminated quoted string');
      const source = text.slice(p, q + 1);
      let value: unknown;
      try {
        value = JSON.parse(source);
      } catch {
        this.fail(open, `unsupported escape sequence in string literal ${source}`);
      }
      return [{ kind: 'string', value: value as string, source }, q + 1];
    }
    if (c === '`') {
      const close = text.indexOf('`', p + 1);
      if (close < 0) this.fail(open, 'unterminated raw quoted string');
      return [{ kind: 'string', value: text.slice(p + 1, close), source: text.slice(p, close + 1) }, close + 1];
    }
    if (c === '.') {
      const path: string[] = [];
      let q = p;
      if (!isIdentChar(text[q + 1])) {
        q++;
      } else {
        while (text[q] === '.' && isIdentChar(text[q + 1])) {
          let r = q + 1;
          while (isIdentChar(text[r])) r++;
          path.push(text.slice(q + 1, r));
          q = r;
        }
      }
      if (text[q] === '.' || text[q] === '(' || text[q] === '$') this.fail(open, `unexpected "${text[q]}" after ${text.slice(p, q)}`);
      return [{ kind: 'field', path, source: text.slice(p, q) }, q];
    }
    if (isIdentStart(c)) {
      let q = p;
      while (isIdentChar(text[q])) q++;
      const name = text.slice(p, q);
      if (CONTROL_KEYWORDS.has(name)) this.fail(open, `unsupported template construct "${name}" (control structures are not supported; ${SUPPORTED})`);
      if (CONSTANTS.has(name)) this.fail(open, `unsupported template construct "${name}" (constants are not supported; ${SUPPORTED})`);
      if (name !== 'index') this.fail(open, `unsupported template function "${name}" (${SUPPORTED})`);
      if (text[q] === '.') this.fail(open, `unexpected "." after ${name}`);
      return [{ kind: 'ident', name, source: name }, q];
    }
    const unsupported: Record<string, string> = {
      $: 'variable',
      '|': 'pipeline',
      '(': 'parenthesized expression',
      ')': 'parenthesized expression',
      ':': 'variable declaration',
      '=': 'variable assignment',
      "'": 'character constant',
      ',': 'range variable list',
    };
    const what = c === undefined ? undefined : (unsupported[c] ?? (/[0-9+-]/.test(c) ? 'number constant' : undefined));
    if (what !== undefined) this.fail(open, `unsupported template construct "${c}" (${what}; ${SUPPORTED})`);
    this.fail(open, `unexpected "${c}" in action`);
  }

  private finish(open: number, tokens: Token[], end: number, trimRight: boolean, source: string): { end: number; trimRight: boolean } {
    const [first, ...rest] = tokens;
    if (first === undefined) this.fail(open, `missing value for command in ${source}`);
    let command: Command;
    if (first.kind === 'ident') {
      const [target, ...keys] = rest;
      if (target === undefined) this.fail(open, `wrong number of args for index: want at least 1 got 0 in ${source}`);
      const operands = [target, ...keys].map((t) => {
        if (t.kind === 'ident') this.fail(open, `unsupported nested function call "${t.name}" in ${source} (${SUPPORTED})`);
        return t;
      });
      command = { kind: 'index', target: operands[0]!, keys: operands.slice(1) };
    } else {
      const extra = rest[0];
      if (extra !== undefined) this.fail(open, `can't give argument ${extra.source} to non-function ${first.source} in ${source}`);
      command = { kind: 'operand', operand: first };
    }
    const inner = source.replace(/^\{\{-? ?/, '').replace(/ ?-?\}\}$/, '').trim();
    this.nodes.push({ kind: 'action', source: inner, line: this.lineAt(open), command });
    return { end, trimRight };
  }
}

function typeName(value: GoValue): string {
  switch (value.kind) {
    case 'string':
      return 'string';
    case 'int':
      return 'int64';
    case 'map':
    case 'struct':
      return value.type;
    case 'invalid':
      return 'untyped nil';
  }
}

function evalField(value: GoValue, field: string, missingKey: MissingKey): GoValue {
  switch (value.kind) {
    case 'struct': {
      const found = value.fields[field];
      if (found !== undefined && Object.hasOwn(value.fields, field)) return found;
      if (value.unsupported?.includes(field)) {
        throw new ExecError(`field ${field} of type ${value.type} is not supported by this template renderer`);
      }
      throw new ExecError(`can't evaluate field ${field} in type ${value.type}`);
    }
    case 'map': {
      if (value.entries !== undefined && Object.hasOwn(value.entries, field)) return { kind: 'string', value: value.entries[field]! };
      if (missingKey === 'error') throw new ExecError(`map has no entry for key "${field}"`);
      return { kind: 'invalid' };
    }
    case 'invalid':
      if (missingKey === 'error') throw new ExecError(`nil data; no entry for key "${field}"`);
      return value;
    case 'string':
    case 'int':
      throw new ExecError(`can't evaluate field ${field} in type ${typeName(value)}`);
  }
}

function evalOperand(operand: Operand, data: GoValue, missingKey: MissingKey): GoValue {
  if (operand.kind === 'string') return { kind: 'string', value: operand.value };
  let value = data;
  for (const field of operand.path) value = evalField(value, field, missingKey);
  return value;
}

function evalCommand(command: Command, data: GoValue, missingKey: MissingKey): GoValue {
  if (command.kind === 'operand') return evalOperand(command.operand, data, missingKey);
  let value = evalOperand(command.target, data, missingKey);
  for (const keyOperand of command.keys) {
    const key = evalOperand(keyOperand, data, missingKey);
    if (value.kind === 'invalid') throw new ExecError('error calling index: index of untyped nil');
    if (value.kind !== 'map') throw new ExecError(`error calling index: can't index item of type ${typeName(value)}`);
    if (key.kind !== 'string') throw new ExecError(`error calling index: value has type ${typeName(key)}; should be string`);
    const entries = value.entries;
    // Go's index yields the zero value for a missing key, whatever missingkey says.
    value = { kind: 'string', value: entries !== undefined && Object.hasOwn(entries, key.value) ? entries[key.value]! : '' };
  }
  return value;
}

function printValue(value: GoValue): string {
  switch (value.kind) {
    case 'string':
      return value.value;
    case 'int':
      return String(value.value);
    case 'invalid':
      return '<no value>';
    case 'map': {
      const entries = Object.entries(value.entries ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `map[${entries.map(([k, v]) => `${k}:${v}`).join(' ')}]`;
    }
    case 'struct':
      throw new ExecError(`printing a whole ${value.type} is not supported; name one of its fields`);
  }
}
