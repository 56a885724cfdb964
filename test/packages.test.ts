/**
 * What the published packages declare and ship: the Node.js versions they support (`engines.node`, checked against
 * what their production dependencies declare), the metadata npm shows and publishes with, the files in every tarball
 * `pnpm pack` makes (LICENSE and NOTICE as at the root, a changelog, nothing but `dist/` besides), and the version
 * each chart and image reference names (docs/releasing.md).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkVersions } from '../scripts/release/versions.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  author?: string;
  homepage?: string;
  bugs?: { url?: string };
  keywords?: string[];
  repository?: { type?: string; url?: string; directory?: string };
  publishConfig?: { access?: string; provenance?: boolean };
  engines?: { node?: string };
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readJson = (file: string): PackageJson => JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
const root = readJson(join(ROOT, 'package.json'));
const published = readdirSync(join(ROOT, 'packages'))
  .map((dir) => ({ folder: join(ROOT, 'packages', dir), json: readJson(join(ROOT, 'packages', dir, 'package.json')) }))
  .filter((p) => p.json.private !== true);

type Version = [number, number, number];

/** `22`, `22.19`, `22.19.0`, `10.x` → [major, minor, patch], missing or `x` parts as 0. */
function parseVersion(text: string): Version {
  const parts = text.trim().replace(/^v/, '').split('.');
  const n = (i: number): number => {
    const p = parts[i];
    return p === undefined || p === 'x' || p === '*' ? 0 : Number(p);
  };
  return [n(0), n(1), n(2)];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Whether `version` satisfies an `engines.node` range made of `||`-separated sets of `>=`, `>`, `<`, `<=`, `^`, `~`
 * and bare (partial) versions, as npm packages write them. Throws on anything else, so that a new form is noticed.
 */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((set) =>
    set
      .trim()
      .replace(/(>=|<=|>|<|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => {
        const m = /^(>=|<=|>|<|\^|~|=)?v?(\d+(?:\.(?:\d+|x))?(?:\.(?:\d+|x))?)$/.exec(comparator);
        if (m === null) throw new Error(`engines.node range not understood: "${range}"`);
        const [, op = '', text = ''] = m;
        const bound = parseVersion(text);
        const c = compare(version, bound);
        const partial = text.split('.').length;
        switch (op) {
          case '>=':
            return c >= 0;
          case '>':
            return c > 0;
          case '<':
            return c < 0;
          case '<=':
            return c <= 0;
          case '^':
            return c >= 0 && version[0] === bound[0];
          case '~':
            return c >= 0 && version[0] === bound[0] && (partial === 1 || version[1] === bound[1]);
          default:
            return partial === 1
              ? version[0] === bound[0]
              : partial === 2
                ? version[0] === bound[0] && version[1] === bound[1]
                : c === 0;
        }
      }),
  );
}

/** Finds the folder of package `name` as Node resolves it from `from` (walking up `node_modules` folders). */
function packageFolder(name: string, from: string): string | undefined {
  for (let dir = realpathSync(from); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    try {
      readFileSync(join(candidate, 'package.json'));
      return realpathSync(candidate);
    } catch {
      // not here
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Every package a published package needs at run time (dependencies and peer dependencies, transitively), with its engines.node. */
function runtimeEngines(): Map<string, string> {
  const engines = new Map<string, string>();
  const seen = new Set<string>();
  const visit = (folder: string, json: PackageJson): void => {
    for (const dep of Object.keys({ ...json.dependencies, ...json.peerDependencies })) {
      const depFolder = packageFolder(dep, folder);
      if (depFolder === undefined || seen.has(depFolder)) continue;
      seen.add(depFolder);
      const depJson = readJson(join(depFolder, 'package.json'));
      if (depJson.engines?.node !== undefined) engines.set(`${depJson.name}@${depJson.version}`, depJson.engines.node);
      visit(depFolder, depJson);
    }
  };
  for (const p of published) visit(p.folder, p.json);
  return engines;
}

describe('engines.node', () => {
  const declared = root.engines?.node ?? '';

  it('is the same ">=X.Y.Z" in the root and every package', () => {
    expect(declared).toMatch(/^>=\d+\.\d+\.\d+$/);
    expect(Object.fromEntries(published.map((p) => [p.json.name, p.json.engines?.node]))).toEqual(
      Object.fromEntries(published.map((p) => [p.json.name, declared])),
    );
  });

  it('names a version every production dependency supports', () => {
    const oldest = parseVersion(declared.slice(2));
    const engines = runtimeEngines();
    expect(engines.size).toBeGreaterThan(10);
    const unsupported = [...engines]
      .filter(([, range]) => !satisfies(oldest, range))
      .map(([pkg, range]) => `${pkg} needs node ${range}`);
    expect(unsupported).toEqual([]);
  });
});

describe('the packed tarballs', () => {
  const out = mkdtempSync(join(tmpdir(), 'kprov-pack-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(published.map((p) => [p.json.name, p] as const))(
    '%s ships LICENSE and NOTICE, as at the root',
    (_name, p) => {
      const tarball =
        execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: p.folder, encoding: 'utf8' })
          .trim()
          .split('\n')
          .at(-1) ?? '';
      const entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
      expect(entries).toEqual(
        expect.arrayContaining(['package/LICENSE', 'package/NOTICE', 'package/README.md', 'package/package.json']),
      );
      const extract = (entry: string): string => execFileSync('tar', ['-xzOf', tarball, entry], { encoding: 'utf8' });
      expect(extract('package/LICENSE')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
      expect(extract('package/NOTICE')).toBe(readFileSync(join(ROOT, 'NOTICE'), 'utf8'));
      // The changelog, with an entry for the version packed; and nothing beside the built code but these and the
      // examples the guide points to (provisioner-lib's).
      expect(extract('package/CHANGELOG.md')).toContain(`\n## ${p.json.version}\n`);
      const files = entries.filter((e) => e !== '' && !e.endsWith('/'));
      const allowed = /^package\/(package\.json|README\.md|CHANGELOG\.md|LICENSE|NOTICE|dist\/.+|examples\/[^/]+\.ts)$/;
      expect(files.filter((e) => !allowed.test(e))).toEqual([]);
    },
  );
});

describe('package metadata', () => {
  it.each(published.map((p) => [p.json.name, p] as const))(
    '%s names its source, home, issues, author and license, and publishes publicly with provenance',
    (_name, p) => {
      const dir = p.folder.slice(ROOT.length).replace(/^\/+/, '');
      expect(p.json).toMatchObject({
        license: 'Apache-2.0',
        author: expect.stringMatching(/\S/) as unknown,
        repository: { type: 'git', url: 'git+https://github.com/kprov/kprov.git', directory: dir },
        homepage: `https://github.com/kprov/kprov/tree/main/${dir}#readme`,
        bugs: { url: 'https://github.com/kprov/kprov/issues' },
        publishConfig: { access: 'public', provenance: true },
      });
      expect(p.json.keywords).toContain('kubernetes');
    },
  );
});

describe('versions', () => {
  it('every chart and image reference names its package.json version (scripts/release/versions.ts)', () => {
    expect(checkVersions(false)).toEqual([]);
  });
});
