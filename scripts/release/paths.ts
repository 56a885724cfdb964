// Where things are: the repository, its packages, and dist/charts/, where `pnpm charts` writes (git-ignored).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CHARTS_DIR = join(REPO, 'dist', 'charts');

/** The failures the release scripts report in their own words: one message, no stack trace. */
export class ReleaseError extends Error {}

export interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  exports?: Record<string, string | { types?: string; default?: string }>;
  bin?: Record<string, string>;
}

/** A workspace package: its folder under packages/ (`dir`), path and package.json. */
export interface WorkspacePackage {
  dir: string;
  folder: string;
  json: PackageJson;
}

export function workspacePackages(): WorkspacePackage[] {
  return readdirSync(join(REPO, 'packages'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => {
      const folder = join(REPO, 'packages', d.name);
      const json = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as PackageJson;
      return { dir: d.name, folder, json };
    });
}

/** The Helm charts: every packages/<dir>/deploy/chart/<name> with a Chart.yaml. */
export function charts(): { pkg: WorkspacePackage; name: string; folder: string }[] {
  return workspacePackages().flatMap((pkg) => {
    const root = join(pkg.folder, 'deploy', 'chart');
    if (!existsSync(root)) return [];
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'Chart.yaml')))
      .map((d) => ({ pkg, name: d.name, folder: join(root, d.name) }));
  });
}
