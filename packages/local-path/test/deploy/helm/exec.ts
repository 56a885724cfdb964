// Go text/template's executor, with Helm's option missingkey=zero: a missing map key reads as nil, and reading a
// field of that nil is an error ("nil pointer evaluating interface {}.x"), as `helm template` reports it.
import type { Command, Node, Operand, Pipeline, Template } from '../../../src/volume/text-template.js';
import { EvalError, TemplateError, notImplemented } from './errors.js';
import { GoStruct, Unimplemented, formatV, goTypeName, isMap, truth } from './go-values.js';

/** What a function gets besides its arguments. */
export interface FunctionEnv {
  /** Helm's include: runs the named template with `data` as dot and returns its output. */
  include(name: string, data: unknown): string;
}

export type TemplateFunction = (args: unknown[], env: FunctionEnv) => unknown;

/** No value piped into a command (Go's missingVal), as opposed to a piped nil. */
const NO_FINAL = Symbol('no final argument');
type Final = unknown;

const MAX_INCLUDE_DEPTH = 1000;

/** Runs parsed templates: `templates` holds the files and every {{define}}, by name. */
export class Executor {
  private depth = 0;

  constructor(
    private readonly templates: ReadonlyMap<string, Template>,
    private readonly functions: ReadonlyMap<string, TemplateFunction>,
  ) {}

  /** Runs the template `name` with `data` as dot and `$`, and returns what it prints. */
  execute(name: string, data: unknown): string {
    const template = this.templates.get(name);
    if (template === undefined) throw new EvalError(`no template ${JSON.stringify(name)} defined`);
    if (this.depth >= MAX_INCLUDE_DEPTH)
      throw new EvalError(`rendering template ${JSON.stringify(name)}: nested too deeply (recursion?)`);
    this.depth++;
    try {
      const state = new State(this, template, data);
      state.walkList(template.root, data);
      return state.out;
    } finally {
      this.depth--;
    }
  }

  functionNamed(name: string): TemplateFunction {
    const fn = this.functions.get(name);
    if (fn === undefined) throw notImplemented(`function "${name}"`);
    return fn;
  }
}

class State {
  out = '';
  private readonly vars: { name: string; value: unknown }[];
  private readonly env: FunctionEnv;

  constructor(
    private readonly executor: Executor,
    private readonly template: Template,
    data: unknown,
  ) {
    this.vars = [{ name: '$', value: data }];
    this.env = { include: (name, d) => executor.execute(name, d) };
  }

  walkList(nodes: Node[], dot: unknown): void {
    for (const node of nodes) this.walk(node, dot);
  }

  private at<T>(line: number, run: () => T): T {
    try {
      return run();
    } catch (e) {
      if (e instanceof EvalError) throw new TemplateError(this.template.file, line, e.message);
      throw e;
    }
  }

