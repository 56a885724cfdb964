// fmt.Sprintf for the verbs charts use: %s, %d, %v, %q and %%, with Go's output for a wrong or missing argument
// ("%!d(string=x)", "%!s(MISSING)", "%!(EXTRA ...)"). Flags, widths and precisions are not implemented.
import { notImplemented } from './errors.js';
import { formatV, goQuote, goTypeName, isMap } from './go-values.js';

function bad(verb: string, v: unknown): string {
  return v === null || v === undefined ? `%!${verb}(<nil>)` : `%!${verb}(${goTypeName(v)}=${formatV(v)})`;
}

function one(verb: string, v: unknown): string {
  // a map or list formats each key and element with the verb
  if (Array.isArray(v)) return `[${v.map((x) => one(verb, x)).join(' ')}]`;
  if (isMap(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${one(verb, k)}:${one(verb, v[k])}`)
      .join(' ')}]`;
  switch (verb) {
    case 'v':
      return formatV(v);
    case 's':
      return typeof v === 'string' ? v : bad('s', v);
    case 'd':
      return typeof v === 'bigint' ? String(v) : bad('d', v);
    case 'q':
      return typeof v === 'string' ? goQuote(v) : bad('q', v);
    default:
      throw notImplemented(`printf verb %${verb}`);
  }
}

export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const verb = format[++i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (/[-+# 0-9.*[]/.test(verb)) throw notImplemented(`printf flags, widths or precisions (%${verb}...)`);
    out += next < args.length ? one(verb, args[next++]) : `%!${verb}(MISSING)`;
  }
  if (next < args.length) {
    out += `%!(EXTRA ${args
      .slice(next)
      .map((v) => (v === null || v === undefined ? '<nil>' : `${goTypeName(v)}=${formatV(v)}`))
      .join(', ')})`;
  }
  return out;
}
