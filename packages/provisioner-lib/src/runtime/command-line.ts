/**
 * What a command line asks the runtime to do, and the runtime's own command line: the common flags plus a binary's
 * flag table, in Go's `flag` syntax.
 */
import type { CommonOptions } from './common-options.js';
import { commonFlags, commonOptionsOf, COMMON_FLAGS } from './common-flags.js';
import type { FlagTable, FlagValues } from './flag-table.js';
import { CommandLineError, completeFlagValues, parseGoFlags } from './go-flags.js';
import { usageText } from './usage.js';

/** Environment variables, as `process.env`. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A parsed command line: run with the common options and the binary's own, or exit at once with `code` after
 * writing `stdout` (help, version) or `stderr` (usage errors) as given, newlines included.
 */
export type CommandLine<O> =
  { kind: 'run'; common: CommonOptions; options: O } | { kind: 'exit'; code: number; stdout?: string; stderr?: string };

/**
 * A binary's own parser, for a binary that keeps its own flag dialect: `argv` are the arguments after the program
 * name. Throwing is a bug (it rejects `runProvisioner`); a bad command line is an `exit` result.
 */
export type CommandLineParser<O> = (argv: readonly string[], env: Env) => CommandLine<O>;

/** Options of {@link flagsCommandLine}. */
export interface FlagsCommandLineOptions {
  /** The program's name, in `Usage of <name>:`. */
  name: string;
  /** Text printed above the flags by `--help`. Default none. */
  description?: string;
  /** The binary's defaults of the common options (e.g. `{ leaderElection: false }`); the help shows them. Default none. */
  commonDefaults?: CommonOptions;
  /**
   * The version `--version` prints, as `<name> <version>` (the sidecars print their program and version). Default
   * `unknown`, what the sidecars print when their build set none.
   */
  version?: string;
}

/**
 * The runtime's command line: the common flags (see {@link COMMON_FLAGS}) and the binary's `flags`, parsed as Go's
 * `flag` package parses (the sig-storage sidecars' syntax), each flag falling back to its environment variable,
 * then to its default.
 *
 * - `-h`, `-help`, `--help`: the description and the usage on stdout, exit code 0.
 * - `--version`: `<name> <version>` on stdout, exit code 0.
 * - An unknown flag, a value that does not parse or fails its check, a missing required flag, an argument that is
 *   not a flag, lease timings out of order: the message and the usage on stderr, exit code 2.
 *
 * @throws TypeError when `flags` redefines a common flag or `-h`/`-help`.
 */
export function flagsCommandLine<const T extends FlagTable>(
  flags: T,
  options: FlagsCommandLineOptions,
): CommandLineParser<FlagValues<T>> {
  for (const name of Object.keys(flags)) {
    if (Object.hasOwn(COMMON_FLAGS, name) || name === 'h' || name === 'help') {
      throw new TypeError(
        `flag -${name} is one of the runtime's own flags; set its default with commonDefaults instead`,
      );
    }
  }
  const common = commonFlags(options.commonDefaults);
  const table: FlagTable = { ...common, ...flags };
  const usage = usageText(options.name, table);
  const help =
    options.description === undefined || options.description === ''
      ? usage
      : `${options.description.trimEnd()}\n\n${usage}`;
  return (argv, env) => {
    try {
      const parsed = parseGoFlags(argv, table);
      if (parsed.help) return { kind: 'exit', code: 0, stdout: help };
      if (parsed.values.get('version') === true)
        return { kind: 'exit', code: 0, stdout: `${options.name} ${options.version ?? 'unknown'}\n` };
      if (parsed.rest.length > 0)
        throw new CommandLineError(`unexpected argument "${parsed.rest[0]!}": ${options.name} takes flags only`);
      const values = completeFlagValues(parsed.values, table, env);
      const own = Object.fromEntries(Object.keys(flags).map((name) => [name, values.get(name)])) as FlagValues<T>;
      return { kind: 'run', common: commonOptionsOf(values), options: own };
    } catch (err) {
      if (!(err instanceof CommandLineError)) throw err;
      return { kind: 'exit', code: err.exitCode, stderr: `${err.message}\n${usage}` };
    }
  };
}
