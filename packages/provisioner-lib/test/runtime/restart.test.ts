/**
 * `restartWithV8Flags`: a binary's entry (`program/restarted.mjs`) starts again in its own process with `--jitless`,
 * keeping its process ID, arguments and environment, once; and not at all where the flag is given already,
 * `KPROV_V8_FLAGS` is set, or the entry is TypeScript (which Node.js cannot run without WebAssembly).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Program } from '../support/program.js';

const SCRIPT = fileURLToPath(new URL('program/restarted.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'restart-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const ARGS = ['start', '--flag=a b', ''];

interface Report {
  pid: number;
  execArgv: string[];
  args: string[];
  webAssembly: string;
  marker: string | null;
  setInside?: string[];
}

describe('a binary that restarts with V8 flags given at start', () => {
  const programs: Program[] = [];
  afterEach(async () => {
    for (const p of programs.splice(0)) await p.dispose();
  });

  async function run(
    env: NodeJS.ProcessEnv,
    script = SCRIPT,
  ): Promise<{ report: Report; program: Program; entryRuns: number }> {
    const program = new Program(script, ARGS, { PATH: process.env.PATH ?? '', RESTART_MARKER: 'kept', ...env });
    programs.push(program);
    const exit = await program.exited;
    expect(exit, program.stderrText).toEqual({ code: 0, signal: null });
    expect(program.lines).toHaveLength(1);
    const entryRuns = program.stderrText.split('\n').filter((l) => l === 'entry ran').length;
    return { report: program.lines[0] as unknown as Report, program, entryRuns };
  }

  it('starts again in the same process with --jitless: no WebAssembly, its arguments and environment kept', async () => {
    const { report, program, entryRuns } = await run({});
    expect(report).toEqual({
      pid: program.pid,
      execArgv: ['--jitless'],
      args: ARGS,
      webAssembly: 'undefined',
      marker: 'kept',
    });
    expect(entryRuns).toBe(2);
  });

  it('runs once, as started, when KPROV_V8_FLAGS is set, even empty', async () => {
    for (const flags of ['', '--optimize-for-size']) {
      const { report, entryRuns } = await run({ KPROV_V8_FLAGS: flags });
      expect(report).toMatchObject({ execArgv: [], args: ARGS, webAssembly: 'object' });
      expect(entryRuns).toBe(1);
    }
  });

  it('runs once when Node.js was given the flag already (NODE_OPTIONS)', async () => {
    const { report, entryRuns } = await run({ NODE_OPTIONS: '--jitless' });
    expect(report).toMatchObject({ execArgv: [], args: ARGS, webAssembly: 'undefined' });
    expect(entryRuns).toBe(1);
  });

  it('runs once, with WebAssembly, when its entry is TypeScript', async () => {
    const entry = join(scratch, 'entry.ts');
    writeFileSync(entry, `import ${JSON.stringify(SCRIPT)};\nexport const typed: number = 1;\n`);
    const { report, entryRuns } = await run({}, entry);
    expect(report).toMatchObject({ execArgv: [], args: ARGS, webAssembly: 'object' });
    expect(entryRuns).toBe(1);
  });

  describe('restartWithoutJit', () => {
    const WITHOUT_JIT = { RESTART_WITH: 'without-jit' };

    it('starts again with --jitless and sets nothing from inside', async () => {
      const { report, program, entryRuns } = await run(WITHOUT_JIT);
      expect(report).toMatchObject({ pid: program.pid, execArgv: ['--jitless'], args: ARGS, webAssembly: 'undefined' });
      expect(report.setInside).toEqual([]);
      expect(entryRuns).toBe(2);
    });

    it('turns Sparkplug and Maglev off from inside where it cannot start again (a TypeScript entry)', async () => {
      const entry = join(scratch, 'without-jit.ts');
      writeFileSync(entry, `import ${JSON.stringify(SCRIPT)};\nexport const typed: number = 1;\n`);
      const { report, entryRuns } = await run(WITHOUT_JIT, entry);
      expect(report).toMatchObject({ execArgv: [], webAssembly: 'object' });
      expect(report.setInside).toEqual(['--no-sparkplug', '--no-maglev']);
      expect(entryRuns).toBe(1);
    });

    it('does nothing when KPROV_V8_FLAGS is set', async () => {
      const { report, entryRuns } = await run({ ...WITHOUT_JIT, KPROV_V8_FLAGS: '' });
      expect(report).toMatchObject({ execArgv: [], webAssembly: 'object' });
      expect(report.setInside).toEqual([]);
      expect(entryRuns).toBe(1);
    });
  });
});
