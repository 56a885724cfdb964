// The API reports of the published packages: one report per entry point (package.json `exports`), written by API
// Extractor from the built declarations into the package's `etc/` folder.
//
//   node scripts/api-report.mjs          checks that every report matches the built packages (fails otherwise)
//   node scripts/api-report.mjs --update writes the reports anew
//
// Run it after `pnpm run build`.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import console from 'node:console';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');
let failed = 0;

/** The report's base name: `provisioner-lib` for `.`, `provisioner-lib.runtime` for `./runtime`. */
function reportName(unscoped, subpath) {
  return subpath === '.' ? unscoped : `${unscoped}.${subpath.slice(2).replaceAll('/', '.')}`;
}

for (const dir of readdirSync(path.join(root, 'packages')).sort()) {
  const projectFolder = path.join(root, 'packages', dir);
  const configFile = path.join(projectFolder, 'api-extractor.json');
  if (!existsSync(configFile)) continue;
  const packageJsonFullPath = path.join(projectFolder, 'package.json');
  const pkg = JSON.parse(readFileSync(packageJsonFullPath, 'utf8'));
  const unscoped = pkg.name.replace(/^@[^/]+\//, '');
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    if (typeof target !== 'object' || target.types === undefined) continue;
    const configObject = ExtractorConfig.loadFile(configFile);
    configObject.projectFolder = projectFolder;
    configObject.mainEntryPointFilePath = path.join(projectFolder, target.types);
    configObject.apiReport = { ...configObject.apiReport, reportFileName: reportName(unscoped, subpath) };
    const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: configFile, packageJsonFullPath });
    if (update) mkdirSync(config.reportFolder, { recursive: true });
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
    const name = `${pkg.name}${subpath === '.' ? '' : subpath.slice(1)}`;
    if (result.succeeded) {
      console.log(`${name}: ${result.apiReportChanged ? 'report updated' : 'report up to date'}`);
    } else {
      failed += 1;
      console.error(
        `${name}: ${result.apiReportChanged ? `the public API changed; run \`pnpm api:update\` and commit ${path.relative(root, config.reportFilePath)}` : `${result.errorCount} error(s), ${result.warningCount} warning(s)`}`,
      );
    }
  }
}
if (failed > 0) process.exitCode = 1;
