/**
 * The provisioner binaries (each package's `bin`, built by tsup.binary.ts) are one file each: copied alone into an
 * empty folder, with no `node_modules` above it, every one of them loads all its code and prints its usage. The images
 * and the manifests run them this way; a dependency left out of the bundle would fail here.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const binaries = readdirSync(join(ROOT, 'packages')).flatMap((dir) => {
  const folder = join(ROOT, 'packages', dir);
  const json = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
    private?: boolean;
    bin?: Record<string, string>;
  };
  if (json.private === true || dir === 'testkit') return [];
  return Object.entries(json.bin ?? {}).map(([name, file]) => ({ name, file: join(folder, file) }));
});

const scratch = mkdtempSync(join(tmpdir(), 'kprov-binaries-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('provisioner binaries', () => {
  it('are the three the images ship', () => {
    expect(binaries.map((b) => b.name).sort()).toEqual([
      'kprov-hostpath',
      'local-path-provisioner',
      'local-volume-provisioner',
    ]);
  });

  it.each(binaries)('$name runs from its file alone, without node_modules', async ({ name, file }) => {
    const dir = join(scratch, name);
    const copy = join(dir, basename(file));
    mkdirSync(dir);
    copyFileSync(file, copy);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [copy, '--help'], { cwd: dir });
    expect(`${stdout}${stderr}`).toContain(name);
  });
});
