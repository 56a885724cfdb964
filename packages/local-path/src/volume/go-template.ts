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
 * when the template is parsed, with an error naming the construct: the template is read by text/template's parser
 * (text-template.ts), and only then is the subset kept. Nothing is ever evaluated beyond reading the data, so a
 * template cannot call code or reach outside the data it is given.
 *
 * Semantics follow Go where they apply: a missing map key read by field syntax prints `<no value>` (or is an
 * error with `missingkey=error`), `index` of a missing key yields the empty string, maps print as
 * `map[k1:v1 k2:v2]` with sorted keys.
 *
 * @module
 */
import {
  lex,
  parseTemplate,
  TemplateError,
  type Item,
  type Operand as TemplateOperand,
  type ParsedFile,
  type Pipeline,
  type Token,
} from './text-template.js';

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

const CONTROL_KEYWORDS = new Set([
  'if',
  'else',
  'end',
  'range',
  'with',
  'define',
  'template',
  'block',
  'break',
  'continue',
]);
const SUPPORTED = 'only field access (such as .PVC.Name), index and string literals are supported';
/** What a construct is called in messages, by the character it starts with. */
const CONSTRUCTS: Readonly<Record<string, string>> = {
  $: 'variable',
  '|': 'pipeline',
  '(': 'parenthesized expression',
  ')': 'parenthesized expression',
  ':': 'variable declaration',
  '=': 'variable assignment',
  ',': 'range variable list',
  "'": 'character constant',
};

/** A string literal as JSON reads it: JSON's escapes, a subset of Go's (`\x41`, `\101` and the like are refused). */
function unquoteJson(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    throw new Error(`unsupported escape sequence in string literal ${quoted}`);
  }
}

type Fail = (line: number, message: string) => never;

/** Reads `text` with text/template's parser, then keeps what the subset allows and names anything else. */
function parseSubset(name: string, text: string): TemplateNode[] {
  const fail: Fail = (line, message) => {
    throw new GoTemplateError(`template: ${name}:${line}: ${message}`);
  };
  let items: Item[];
  let parsed: ParsedFile;
  try {
    items = lex(name, text, { unquote: unquoteJson });
    // The first construct outside the subset, in the order of the text, is the one the error names.
    for (const item of items)
      if (item.kind === 'action') for (const token of item.tokens) checkToken(token, item.line, fail);
    // The tokens above were index at most, the one name the parser then reads as a function.
    parsed = parseTemplate(name, text, { unquote: unquoteJson });
  } catch (err) {
    if (err instanceof TemplateError) throw new GoTemplateError(err.message);
    throw err;
  }
  const control = (line: number, word: string): never =>
    unsupported(fail, line, word, 'control structures are not supported');
  if (parsed.defines.length > 0) control(1, 'define');
  return parsed.root.map((node): TemplateNode => {
    switch (node.kind) {
      case 'text':
        return node;
      case 'if':
      case 'with':
      case 'range':
        return control(node.line, node.kind);
      case 'template':
        return control(node.line, 'template');
      case 'action':
        return {
          kind: 'action',
          source: innerSource(node.source),
          line: node.pipe.line,
          command: subsetCommand(node.pipe, node.source, fail),
        };
    }
  });
}

/** Refuses a token that only constructs outside the subset have. */
function checkToken(token: Token, line: number, fail: Fail): void {
  switch (token.kind) {
    case 'variable':
      unsupported(fail, line, '$', 'variable');
      break;
    case 'punct':
      unsupported(fail, line, token.value[0]!, CONSTRUCTS[token.value[0]!]!);
      break;
    case 'char':
      unsupported(fail, line, "'", 'character constant');
      break;
    case 'number':
      unsupported(fail, line, token.text[0]!, 'number constant');
      break;
    case 'bool':
      unsupported(fail, line, String(token.value), 'constants are not supported');
      break;
    case 'nil':
      unsupported(fail, line, 'nil', 'constants are not supported');
      break;
    case 'identifier':
      if (CONTROL_KEYWORDS.has(token.name)) unsupported(fail, line, token.name, 'control structures are not supported');
      if (token.name !== 'index') fail(line, `unsupported template function "${token.name}" (${SUPPORTED})`);
      break;
    case 'dot':
    case 'field':
    case 'string':
      break;
  }
}

