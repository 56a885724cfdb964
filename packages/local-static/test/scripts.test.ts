/**
 * The cleaner scripts the image ships at /scripts (the reference's script test): each block cleaner leaves a 4 MiB
 * ext4 loop device without a filesystem signature; fsclean empties a tree of 100 files and keeps the directory; all
 * refuse to run without their variable.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CAN_LOOP, Mounts, NO_LOOP_REASON } from './mounts.js';

const SCRIPTS = fileURLToPath(new URL('../src/scripts/', import.meta.url));

function run(script: string, args: string[], env: Record<string, string>): { status: number | null; output: string } {
  const r = spawnSync(path.join(SCRIPTS, script), args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('cleaner scripts', () => {
  const mounts = new Mounts();
  afterAll(() => mounts.cleanup());

  it.skipIf(!CAN_LOOP)(`wipe a block device (${NO_LOOP_REASON ?? 'loop devices available'})`, () => {
    for (const [script, args] of [
      ['quick_reset.sh', []],
      ['shred.sh', ['1']],
      ['dd_zero.sh', []],
      ['blkdiscard.sh', []],
    ] as const) {
      const device = mounts.loopDevice(4);
      execFileSync('mkfs.ext4', ['-q', '-F', device]);
      const r = run(script, [...args], { LOCAL_PV_BLKDEVICE: device });
      expect(r, r.output).toMatchObject({ status: 0 });
      // blkid -p exits 2 when it finds no signature.
      expect(spawnSync('blkid', ['-p', device]).status, script).toBe(2);
    }
  });

  it('empty a directory with fsclean, keeping it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kprov-fsclean-'));
    try {
      for (let i = 0; i < 100; i++) {
        mkdirSync(path.join(dir, `d${i % 10}`), { recursive: true });
        writeFileSync(path.join(dir, `d${i % 10}`, `f${i}`), 'x');
      }
      writeFileSync(path.join(dir, '.hidden'), 'x');
      expect(run('fsclean.sh', [], { LOCAL_PV_FILESYSTEM: dir }).status).toBe(0);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse to run without their variable, or on something else', () => {
    for (const script of ['quick_reset.sh', 'shred.sh', 'dd_zero.sh', 'blkdiscard.sh']) {
      expect(run(script, [], {})).toMatchObject({ status: 1, output: 'LOCAL_PV_BLKDEVICE is not set\n' });
      expect(run(script, [], { LOCAL_PV_BLKDEVICE: '/etc/hostname' })).toMatchObject({
        status: 1,
        output: '/etc/hostname is not a block device\n',
      });
    }
    expect(run('fsclean.sh', [], {}).status).toBe(1);
  });
});
