// Every place that repeats a package's version, kept in step with its package.json (which `changeset version` sets):
// its charts' `version` and `appVersion`, and its image, `ghcr.io/kprov/<package>:<version>`, wherever the
// manifests, the charts' values, the READMEs, the docs and the Dockerfile name it.
//
//   node scripts/release/versions.ts          # lists what is out of step; exits 1 if anything is
//   node scripts/release/versions.ts --write  # rewrites it (`pnpm run version-packages` runs this)
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { charts, REPO, ReleaseError, workspacePackages } from './paths.ts';

/** One place that names a version other than its package's. */
export interface Stale {
  file: string;
  what: string;
  found: string;
  want: string;
}

const SEMVER = String.raw`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`;

/** The files where an image reference can be: each package's deploy/ (YAML) and README, docs/*.md, the Dockerfile. */
function imageFiles(): string[] {
  const files = [join(REPO, 'Dockerfile')];
  const docs = join(REPO, 'docs');
  for (const f of readdirSync(docs)) if (f.endsWith('.md')) files.push(join(docs, f));
  for (const pkg of workspacePackages()) {
    files.push(join(pkg.folder, 'README.md'));
    const deploy = join(pkg.folder, 'deploy');
    if (existsSync(deploy)) {
      for (const f of readdirSync(deploy, { recursive: true, encoding: 'utf8' })) {
        if (/\.ya?ml$/.test(f)) files.push(join(deploy, f));
      }
    }
  }
  return files.filter((f) => existsSync(f));
}

/**
 * Finds (and with `write`, fixes) every place out of step. A place naming a package that does not exist is left as
 * it is (e.g. upstream's images).
 */
export function checkVersions(write: boolean): Stale[] {
  const versions = new Map(workspacePackages().map((p) => [p.dir, p.json.version]));
  const stale: Stale[] = [];
  /**
   * Each match of `pattern` (groups `pre`, `v` and `post` around the version) is checked against the version `want`
   * gives for it (undefined: not ours) and, with `write`, rewritten to it.
   */
  const edit = (
    file: string,
    pattern: RegExp,
    want: (groups: Record<string, string>) => [string, string] | undefined,
  ) => {
    const text = readFileSync(file, 'utf8');
    const next = text.replace(pattern, (...args: unknown[]) => {
      const groups = args.at(-1) as Record<string, string>;
      const [pre = '', found = '', post = ''] = [groups.pre, groups.v, groups.post];
      const wanted = want(groups);
      if (wanted === undefined || wanted[1] === found) return `${pre}${found}${post}`;
      stale.push({ file: relative(REPO, file), what: wanted[0], found, want: wanted[1] });
      return `${pre}${wanted[1]}${post}`;
    });
    if (write && next !== text) writeFileSync(file, next);
  };
  const image = (name: string | undefined): [string, string] | undefined => {
    const version = versions.get(name ?? '');
    return version === undefined ? undefined : [`image ghcr.io/kprov/${name}`, version];
  };

  for (const chart of charts()) {
    const { version } = chart.pkg.json;
    edit(
      join(chart.folder, 'Chart.yaml'),
      new RegExp(`^(?<pre>(?<key>version|appVersion): *"?)(?<v>${SEMVER})(?<post>"?)`, 'gm'),
      (g) => [`chart ${chart.name} ${g.key}`, version],
    );
    // values.yaml's image.tag under `repository: ghcr.io/kprov/<package>` (an empty tag means the appVersion).
    edit(
      join(chart.folder, 'values.yaml'),
      new RegExp(`(?<pre>repository: ghcr\\.io/kprov/(?<name>[a-z0-9-]+)\\n +tag: "?)(?<v>${SEMVER})(?<post>"?)`, 'g'),
      (g) => image(g.name),
    );
  }
  for (const file of imageFiles()) {
    edit(file, new RegExp(`(?<pre>ghcr\\.io/kprov/(?<name>[a-z0-9-]+):)(?<v>${SEMVER})(?<post>)`, 'g'), (g) =>
      image(g.name),
    );
  }
  return stale;
}

/** One line per place out of step. */
export function describeStale(stale: Stale[]): string {
  return stale.map((s) => `  ${s.file}: ${s.what} is ${s.found}, its package is at ${s.want}`).join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const write = process.argv.includes('--write');
  try {
    const stale = checkVersions(write);
    if (stale.length === 0) console.log('versions: every chart and image reference matches its package.json');
    else if (write) console.log(`versions: updated\n${describeStale(stale)}`);
    else
      throw new ReleaseError(
        `out of step with package.json:\n${describeStale(stale)}\nrun: node scripts/release/versions.ts --write`,
      );
  } catch (err) {
    if (!(err instanceof ReleaseError)) throw err;
    console.error(`versions: ${err.message}`);
    process.exitCode = 1;
  }
}
