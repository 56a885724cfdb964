/**
 * The binary, `dist/cli.js`, as a node runs it: the provisioner's JavaScript runs in V8's interpreter only (its V8
 * flags beside the runtime's, set as it starts), the node-cleanup controller's keeps V8's compilers, and
 * `KPROV_V8_FLAGS` replaces the flags of both. A probe loaded before the binary reports which of V8's compilers are
 * on as the process exits. And it starts without Node.js's promise file-system API and readline, which it does not
 * need at rest (bench/README.md, "Where the memory goes at rest").
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
 * the probe's JSON expression), and returns that JSON parsed.
 */
async function probed(
  name: string,
  source: string,
  args: readonly string[],
  { env = {}, nodeFlags = [] }: { env?: Record<string, string>; nodeFlags?: readonly string[] } = {},
): Promise<unknown> {
  const probe = join(scratch, `${name}.cjs`);
  writeFileSync(
    probe,
    `process.on('exit', () => process.stderr.write('${name} ' + JSON.stringify(${source}) + '\\n'));\n`,
  );
  const { stderr } = await promisify(execFile)(process.execPath, [...nodeFlags, '--require', probe, CLI, ...args], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  const line = new RegExp(`^${name} (.*)$`, 'm').exec(stderr);
  expect(line, stderr).not.toBeNull();
  return JSON.parse(line![1]!);
}

interface Compilers {
  sparkplug: boolean;
  maglev: boolean;
  turbofan: boolean;
}

// `%Is…Enabled()` are V8's own answers (natives syntax, allowed for the probe only).
async function compilersOf(args: readonly string[], env: Record<string, string> = {}): Promise<Compilers> {
  return (await probed(
    'compilers',
    '{ sparkplug: %IsSparkplugEnabled(), maglev: %IsMaglevEnabled(), turbofan: %IsTurbofanEnabled() }',
    args,
    { env, nodeFlags: ['--allow-natives-syntax'] },
  )) as Compilers;
}

describe("local-static's V8 flags", () => {
  it("the provisioner runs in V8's interpreter only: no Sparkplug, Maglev or TurboFan", async () => {
    expect(await compilersOf(['--help'])).toEqual({ sparkplug: false, maglev: false, turbofan: false });
  });

  it('the node-cleanup controller keeps Sparkplug and Maglev (no TurboFan, as every runtime binary)', async () => {
    expect(await compilersOf(['node-cleanup', '--help'])).toEqual({ sparkplug: true, maglev: true, turbofan: false });
  });

  it('KPROV_V8_FLAGS replaces them: empty, every compiler is on', async () => {
    expect(await compilersOf(['--help'], { KPROV_V8_FLAGS: '' })).toEqual({
      sparkplug: true,
      maglev: true,
      turbofan: true,
    });
  });
});

describe('local-static as it starts', () => {
  it("loads neither Node.js's node:fs/promises nor its readline", async () => {
    // Which of the two built-in modules the process loaded, from Node.js's own list.
    const loaded = await probed(
      'modules',
      "['fs/promises', 'internal/readline/interface'].filter((m) => process.moduleLoadList.includes('NativeModule ' + m))",
      ['--help'],
    );
    expect(loaded).toEqual([]);
  });
});
