/**
 * Command lines parsed as Go's `flag` package parses them, which is what the sig-storage sidecars use: `-flag` or
 * `--flag`, `-flag=value` or `-flag value` (booleans only `-flag` or `-flag=false`), parsing ends at the first
 * argument that is not a flag or after `--`, the last of a repeated flag wins. The messages are Go's.
 */
import { parseGoDuration } from './go-duration.js';
import type { FlagDefinition, FlagTable } from './flag-table.js';

/** Options of a {@link CommandLineError}. */
export interface CommandLineErrorOptions {
  /**
   * The exit code: 2 (default) for a command line that cannot be parsed, as Go's `flag` package exits; 1 for one that
   * parses but whose value cannot be used, as a binary that checks its values after parsing exits.
   */
  readonly exitCode?: 1 | 2;
  /** Whether the help is printed before the message (a command line that says nothing usable). Default false. */
  readonly showHelp?: boolean;
}

/** A command line that cannot be used; the runtime prints the message and the usage, and exits with its code. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
  /**
   * The flag a {@link parseGoFlags} error is about: its name in the table (also when it was given by an alias), or
   * for a flag that is not defined, the name as given. Undefined for a malformed argument and for other errors.
   */
  readonly flag: string | undefined;
  /** See {@link CommandLineErrorOptions.exitCode}. */
  readonly exitCode: 1 | 2;
  /** See {@link CommandLineErrorOptions.showHelp}. */
  readonly showHelp: boolean;

  /**
   * @param message - the message, as Go's `flag` package words it where it has one.
   * @param flag - see {@link CommandLineError.flag}.
   * @param options - the exit code and whether the help goes first.
   */
  constructor(message: string, flag?: string, options: CommandLineErrorOptions = {}) {
    super(message);
    this.flag = flag;
    this.exitCode = options.exitCode ?? 2;
    this.showHelp = options.showHelp ?? false;
  }
}

/** A parsed value: text, boolean or number (durations in ms). */
export type ParsedValue = string | boolean | number;

/** Go's `strconv.ParseBool`. */
function parseBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Go's `strconv.ParseInt(text, 0, 64)` (`0x`, `0o`, `0b`, a leading `0` for octal, `_` separators) within JavaScript's safe integers. */
function parseInt(text: string): number | 'parse error' | 'value out of range' {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*)$/.exec(text);
  if (m === null) return 'parse error';
  const digits = m[2]!.replaceAll('_', '');
  let n: bigint;
  try {
    n = BigInt(/^0\d/.test(digits) ? `0o${digits.slice(1)}` : digits);
  } catch {
    return 'parse error';
  }
  if (m[1] === '-') n = -n;
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) return 'value out of range';
  return Number(n);
}

/** Go's `strconv.ParseFloat(text, 64)`, decimal forms only. */
function parseFloat(text: string): number | 'parse error' {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : 'parse error';
}

/**
 * `text` as a value of `def`, or the reason it is not one: Go's `parse error`, `value out of range`, or `check`'s
 * message. A `CommandLineError` that `check` throws is thrown.
 */
export function convertFlagValue(def: FlagDefinition, text: string): ParsedValue | { error: string } {
  let value: ParsedValue | undefined;
  let error = 'parse error';
  switch (def.type) {
    case 'string':
      value = text;
      break;
    case 'boolean':
      value = parseBool(text);
      break;
    case 'int': {
      const n = parseInt(text);
      if (typeof n === 'number') value = n;
      else error = n;
      break;
    }
    case 'float': {
      const n = parseFloat(text);
      if (typeof n === 'number') value = n;
      break;
    }
    case 'duration':
      value = parseGoDuration(text);
      break;
  }
  if (value === undefined) return { error };
  try {
    (def.check as ((v: ParsedValue, t: string) => void) | undefined)?.(value, text);
  } catch (err) {
    if (err instanceof CommandLineError) throw err;
    return { error: err instanceof Error ? err.message : String(err) };
  }
  return value;
}

