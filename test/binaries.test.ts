/**
 * The provisioner binaries (each package's `bin`, built by provisioner-lib's `binaryBundle` and tsup.binary.ts) are
 * one file each, `dist/cli.js`, behind the Node.js version check their `bin` names (`dist/bin/<name>.js`,
 * test/node-version-gate.test.ts): the two copied alone into an empty folder, with no `node_modules` above it, every
 * one of them loads all its code and prints its usage. The images and the manifests run them this way; a dependency
 * left out of the bundle would fail here. What `binaryBundle` (@kprov/provisioner-lib/bundle) does for their memory
 * is checked too: each is pure ASCII, with the license comments of its bundled code in the file it
 * names beside it, and loading it does not load Node.js's internal undici.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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
  if (dir === 'testkit') return [];
  // `file` is the bundle, which the gate imports (`../cli.js`).
  return Object.entries(json.bin ?? {}).map(([name, gate]) => ({
    name,
    gate: join(folder, gate),
    file: join(folder, 'dist/cli.js'),
  }));
});

const scratch = mkdtempSync(join(tmpdir(), 'kprov-binaries-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Preloaded into a binary's process: reports on exit whether Node.js loaded its internal copy of undici. */
const undiciProbe = join(scratch, 'undici-probe.cjs');
writeFileSync(
  undiciProbe,
  "process.on('exit', () => { if (process.moduleLoadList.some((m) => m.includes('internal/deps/undici'))) " +
    "process.stderr.write('\\nINTERNAL UNDICI LOADED\\n'); });\n",
);

describe('provisioner binaries', () => {
  it('are the three the images ship', () => {
    expect(binaries.map((b) => b.name).sort()).toEqual([
      'kprov-hostpath',
      'local-path-provisioner',
      'local-volume-provisioner',
    ]);
  });

  it.each(binaries)('$name runs from its file alone, without node_modules', async ({ name, gate, file }) => {
    const dir = join(scratch, name);
    const copy = join(dir, 'bin', basename(gate));
    mkdirSync(join(dir, 'bin'), { recursive: true });
    copyFileSync(gate, copy);
    copyFileSync(file, join(dir, basename(file)));
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [copy, '--help'], { cwd: dir });
    expect(`${stdout}${stderr}`).toContain(name);
  });

  // `--help` ends before the runtime makes its logger, whose pino the library requires when first used: a run that
  // gets as far as the kubeconfig, from the file alone, loads it from the bundle (all three binaries share that path).
  it('kprov-hostpath runs from its file alone as far as loading its kubeconfig, logging through pino', async () => {
    const hostpath = binaries.find((b) => b.name === 'kprov-hostpath')!;
    const dir = join(scratch, 'hostpath-run');
    mkdirSync(dir, { recursive: true });
    copyFileSync(hostpath.file, join(dir, 'cli.js'));
    const missing = join(dir, 'no-kubeconfig');
    const result = await promisify(execFile)(process.execPath, [join(dir, 'cli.js'), '--kubeconfig', missing], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NODE_NAME: 'node-1' },
    }).then(
      () => ({ code: 0, output: '' }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code,
        output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
      }),
    );
    expect(result.output).not.toContain('Cannot find module');
    expect(result.output).toContain(`cannot load kubeconfig \\"${missing}\\"`);
    expect(result.code).toBe(1);
  });

  // Node.js 24 keeps the source of a module that has a single non-ASCII character as a UTF-16 string: 4.2 MB instead
  // of 2.1 for local-path's, and 2.0 MiB more RSS (binaryBundle).
  it.each(binaries)('$name is pure ASCII', ({ file }) => {
    const code = readFileSync(file, 'utf8');
    const at = code.search(/[\u0080-\uffff]/);
    expect(at === -1 ? '' : code.slice(Math.max(0, at - 80), at + 40)).toBe('');
  });

  it.each(binaries)('$name names the license notices of its bundled code, in a file beside it', ({ file }) => {
    const code = readFileSync(file, 'utf8');
    const named = /\/\*! For license information please see (\S+) \*\//.exec(code);
    expect(named, 'the bundle names no license file (legalComments: linked)').not.toBeNull();
    expect(existsSync(join(dirname(file), named![1]!))).toBe(true);
    // No legal comment is left in the bundle but that one.
    expect(code.match(/\/\*!/g)).toHaveLength(1);
  });

  // client-node's generated models are side-effect free to the bundler (binaryBundle): a binary that calls no
  // generated API carries none of them. hostpath-example uses the library and client-node's KubeConfig only; with
  // every model in it, its bundle was 0.46 MB larger and its process 5 MiB heavier.
  it('hostpath-example carries none of the client-node models it does not use', () => {
    const hostpath = binaries.find((b) => b.name === 'kprov-hostpath');
    expect(hostpath).toBeDefined();
    const code = readFileSync(hostpath!.file, 'utf8');
    for (const model of ['V1CSIDriverSpec', 'V1PodSpec', 'V1Deployment', 'ObjectSerializer'])
      expect(code).not.toContain(model);
  });

  // An ES module import of a built-in reads all its exports, and `node:http`'s `WebSocket` getter then loads Node.js's
  // internal undici, which the binaries never use (1.1 MiB of heap, 1.9 MiB of RSS; binaryBundle).
  it.each(binaries)('$name does not load Node.js internal undici', async ({ gate }) => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--require', undiciProbe, gate, '--help'], {
      cwd: scratch,
    });
    expect(stdout).not.toBe('');
    expect(stderr).not.toContain('INTERNAL UNDICI LOADED');
  });
});