function unsupported(fail: Fail, line: number, what: string, why: string): never {
  return fail(line, `unsupported template construct "${what}" (${why}; ${SUPPORTED})`);
}

/** The action without its delimiters and trim markers, as execution errors quote it. */
function innerSource(source: string): string {
  return source
    .replace(/^\{\{-? ?/, '')
    .replace(/ ?-?\}\}$/, '')
    .trim();
}

/** One operand of the subset: a field chain or a string literal. */
function subsetOperand(term: TemplateOperand, line: number, fail: Fail): Operand {
  switch (term.kind) {
    case 'dot':
      return { kind: 'field', path: [], source: '.' };
    case 'field':
      return { kind: 'field', path: term.names, source: `.${term.names.join('.')}` };
    case 'string':
      return { kind: 'string', value: term.value, source: term.source };
    case 'variable':
      return unsupported(fail, line, '$', 'variable');
    case 'pipeline':
    case 'chain':
      return unsupported(fail, line, '(', 'parenthesized expression');
    case 'bool':
      return unsupported(fail, line, String(term.value), 'constants are not supported');
    case 'nil':
      return unsupported(fail, line, 'nil', 'constants are not supported');
    case 'number': {
      const c = term.text[0] ?? '';
      return unsupported(fail, line, c, CONSTRUCTS[c] ?? 'number constant');
    }
    case 'identifier':
      if (CONTROL_KEYWORDS.has(term.name))
        return unsupported(fail, line, term.name, 'control structures are not supported');
      return fail(line, `unsupported template function "${term.name}" (${SUPPORTED})`);
  }
}

/** The action's command in the subset: one operand, or `index` of operands. */
function subsetCommand(pipe: Pipeline, source: string, fail: Fail): Command {
  const { line } = pipe;
  if (pipe.decl.length > 0) unsupported(fail, line, '$', 'variable');
  if (pipe.cmds.length > 1) unsupported(fail, line, '|', 'pipeline');
  const [first, ...rest] = pipe.cmds[0]!.args;
  if (first?.kind === 'identifier') {
    if (first.name !== 'index') subsetOperand(first, line, fail);
    if (rest.length === 0) fail(line, `wrong number of args for index: want at least 1 got 0 in ${source}`);
    const operands = rest.map((t) => {
      if (t.kind === 'identifier')
        fail(line, `unsupported nested function call "${t.name}" in ${source} (${SUPPORTED})`);
      return subsetOperand(t, line, fail);
    });
    return { kind: 'index', target: operands[0]!, keys: operands.slice(1) };
  }
  const value = subsetOperand(first!, line, fail);
  const extra = rest[0];
  if (extra !== undefined) {
    const given = extra.kind === 'identifier' ? extra.name : subsetOperand(extra, line, fail).source;
    fail(line, `can't give argument ${given} to non-function ${value.source} in ${source}`);
  }
  return { kind: 'operand', operand: value };
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
    return new GoTemplate(name, text, parseSubset(name, text));
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
        throw new GoTemplateError(
          `template: ${this.name}:${node.line}: executing "${this.name}" at <${node.source}>: ${err.message}`,
        );
      }
    }
    return out;
  }
}

class ExecError extends Error {}

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
      if (value.entries !== undefined && Object.hasOwn(value.entries, field))
        return { kind: 'string', value: value.entries[field]! };
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
    if (key.kind !== 'string')
      throw new ExecError(`error calling index: value has type ${typeName(key)}; should be string`);
    const entries = value.entries;
    // Go's index yields the zero value for a missing key, whatever missingkey says.
    value = {
      kind: 'string',
      value: entries !== undefined && Object.hasOwn(entries, key.value) ? entries[key.value]! : '',
    };
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
