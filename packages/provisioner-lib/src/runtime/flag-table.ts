/** How a binary declares its flags for the runtime's command line: a table of definitions, and the values it gives. */

/** The kind of a flag's value, as Go's `flag` package has them. */
export type FlagType = 'string' | 'boolean' | 'int' | 'float' | 'duration';

/** What every definition has, `V` being the type of the value. */
interface FlagBase<V> {
  /**
   * One line of help. A word between backquotes names the value in the help (Go's `UnquoteUsage`): ``"kubeconfig
   * `file`"`` shows `-kubeconfig file`.
   */
  readonly usage: string;
  /** The value when neither the flag nor its environment variable is set. Default none: the value is undefined. */
  readonly default?: V;
  /**
   * Environment variable read when the flag is not on the command line (an empty value counts as unset, unless
   * urfave/cli's rules are asked for: see `completeFlagValues`). Default none.
   */
  readonly env?: string;
  /** The command line fails (exit code 2) when neither the flag nor its environment variable gives a value. Default false. */
  readonly required?: boolean;
  /**
   * Checks a value given on the command line or in the environment (`text` as it was given); a thrown error's
   * message is the reason in `invalid value "<text>" for flag -<name>: <reason>` (exit code 2). A thrown
   * `CommandLineError` is the error itself, with its own message and exit code. Default none.
   */
  readonly check?: (value: V, text: string) => void;
  /** Other names of the flag (`kube-client-qps` for `kube-api-qps`, `d` for `debug`); they set the same value. Default none. */
  readonly aliases?: readonly string[];
  /** The name of the value in a help, when the usage has no backquoted word (`FILE`, `ADDR:PORT`). Default none. */
  readonly valueName?: string;
  /** The default as a help shows it, when that is not the value itself (`the namespace`, `off`). Default none. */
  readonly defaultText?: string;
}

/** One flag: a text, a boolean (`-flag`, `-flag=false`), a whole number, a number, or a Go duration in ms. */
export type FlagDefinition =
  | (FlagBase<string> & { readonly type: 'string' })
  | (FlagBase<boolean> & { readonly type: 'boolean' })
  | (FlagBase<number> & { readonly type: 'int' | 'float' | 'duration' });

/** Flags by name (without dashes). */
export type FlagTable = Readonly<Record<string, FlagDefinition>>;

/** A flag's value type: `duration` values are milliseconds. */
export type FlagValue<D extends FlagDefinition> = D['type'] extends 'string'
  ? string
  : D['type'] extends 'boolean'
    ? boolean
    : number;

/** The values of a table's flags: set when the flag has a default or is required, else possibly undefined. */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T]: T[K] extends { readonly default: unknown } | { readonly required: true }
    ? FlagValue<T[K]>
    : FlagValue<T[K]> | undefined;
};