  private walk(node: Node, dot: unknown): void {
    switch (node.kind) {
      case 'text':
        this.out += node.text;
        return;
      case 'action': {
        const value = this.at(node.pipe.line, () => this.evalPipeline(dot, node.pipe));
        if (node.pipe.decl.length === 0) this.out += this.at(node.pipe.line, () => printable(value));
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const value = this.at(node.line, () => this.evalPipeline(dot, node.pipe));
        if (truth(value)) this.walkList(node.list, node.kind === 'with' ? value : dot);
        else if (node.elseList !== undefined) this.walkList(node.elseList, dot);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.walkRange(node, dot);
        return;
      case 'template': {
        const data = node.pipe === undefined ? undefined : this.at(node.line, () => this.evalPipeline(dot, node.pipe!));
        this.out += this.at(node.line, () => this.executor.execute(node.name, data));
        return;
      }
    }
  }

  private walkRange(node: Node & { kind: 'if' | 'with' | 'range' }, dot: unknown): void {
    const mark = this.vars.length;
    const value = this.at(node.line, () => this.evalPipeline(dot, node.pipe));
    const entries: [unknown, unknown][] = this.at(node.line, () => {
      if (value === undefined || value === null) return [];
      if (Array.isArray(value)) return value.map((v, i): [unknown, unknown] => [BigInt(i), v]);
      if (isMap(value))
        return Object.keys(value)
          .sort()
          .map((k): [unknown, unknown] => [k, value[k]]);
      if (typeof value === 'bigint') throw notImplemented('range over an integer');
      throw new EvalError(`range can't iterate over ${formatV(value)}`);
    });
    const decl = node.pipe.decl.length;
    for (const [key, elem] of entries) {
      const inner = this.vars.length;
      // Go pushed the declared variables when it evaluated the pipeline; each iteration sets them.
      if (decl >= 1) this.vars[this.vars.length - 1]!.value = elem;
      if (decl === 2) this.vars[this.vars.length - 2]!.value = key;
      this.walkList(node.list, elem);
      this.vars.length = inner;
    }
    if (entries.length === 0 && node.elseList !== undefined) this.walkList(node.elseList, dot);
    this.vars.length = mark;
  }

  private evalPipeline(dot: unknown, pipe: Pipeline): unknown {
    let value: unknown = NO_FINAL;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      if (value === null) value = undefined; // a nil interface{} becomes an invalid value between commands
    }
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private evalCommand(dot: unknown, cmd: Command, final: Final): unknown {
    const [first, ...rest] = cmd.args;
    switch (first!.kind) {
      case 'field':
        return this.evalFieldChain(dot, first.names, rest, final);
      case 'chain':
        return this.evalFieldChain(this.evalArg(dot, first.base), first.names, rest, final);
      case 'variable': {
        const value = this.variable(first.name);
        if (first.names.length > 0) return this.evalFieldChain(value, first.names, rest, final);
        this.notAFunction(rest, final);
        return value;
      }
      case 'identifier':
        return this.evalFunction(dot, first.name, rest, final);
      case 'nil':
        throw new EvalError('nil is not a command');
      case 'bool':
      case 'dot':
      case 'number':
      case 'pipeline':
      case 'string':
        this.notAFunction(rest, final);
        return this.evalArg(dot, first);
    }
  }

  private notAFunction(args: Operand[], final: Final): void {
    if (args.length > 0 || final !== NO_FINAL) throw new EvalError("can't give argument to non-function");
  }

  private evalArg(dot: unknown, node: Operand): unknown {
    switch (node.kind) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'bool':
      case 'string':
      case 'number':
        return node.value;
      case 'field':
        return this.evalFieldChain(dot, node.names, [], NO_FINAL);
      case 'variable':
        return node.names.length > 0
          ? this.evalFieldChain(this.variable(node.name), node.names, [], NO_FINAL)
          : this.variable(node.name);
      case 'chain':
        return this.evalFieldChain(this.evalArg(dot, node.base), node.names, [], NO_FINAL);
      case 'pipeline':
        return this.evalPipeline(dot, node.pipe);
      case 'identifier':
        return this.evalFunction(dot, node.name, [], NO_FINAL);
    }
  }

  /** Reads receiver.A.B...; only the last field may get arguments (a method call, which maps and structs lack). */
  private evalFieldChain(receiver: unknown, names: string[], args: Operand[], final: Final): unknown {
    let value = receiver;
    for (const [i, name] of names.entries()) {
      const hasArgs = i === names.length - 1 && (args.length > 0 || final !== NO_FINAL);
      value = this.evalField(value, name, hasArgs);
    }
    return value;
  }

  private evalField(receiver: unknown, name: string, hasArgs: boolean): unknown {
    if (receiver === undefined) return undefined;
    if (receiver === null) throw new EvalError(`nil pointer evaluating interface {}.${name}`);
    if (receiver instanceof Unimplemented) throw notImplemented(`${receiver.what}.${name}`);
    if (receiver instanceof GoStruct) {
      if (!(name in receiver.fields)) throw new EvalError(`can't evaluate field ${name} in type ${receiver.typeName}`);
      if (hasArgs) throw new EvalError(`${name} has arguments but cannot be invoked as function`);
      return receiver.fields[name];
    }
    if (isMap(receiver)) {
      if (hasArgs) throw new EvalError(`${name} is not a method but has arguments`);
      return Object.hasOwn(receiver, name) ? receiver[name] : null;
    }
    throw new EvalError(`can't evaluate field ${name} in type ${goTypeName(receiver)}`);
  }

  private evalFunction(dot: unknown, name: string, argNodes: Operand[], final: Final): unknown {
    const thunks: (() => unknown)[] = argNodes.map((n) => () => this.evalArg(dot, n));
    if (final !== NO_FINAL) thunks.push(() => final);
    if (name === 'and' || name === 'or') {
      // Go 1.18+: evaluates its arguments in order and stops at the first that decides the result.
      if (thunks.length === 0) throw new EvalError(`wrong number of args for ${name}: want at least 1 got 0`);
      let value: unknown;
      for (const thunk of thunks) {
        value = thunk();
        if (truth(value) === (name === 'or')) return value;
      }
      return value;
    }
    const fn = this.executor.functionNamed(name);
    const args = thunks.map((t) => t());
    try {
      return fn(args, this.env);
    } catch (e) {
      if (e instanceof EvalError) throw new EvalError(`error calling ${name}: ${e.message}`);
      throw e;
    }
  }

  private variable(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    throw new EvalError(`undefined variable: ${name}`);
  }

  private setVar(name: string, value: unknown): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    throw new EvalError(`undefined variable: ${name}`);
  }
}

/** What an action prints: an invalid value is "<no value>" (Helm then blanks it), anything else as fmt's %v. */
function printable(value: unknown): string {
  if (value === undefined || value === null) return '<no value>';
  return formatV(value);
}
