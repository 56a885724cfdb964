/**
 * The binary, `dist/cli.js`, as a node runs it: the provisioner runs without V8's JIT (it starts again in its own
 * process with `--jitless`), the node-cleanup controller keeps V8's compilers, and `KPROV_V8_FLAGS` replaces the
 * flags of both. A probe loaded before the binary reports which of V8's compilers are on, and whether there is
 * WebAssembly, as the process exits. Without WebAssembly, a kubeconfig with a `proxy-url` (undici) stops it with an
 * error that says what to do. And it starts without Node.js's promise file-system API and readline, which it does
 * not need at rest (bench/README.md, "Where the memory goes at rest").
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'local-static-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs the binary with `args`, a probe preloaded that writes `<name> <JSON>` to stderr as the process exits (`source`:
 * the probe's JSON expression), and returns that JSON parsed and the ID of the process it started.
 */
async function probed(
  name: string,
  source: string,
  args: readonly string[],
  { env = {}, nodeFlags = [] }: { env?: Record<string, string>; nodeFlags?: readonly string[] } = {},
): Promise<{ report: unknown; startedAs: number | undefined }> {
  const probe = join(scratch, `${name}.cjs`);
  writeFileSync(
    probe,
    `process.on('exit', () => process.stderr.write('${name} ' + JSON.stringify(${source}) + '\\n'));\n`,
  );
  const run = promisify(execFile)(process.execPath, [...nodeFlags, '--require', probe, CLI, ...args], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  const { stderr } = await run;
  const line = new RegExp(`^${name} (.*)$`, 'm').exec(stderr);
  expect(line, stderr).not.toBeNull();
  // One process from start to end: the probe's report comes from the process the binary was started as.
  expect(stderr.match(new RegExp(`^${name} `, 'gm')), stderr).toHaveLength(1);
  return { report: JSON.parse(line![1]!), startedAs: run.child.pid };
}

interface Compilers {
  sparkplug: boolean;
  maglev: boolean;
  turbofan: boolean;
  webAssembly: string;
}

// `%Is…Enabled()` are V8's own answers (natives syntax, allowed for the probe only).
async function compilersOf(args: readonly string[], env: Record<string, string> = {}): Promise<Compilers> {
  const { report, startedAs } = await probed(
    'compilers',
    '{ sparkplug: %IsSparkplugEnabled(), maglev: %IsMaglevEnabled(), turbofan: %IsTurbofanEnabled(), ' +
      'webAssembly: typeof WebAssembly, pid: process.pid }',
    args,
    { env, nodeFlags: ['--allow-natives-syntax'] },
  );
  const { pid, ...compilers } = report as Compilers & { pid: number };
  expect(pid).toBe(startedAs);
  return compilers;
}

describe("local-static's V8 flags", () => {
  it('the provisioner runs without JIT, in the process it was started as: no compiler, no WebAssembly', async () => {
    expect(await compilersOf(['--help'])).toEqual({
      sparkplug: false,
      maglev: false,
      turbofan: false,
      webAssembly: 'undefined',
    });
  });

  it('the node-cleanup controller keeps Sparkplug and Maglev (no TurboFan, as every runtime binary)', async () => {
    expect(await compilersOf(['node-cleanup', '--help'])).toEqual({
      sparkplug: true,
      maglev: true,
      turbofan: false,
      webAssembly: 'object',
    });
  });

  it('KPROV_V8_FLAGS replaces them: empty, every compiler is on', async () => {
    expect(await compilersOf(['--help'], { KPROV_V8_FLAGS: '' })).toEqual({
      sparkplug: true,
      maglev: true,
      turbofan: true,
      webAssembly: 'object',
    });
  });

  it('a kubeconfig proxy-url, which needs WebAssembly, stops the provisioner with what to do', async () => {
    const kubeconfig = join(scratch, 'proxied.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: 'https://127.0.0.1:1',
              'proxy-url': 'http://127.0.0.1:1',
              'insecure-skip-tls-verify': true,
            },
          },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const config = join(scratch, 'proxied-config');
    mkdirSync(config, { recursive: true });
    writeFileSync(join(config, 'storageClassMap'), `local-storage:\n  hostDir: /mnt/disks\n  mountDir: ${scratch}\n`);
    const failed = await promisify(execFile)(
      process.execPath,
      [CLI, '--kubeconfig', kubeconfig, '--config-dir', config],
      {
        cwd: scratch,
        env: { PATH: process.env.PATH ?? '', MY_NODE_NAME: 'node-1', MY_NAMESPACE: 'default' },
      },
    ).then(
      () => undefined,
      (err: unknown) => err as { code: number; stderr: string; stdout: string },
    );
    expect(failed?.code).toBe(1);
    const output = `${failed?.stdout ?? ''}${failed?.stderr ?? ''}`;
    expect(output).toContain('proxy-url');
    expect(output).toContain('start Node.js without --jitless, or set KPROV_V8_FLAGS');
  });
});

describe('local-static as it starts', () => {
  it("loads neither Node.js's node:fs/promises nor its readline", async () => {
    // Which of the two built-in modules the process loaded, from Node.js's own list.
    const { report: loaded } = await probed(
      'modules',
      "['fs/promises', 'internal/readline/interface'].filter((m) => process.moduleLoadList.includes('NativeModule ' + m))",
      ['--help'],
    );
    expect(loaded).toEqual([]);
  });
});
