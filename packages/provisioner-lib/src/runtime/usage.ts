/** The help text of a flag table, laid out as Go's `flag.PrintDefaults` lays it out (the sidecars' `--help`). */
import { goDuration } from '../client/rate-limit/throttle-message.js';
import type { FlagDefinition, FlagTable } from './flag-table.js';

const TYPE_NAMES: Readonly<Record<FlagDefinition['type'], string>> = {
  string: 'string',
  boolean: '',
  int: 'int',
  float: 'float',
  duration: 'duration',
};

/** Go's `flag.UnquoteUsage`: the backquoted word of the usage names the value, else the type does. */
function unquoteUsage(def: FlagDefinition): { valueName: string; usage: string } {
  const m = /^([^`]*)`([^`]*)`(.*)$/s.exec(def.usage);
  if (m !== null) return { valueName: m[2]!, usage: `${m[1]!}${m[2]!}${m[3]!}` };
  return { valueName: TYPE_NAMES[def.type], usage: def.usage };
}

/** The default as Go prints it (`%q` for text), or undefined for the zero value, which Go leaves out. */
function defaultText(def: FlagDefinition): string | undefined {
  const value = def.default;
  if (value === undefined || value === '' || value === false || value === 0) return undefined;
  if (def.type === 'string') return JSON.stringify(value);
  if (def.type === 'duration') return goDuration(value as number);
  return String(value);
}

/**
 * `Usage of <name>:` and one entry per flag, sorted by name: `  -name type` then the usage on the next line after a
 * tab (on the same line for a one-letter boolean), with `(env VAR)`, `(required)` and `(default x)` appended.
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
        ...(def.env === undefined ? [] : [`(env ${def.env})`]),
        ...(def.required === true ? ['(required)'] : []),
        ...(defaultText(def) === undefined ? [] : [`(default ${defaultText(def)!})`]),
      ];
      const text = [usage.replaceAll('\n', '\n    \t'), ...notes].join(' ');
      return head.length <= 4 ? `${head}\t${text}\n` : `${head}\n    \t${text}\n`;
    });
  return `Usage of ${name}:\n${entries.join('')}`;
}