/** Options of {@link parseGoFlags}. */
export interface GoFlagsOptions {
  /**
   * More names of the table's flags, beside their own `aliases`: alias → name in the table. A value is stored under
   * the table's name. Default none.
   */
  readonly aliases?: Readonly<Record<string, string>>;
  /**
   * Names that are not flags of the table but requests, such as `help` and `version` in urfave/cli, where they are
   * flags: name → request. Each one given is noted in {@link ParsedFlags.requests} (with any `=value` ignored) and
   * parsing goes on. Default none: only `-h`/`-help`, which stop parsing (Go's `flag.ErrHelp`).
   */
  readonly requests?: Readonly<Record<string, string>>;
}

/** What {@link parseGoFlags} found. */
export interface ParsedFlags {
  /** Values of the flags on the command line, by name. */
  values: Map<string, ParsedValue>;
  /** The arguments after the flags. */
  rest: string[];
  /** `-h`, `-help` or `--help` came (and is neither a flag of the table nor a request); parsing stopped there. */
  help: boolean;
  /** The requests given, when the options name any (see {@link GoFlagsOptions.requests}). */
  requests?: Set<string>;
}

/**
 * Parses `args` against `table` as Go's `flag.FlagSet.Parse` does, up to the first argument that is not a flag.
 * Messages name a flag as it was given (an alias, say); {@link CommandLineError.flag} names it as in the table.
 *
 * @throws {@link CommandLineError} with Go's message: `flag provided but not defined: -x`, `bad flag syntax: ---x`,
 *   `flag needs an argument: -x`, `invalid boolean value "x" for -x: parse error`, `invalid value "x" for flag -x:
 *   parse error` (or `value out of range`, or the reason `check` gave).
 */
export function parseGoFlags(args: readonly string[], table: FlagTable, options: GoFlagsOptions = {}): ParsedFlags {
  const values = new Map<string, ParsedValue>();
  const requests = new Set<string>();
  const aliases = new Map<string, string>(Object.entries(options.aliases ?? {}));
  for (const [flag, def] of Object.entries(table)) for (const alias of def.aliases ?? []) aliases.set(alias, flag);
  const lookup = (name: string): string | undefined => {
    if (Object.hasOwn(table, name)) return name;
    const target = aliases.get(name);
    return target !== undefined && Object.hasOwn(table, target) ? target : undefined;
  };
  const result = (rest: string[], help: boolean): ParsedFlags => ({
    values,
    rest,
    help,
    ...(options.requests === undefined ? {} : { requests }),
  });
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    if (arg.length < 2 || !arg.startsWith('-')) break;
    i++;
    if (arg === '--') break;
    let name = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    if (name === '' || name.startsWith('-') || name.startsWith('='))
      throw new CommandLineError(`bad flag syntax: ${arg}`);
    const eq = name.indexOf('=');
    const inline = eq < 0 ? undefined : name.slice(eq + 1);
    if (eq >= 0) name = name.slice(0, eq);
    const key = lookup(name);
    const def = key === undefined ? undefined : table[key];
    if (key === undefined || def === undefined) {
      const request =
        options.requests !== undefined && Object.hasOwn(options.requests, name) ? options.requests[name] : undefined;
      if (request !== undefined) {
        requests.add(request);
        continue;
      }
      if (name === 'help' || name === 'h') return result(args.slice(i), true);
      throw new CommandLineError(`flag provided but not defined: -${name}`, name);
    }
    if (def.type === 'boolean') {
      const value = convertFlagValue(def, inline ?? 'true');
      if (typeof value === 'object') {
        throw new CommandLineError(
          inline === undefined
            ? `invalid boolean flag ${name}: ${value.error}`
            : `invalid boolean value "${inline}" for -${name}: ${value.error}`,
          key,
        );
      }
      values.set(key, value);
      continue;
    }
    let text = inline;
    if (text === undefined) {
      if (i >= args.length) throw new CommandLineError(`flag needs an argument: -${name}`, key);
      text = args[i++]!;
    }
    const value = convertFlagValue(def, text);
    if (typeof value === 'object')
      throw new CommandLineError(`invalid value "${text}" for flag -${name}: ${value.error}`, key);
    values.set(key, value);
  }
  return result(args.slice(i), false);
}

