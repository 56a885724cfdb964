/**
 * Every binary (each package's `bin`, a gate built from node-version-gate.ts) run by a Node.js older than the
 * packages' `engines.node` says so in one line and exits 1, before it loads the program, which such a Node.js cannot
 * run (Node.js 20 printed a screenful of bundled undici source). The old Node.js is `$KPROV_OLD_NODE` when it is set,
 * else the first of `/usr/bin/node` and `/usr/local/bin/node` that is older than the minimum (Debian bookworm's is
 * 20); without one the cases are skipped with one line saying so. .ci/smoke.js runs the same binaries on the minimum
 * itself.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface PackageJson {
  engines?: { node?: string };
  bin?: Record<string, string>;
}

const readJson = (file: string): PackageJson => JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
const MIN = (readJson(join(ROOT, 'package.json')).engines?.node ?? '').replace(/^>=/, '');

const binaries = readdirSync(join(ROOT, 'packages')).flatMap((dir) => {
  const folder = join(ROOT, 'packages', dir);
  return Object.entries(readJson(join(folder, 'package.json')).bin ?? {}).map(([name, file]) => ({
    name,
    file: join(folder, file),
  }));
});

/** `v20.19.2` → [20, 19, 2]. */
const parse = (version: string): number[] => version.trim().replace(/^v/, '').split('.').map(Number);

function olderThan(version: string, min: string): boolean {
  const [a, b] = [parse(version), parse(min)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** The first old Node.js there is: its path and version, or undefined. */
function findOldNode(): { path: string; version: string } | undefined {
  const named = process.env.KPROV_OLD_NODE;
  const candidates = named !== undefined && named !== '' ? [named] : ['/usr/bin/node', '/usr/local/bin/node'];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    let version: string;
    try {
      version = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
    } catch {
      continue;
    }
    if (olderThan(version, MIN)) return { path, version };
  }
  return undefined;
}

const oldNode = findOldNode();

/** A deadline for one binary's runs: each starts a Node.js, which takes seconds on a busy machine. */
const RUN_DEADLINE_MS = 60_000;
/** A test's: its runs, one after another. */
const TEST_DEADLINE_MS = 4 * RUN_DEADLINE_MS;

describe(`the binaries on a Node.js older than ${MIN}`, () => {
  it('are the four the packages declare', () => {
    expect(binaries.map((b) => b.name).sort()).toEqual([
      'kprov-hostpath',
      'kprov-testkit',
      'local-path-provisioner',
      'local-volume-provisioner',
    ]);
  });

  it.for(binaries)(
    '$name prints one line naming the versions and exits 1',
    { timeout: TEST_DEADLINE_MS },
    ({ name, file }, ctx) => {
      if (oldNode === undefined) {
        ctx.skip(`no Node.js older than ${MIN} found (set KPROV_OLD_NODE to one)`);
        return;
      }
      for (const args of [['--version'], ['--help'], []]) {
        const run = spawnSync(oldNode.path, [file, ...args], { encoding: 'utf8', timeout: RUN_DEADLINE_MS });
        expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
          status: 1,
          stdout: '',
          stderr: `${name} needs Node.js >= ${MIN} (this is ${oldNode.version}); install a newer Node.js\n`,
        });
      }
    },
  );

  // The gate lets a supported Node.js through to the program, with the arguments as given.
  it.each(binaries)(
    '$name runs its program on this Node.js',
    ({ name, file }) => {
      const run = spawnSync(process.execPath, [file, '--help'], { encoding: 'utf8', timeout: RUN_DEADLINE_MS });
      expect(run.status, run.stderr).toBe(0);
      expect(`${run.stdout}${run.stderr}`).toContain(name);
    },
    TEST_DEADLINE_MS,
  );
});
