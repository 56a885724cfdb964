/**
 * Installing and importing the packages as their docs say: the install lines name every optional peer dependency a
 * documented entry point imports, and a CommonJS TypeScript project with `"module": "nodenext"` (what the docs tell
 * CommonJS users to set, the packages being ESM only) compiles and runs an import of every entry point.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface PackageJson {
  name: string;
  private?: boolean;
  exports?: Record<string, string | { types?: string; default?: string }>;
  peerDependencies?: Record<string, string>;
}

const published = readdirSync(join(ROOT, 'packages'))
  .map((dir) => ({
    folder: join(ROOT, 'packages', dir),
    json: JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as PackageJson,
  }))
  .filter((p) => p.json.private !== true);

/** `[import specifier, source file]` of every entry point of a package but `./package.json`. */
function entryPoints(p: (typeof published)[number]): [string, string][] {
  return Object.keys(p.json.exports ?? {})
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => {
      const specifier = subpath === '.' ? p.json.name : `${p.json.name}/${subpath.slice(2)}`;
      return [specifier, join(p.folder, 'src', `${subpath === '.' ? 'index' : subpath.slice(2)}.ts`)];
    });
}

/** The packages a source file imports (bare specifiers, reduced to the package name). */
function importedPackages(file: string): Set<string> {
  const names = new Set<string>();
  for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^'.][^']*)'/gms)) {
    const spec = m[1] ?? '';
    if (spec.startsWith('node:')) continue;
    names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
  }
  return names;
}

describe('the install lines of the docs', () => {
  const docs = ['docs/provisioner-lib.md', 'packages/provisioner-lib/README.md'];

  it.each(docs)('%s installs the optional peer dependency of every entry point it mentions', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const installed = new Set(
      [...text.matchAll(/^npm install (.+?)(?:\s+#.*)?$/gm)].flatMap((m) => (m[1] ?? '').trim().split(/\s+/)),
    );
    const missing: string[] = [];
    for (const p of published) {
      for (const [specifier, source] of entryPoints(p)) {
        if (!new RegExp(`${specifier.replace(/[/@-]/g, '\\$&')}(?![\\w/-])`).test(text)) continue;
        for (const dep of importedPackages(source)) {
          if (p.json.peerDependencies?.[dep] !== undefined && !installed.has(dep))
            missing.push(`${specifier} needs ${dep}`);
        }
      }
    }
    expect(installed.size).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});

describe('a CommonJS TypeScript project with "module": "nodenext"', () => {
  it('compiles an import of every entry point and runs it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kprov-cjs-'));
    try {
      const modules = join(dir, 'node_modules');
      mkdirSync(join(modules, '@kprov'), { recursive: true });
      mkdirSync(join(modules, '@types'), { recursive: true });
      for (const p of published) symlinkSync(p.folder, join(modules, p.json.name), 'dir');
      symlinkSync(join(ROOT, 'node_modules/@types/node'), join(modules, '@types/node'), 'dir');
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            target: 'es2022',
            strict: true,
            outDir: 'out',
            skipLibCheck: true,
            types: ['node'],
          },
          include: ['main.ts'],
        }),
      );
      const specifiers = published.flatMap((p) => entryPoints(p).map(([specifier]) => specifier));
      const lines = specifiers.map((s, i) => `import * as m${i} from '${s}';`);
      lines.push(`const loaded = { ${specifiers.map((s, i) => `'${s}': Object.keys(m${i}).length`).join(', ')} };`);
      lines.push('console.log(JSON.stringify(loaded));');
      writeFileSync(join(dir, 'main.ts'), `${lines.join('\n')}\n`);

      const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
      execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
      const compiled = readFileSync(join(dir, 'out/main.js'), 'utf8');
      expect(compiled).toContain('require("@kprov/provisioner-lib")');
      const loaded = JSON.parse(
        execFileSync(process.execPath, [join(dir, 'out/main.js')], { encoding: 'utf8' }),
      ) as Record<string, number>;
      expect(Object.keys(loaded).sort()).toEqual([...specifiers].sort());
      for (const [specifier, exported] of Object.entries(loaded)) expect(exported, specifier).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
