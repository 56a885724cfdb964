// `pnpm release`: a dry run of a release by default; `pnpm release -- --publish` publishes. docs/releasing.md is the
// guide; `node scripts/release/release.ts --help` says what it does.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';
import { chartsUrl, packageCharts } from './charts.ts';
import { REPO, ReleaseError, workspacePackages, type WorkspacePackage } from './paths.ts';
import { run } from './run.ts';
import { checkVersions, describeStale } from './versions.ts';

const USAGE = `Usage: pnpm release [-- options]

A dry run by default: publishes nothing, changes nothing but dist/charts/.
  1. checks that no changeset is waiting (pnpm run version-packages turns them into versions) and that every chart
     and image reference names its package's version (node scripts/release/versions.ts);
  2. checks that the packages are built (pnpm build);
  3. packages the Helm charts into dist/charts/ with their index.yaml (pnpm charts);
  4. pnpm -r publish --dry-run: every public package packed and shown as npm would publish it, with its
     publishConfig (public access, provenance).

Options:
  --publish    publish for real: pnpm build first, then changeset publish, which publishes every public package
               whose version is not on the registry yet (npm publish with provenance, which needs a CI npm
               supports, e.g. GitHub Actions with id-token: write) and tags each in git. Charts and images are
               not pushed (docs/releasing.md says how).
  --url URL    the charts' URL in dist/charts/index.yaml (see pnpm charts -- --help)
  -h, --help   print this help and exit`;

/** The changesets not yet turned into versions: .changeset/*.md but its README. */
function pendingChangesets(): string[] {
  const dir = join(REPO, '.changeset');
  return readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md');
}

/** The files each public package's exports and bin name that are missing (it is not built). */
function missingBuild(pkg: WorkspacePackage): string[] {
  const files = [
    ...Object.values(pkg.json.exports ?? {}).flatMap((t) => (typeof t === 'string' ? [t] : [t.types, t.default])),
    ...Object.values(pkg.json.bin ?? {}),
  ].filter((f): f is string => f !== undefined && f.startsWith('./dist/'));
  return files.filter((f) => !existsSync(join(pkg.folder, f))).map((f) => relative(REPO, join(pkg.folder, f)));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const publish = args.includes('--publish');
  const url = chartsUrl(args);
  const unknown = args.filter(
    (a, i) => !(a === '--publish' || a === '--url' || a.startsWith('--url=') || args[i - 1] === '--url'),
  );
  if (unknown.length > 0) throw new ReleaseError(`unknown argument ${unknown[0]} (see --help)`);

  const pending = pendingChangesets();
  if (pending.length > 0) {
    throw new ReleaseError(
      `${pending.length} changeset(s) not yet versioned (${pending.join(', ')}): run pnpm run version-packages, ` +
        'review and commit the versions and changelogs, then release',
    );
  }
  const stale = checkVersions(false);
  if (stale.length > 0) {
    throw new ReleaseError(
      `out of step with package.json:\n${describeStale(stale)}\nrun: node scripts/release/versions.ts --write`,
    );
  }

  const packages = workspacePackages().filter((p) => p.json.private !== true);
  if (publish) run('pnpm', ['run', 'build']);
  const unbuilt = packages.flatMap(missingBuild);
  if (unbuilt.length > 0) throw new ReleaseError(`not built (run pnpm build first): ${unbuilt.join(', ')}`);

  await packageCharts(url);

  const names = packages.map((p) => `${p.json.name}@${p.json.version}`).join(', ');
  if (publish) {
    console.log(`release: publishing what is not on the registry yet of ${names}`);
    run('pnpm', ['exec', 'changeset', 'publish']);
    console.log('release: published; push the tags (git push --follow-tags), then the charts and images');
  } else {
    // --no-git-checks: a dry run from any branch or a dirty tree; changeset publish passes it too.
    run('pnpm', ['-r', 'publish', '--dry-run', '--no-git-checks']);
    console.log(`release: dry run done for ${names}; nothing was published (pnpm release -- --publish publishes)`);
  }
}

try {
  await main();
} catch (err) {
  if (!(err instanceof ReleaseError)) throw err;
  console.error(`release: ${err.message}`);
  process.exitCode = 1;
}
