// `pnpm check:ascii` (part of `pnpm check`): every JavaScript file the packages build is ASCII.
//
// V8 keeps a module's source in memory for as long as the module is loaded, one byte per character when every
// character is ASCII and two bytes per character when a single one is not. A build that lets one through (a comment
// esbuild copies as it is, a license text) doubles that module's source in every process that loads it. The builds
// escape such characters (tsup.ascii.ts; binaryBundle moves license texts out); this check fails, naming the file,
// line and character, when a build does not.
//
//   node scripts/ascii-dist.ts     (after `pnpm build`)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const ROOT = path.resolve(import.meta.dirname, '..');
const PACKAGES = path.join(ROOT, 'packages');

/** The .js and .mjs files below `dir`. */
function scripts(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) files.push(...scripts(file));
    else if (/\.m?js$/.test(name)) files.push(file);
  }
  return files;
}

const problems: string[] = [];
let checked = 0;
for (const pkg of readdirSync(PACKAGES).sort()) {
  const dist = path.join(PACKAGES, pkg, 'dist');
  if (!existsSync(dist)) {
    problems.push(`packages/${pkg}: no dist/ folder; run \`pnpm build\` first`);
    continue;
  }
  for (const file of scripts(dist)) {
    checked++;
    const text = readFileSync(file, 'utf8');
    const at = text.search(/[^\0-\x7f]/u);
    if (at === -1) continue;
    const line = text.slice(0, at).split('\n').length;
    const point = text.codePointAt(at) ?? 0;
    const char = String.fromCodePoint(point);
    const code = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
    problems.push(
      `${path.relative(ROOT, file)}:${line}: "${char}" (${code}) is not ASCII, so Node.js holds the whole file as ` +
        'UTF-16, twice its size; give its build the asciiOutput plugin of tsup.ascii.ts',
    );
  }
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`ascii: ${checked} built JavaScript files, all ASCII\n`);
