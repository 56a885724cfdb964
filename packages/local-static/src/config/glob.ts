/**
 * Go's `filepath.Match` on one file name (no separators in the name): `*` any run of characters, `?` one character,
 * `[abc]`, `[a-z]`, `[^a-z]` character classes, `\` escapes the next character.
 *
 * @module
 */

/** A pattern Go's `filepath.Match` refuses (`ErrBadPattern`). */
export class BadPatternError extends Error {
  override readonly name = 'BadPatternError';
}

function escapeRegExp(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

/** Compiles one glob into an anchored regular expression. @throws {@link BadPatternError} for a malformed pattern. */
export function compileGlob(pattern: string): RegExp {
  const chars = [...pattern];
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else if (ch === '\\') {
      const next = chars[++i];
      if (next === undefined) throw new BadPatternError(`syntax error in pattern "${pattern}"`);
      out += escapeRegExp(next);
    } else if (ch === '[') {
      let j = i + 1;
      let cls = '';
      if (chars[j] === '^') {
        cls += '^';
        j++;
      }
      let first = true;
      for (;;) {
        const c = chars[j];
        if (c === undefined) throw new BadPatternError(`syntax error in pattern "${pattern}"`);
        if (c === ']' && !first) break;
        first = false;
        let lo = c;
        if (c === '\\') {
          lo = chars[++j] ?? '';
          if (lo === '') throw new BadPatternError(`syntax error in pattern "${pattern}"`);
        } else if (c === '-' || c === ']') throw new BadPatternError(`syntax error in pattern "${pattern}"`);
        cls += escapeRegExp(lo);
        if (chars[j + 1] === '-') {
          let hi = chars[j + 2];
          if (hi === undefined || hi === ']') throw new BadPatternError(`syntax error in pattern "${pattern}"`);
          j += 2;
          if (hi === '\\') {
            hi = chars[++j];
            if (hi === undefined) throw new BadPatternError(`syntax error in pattern "${pattern}"`);
          }
          if (hi < lo) throw new BadPatternError(`syntax error in pattern "${pattern}"`);
          cls += `-${escapeRegExp(hi)}`;
        }
        j++;
      }
      out += `[${cls}]`;
      i = j;
    } else out += escapeRegExp(ch);
  }
  return new RegExp(`^${out}$`, 'u');
}

/**
 * The matcher of a `namePattern`: a comma-separated list of globs, any of which may match.
 *
 * @throws {@link BadPatternError} when one of the globs is malformed.
 */
export function nameMatcher(namePattern: string): (name: string) => boolean {
  const globs = namePattern.split(',').map(compileGlob);
  return (name) => globs.some((g) => g.test(name));
}