/**
 * How environment variables are read: `go` (default), the sidecars' rule, where an empty variable counts as unset;
 * or `urfave`, the rules of urfave/cli v3 (the CLI library of upstreams such as local-path-provisioner): an empty
 * variable sets a text to `""` and a boolean to false, and leaves a number unset; a value that does not parse is
 * worded as urfave/cli words it (`could not parse "x" as int64 value from environment variable "X" for flag x:
 * strconv.ParseInt: parsing "x": invalid syntax`).
 */
export type EnvRules = 'go' | 'urfave';

/** Options of {@link completeFlagValues}. */
export interface CompleteFlagValuesOptions {
  /** How environment variables are read. Default `go`. */
  readonly envRules?: EnvRules;
}

/** urfave/cli's words for a type: the Go type, and how the parse error reads. */
const URFAVE: Readonly<Record<FlagDefinition['type'], { type: string; error: (text: string, why: string) => string }>> =
  {
    string: { type: 'string', error: (_text, why) => why },
    boolean: { type: 'bool', error: (text) => `strconv.ParseBool: parsing "${text}": invalid syntax` },
    int: {
      type: 'int64',
      error: (text, why) =>
        `strconv.ParseInt: parsing "${text}": ${why === 'value out of range' ? why : 'invalid syntax'}`,
    },
    float: { type: 'float64', error: (text) => `strconv.ParseFloat: parsing "${text}": invalid syntax` },
    duration: { type: 'time.Duration', error: (text) => `time: invalid duration "${text}"` },
  };

/** A flag's value from environment variable `name` holding `text`, by `rules`; undefined when it is unset. */
function envValue(
  flag: string,
  def: FlagDefinition,
  name: string,
  text: string,
  rules: EnvRules,
): ParsedValue | undefined {
  if (text === '') {
    if (rules === 'go') return undefined;
    if (def.type === 'string') return '';
    return def.type === 'boolean' ? false : undefined;
  }
  const value = convertFlagValue(def, text);
  if (typeof value !== 'object') return value;
  if (rules === 'go')
    throw new CommandLineError(
      `invalid value "${text}" of environment variable ${name} for flag -${flag}: ${value.error}`,
    );
  const words = URFAVE[def.type];
  const why =
    value.error === 'parse error' || value.error === 'value out of range'
      ? words.error(text, value.error)
      : value.error;
  throw new CommandLineError(
    `could not parse "${text}" as ${words.type} value from environment variable "${name}" for flag ${flag}: ${why}`,
    flag,
  );
}

/**
 * Fills in, for each flag of `table` not in `values`, its environment variable (read by `options.envRules`), else
 * its default; then checks the required ones.
 *
 * @throws {@link CommandLineError} for an environment value that does not convert, or a missing required flag.
 */
export function completeFlagValues(
  values: Map<string, ParsedValue>,
  table: FlagTable,
  env: Readonly<Record<string, string | undefined>>,
  options: CompleteFlagValuesOptions = {},
): Map<string, ParsedValue> {
  const complete = new Map(values);
  for (const [name, def] of Object.entries(table)) {
    if (complete.has(name)) continue;
    const text = def.env === undefined ? undefined : env[def.env];
    const value =
      text === undefined || def.env === undefined
        ? undefined
        : envValue(name, def, def.env, text, options.envRules ?? 'go');
    if (value !== undefined) complete.set(name, value);
    else if (def.default !== undefined) complete.set(name, def.default);
    else if (def.required === true) {
      throw new CommandLineError(
        `flag -${name}${def.env === undefined ? '' : ` (or environment variable ${def.env})`} is required`,
      );
    }
  }
  return complete;
}
