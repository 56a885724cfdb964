/** The help text of a flag table, laid out as Go's `flag.PrintDefaults` lays it out (the sidecars' `--help`). */
import { formatGoDuration } from './go-duration.js';
import type { FlagDefinition, FlagTable } from './flag-table.js';

const TYPE_NAMES: Readonly<Record<FlagDefinition['type'], string>> = {
  string: 'string',
  boolean: '',
  int: 'int',
  float: 'float',
  duration: 'duration',
};

/**
 * Go's `flag.UnquoteUsage`: the backquoted word of the usage names the value, else the type does; a definition's
 * `valueName` comes first.
 */
function unquoteUsage(def: FlagDefinition): { valueName: string; usage: string } {
  const m = /^([^`]*)`([^`]*)`(.*)$/s.exec(def.usage);
  const usage = m === null ? def.usage : `${m[1]!}${m[2]!}${m[3]!}`;
  return { valueName: def.valueName ?? (m === null ? TYPE_NAMES[def.type] : m[2]!), usage };
}

/**
 * A flag's default as Go prints it (`%q` for text, `1m30s` for a duration), its `defaultText` when it has one; or
 * undefined for none, and for the zero value, which Go leaves out (unless `zero`, for a help that shows it).
 */
export function flagDefaultText(def: FlagDefinition, zero = false): string | undefined {
  if (def.defaultText !== undefined) return def.defaultText;
  const value = def.default;
  if (value === undefined) return undefined;
  if (!zero && (value === '' || value === false || value === 0)) return undefined;
  if (def.type === 'string') return JSON.stringify(value);
  if (def.type === 'duration') return formatGoDuration(value as number);
  return String(value);
}

/**
 * `Usage of <name>:` and one entry per flag, sorted by name: `  -name type` then the usage on the next line after a
 * tab (on the same line for a one-letter boolean), with `(also -alias)`, `(env VAR)`, `(required)` and `(default x)`
 * appended.
 */
export function usageText(name: string, table: FlagTable): string {
  const entries = Object.keys(table)
    .sort()
    .map((flag) => {
      const def = table[flag]!;
      const { valueName, usage } = unquoteUsage(def);
      let head = `  -${flag}`;
      if (valueName !== '') head += ` ${valueName}`;
      const notes = [
        ...(def.aliases === undefined || def.aliases.length === 0
          ? []
          : [`(also ${def.aliases.map((a) => `-${a}`).join(', ')})`]),
        ...(def.env === undefined ? [] : [`(env ${def.env})`]),
        ...(def.required === true ? ['(required)'] : []),
        ...(flagDefaultText(def) === undefined ? [] : [`(default ${flagDefaultText(def)!})`]),
      ];
      const text = [usage.replaceAll('\n', '\n    \t'), ...notes].join(' ');
      return head.length <= 4 ? `${head}\t${text}\n` : `${head}\n    \t${text}\n`;
    });
  return `Usage of ${name}:\n${entries.join('')}`;
}
