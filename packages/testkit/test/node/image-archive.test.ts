/**
 * `imageArchiveProblem`: the one line a node-tier suite is skipped with when `images/` cannot give its nodes the image
 * its manifests run; archives written as `tar` writes an OCI layout's `index.json`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imageArchiveProblem, imageArchiveRefs } from '../../src/node/image-archive.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'image-archive-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const IMAGE = 'ghcr.io/kprov/local-static:0.2.8';

/** An archive `<name>.oci.tar` whose index.json is `index` (any JSON text). */
function archive(name: string, index: string): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'index.json'), index);
  writeFileSync(path.join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const file = path.join(scratch, `${name}.oci.tar`);
  execFileSync('tar', ['-cf', file, '-C', dir, 'oci-layout', 'index.json']);
  return file;
}

const naming = (...refs: string[]): string =>
  JSON.stringify({
    schemaVersion: 2,
    manifests: refs.map((ref) => ({
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      digest: 'sha256:0',
      size: 1,
      annotations: { 'org.opencontainers.image.ref.name': ref },
    })),
  });

describe('imageArchiveProblem', () => {
  it('has none when the archive names the image', () => {
    const file = archive('current', naming(IMAGE));
    expect(imageArchiveRefs(file)).toEqual([IMAGE]);
    expect(imageArchiveProblem(file, IMAGE)).toBeUndefined();
  });

  it.each([
    ['missing', undefined, 'images/ has no missing.oci.tar: `pnpm images` builds them'],
    [
      'older',
      naming('ghcr.io/kprov/local-static:0.2.7'),
      `images/older.oci.tar holds ghcr.io/kprov/local-static:0.2.7, not ${IMAGE}: \`pnpm images\` builds it again`,
    ],
    ['unnamed', JSON.stringify({ schemaVersion: 2, manifests: [{ digest: 'sha256:0' }] }), 'names no image'],
    ['garbled', '{ not json', 'images/garbled.oci.tar cannot be read ('],
    ['no-index', JSON.stringify({ schemaVersion: 2 }), 'index.json has no manifests'],
  ])('%s archive: says so and what to run', (name, index, expected) => {
    const file = index === undefined ? path.join(scratch, `${name}.oci.tar`) : archive(name, index);
    const problem = imageArchiveProblem(file, IMAGE);
    expect(problem).toContain(expected);
    expect(problem).toContain('`pnpm images` builds');
  });
});
