/**
 * The modes `chmod` takes, applied in-process: octal (`0750`) or POSIX symbolic clauses (`u=rwx,g=rx,o=`, `a+X`,
 * `g=u`, `+t`), as `permPattern` renders them (the values `resolveVolume` lets through).
 *
 * @module
 */

/** The umask a clause without `u`, `g`, `o` or `a` respects, as chmod does (the usual 022). */
const CLAUSE_UMASK = 0o022;

const SHIFT: Readonly<Record<'u' | 'g' | 'o', number>> = { u: 6, g: 3, o: 0 };
const SPECIAL: Readonly<Record<'u' | 'g' | 'o', number>> = { u: 0o4000, g: 0o2000, o: 0 };

/** A mode chmod would refuse. */
export class FileModeError extends Error {
  override readonly name = 'FileModeError';
}

/** The permission bits `perms` (`rwxXst`) stand for, for the classes `who`. */
function bitsOf(perms: string, who: readonly ('u' | 'g' | 'o')[], mode: number, isDirectory: boolean): number {
  let rwx = 0;
  let extra = 0;
  for (const p of perms) {
    if (p === 'r') rwx |= 4;
    else if (p === 'w') rwx |= 2;
    else if (p === 'x') rwx |= 1;
    else if (p === 'X') rwx |= isDirectory || (mode & 0o111) !== 0 ? 1 : 0;
    else if (p === 's') for (const w of who) extra |= SPECIAL[w];
    else if (p === 't') extra |= who.includes('o') ? 0o1000 : 0;
  }
  let bits = extra;
  for (const w of who) bits |= rwx << SHIFT[w];
  return bits;
}

/**
 * The mode `spec` gives a file of mode `mode` (permission bits and setuid, setgid, sticky). Throws a
 * {@link FileModeError} for a spec chmod refuses.
 */
export function applyFileMode(mode: number, spec: string, isDirectory: boolean): number {
  if (/^[0-7]{1,4}$/.test(spec)) return parseInt(spec, 8);
  let result = mode & 0o7777;
  for (const clause of spec.split(',')) {
    const m = /^([ugoa]*)((?:[-+=](?:[rwxXst]*|[ugo]))+)$/.exec(clause);
    if (m === null) throw new FileModeError(`invalid mode: ${JSON.stringify(spec)}`);
    const whoText = m[1] ?? '';
    const implicit = whoText === '';
    const who = [...new Set(implicit || whoText.includes('a') ? 'ugo' : whoText)] as ('u' | 'g' | 'o')[];
    for (const [, op, perms = ''] of (m[2] ?? '').matchAll(/([-+=])([ugo]|[rwxXst]*)/g)) {
      let bits: number;
      if (perms === 'u' || perms === 'g' || perms === 'o') {
        const source = (result >> SHIFT[perms]) & 7;
        bits = 0;
        for (const w of who) bits |= source << SHIFT[w];
      } else bits = bitsOf(perms, who, result, isDirectory);
      if (implicit) bits &= ~CLAUSE_UMASK;
      if (op === '+') result |= bits;
      else if (op === '-') result &= ~bits;
      else {
        let clear = who.includes('o') ? 0o1000 : 0;
        for (const w of who) clear |= (7 << SHIFT[w]) | SPECIAL[w];
        result = (result & ~clear) | bits;
      }
    }
  }
  return result;
}
