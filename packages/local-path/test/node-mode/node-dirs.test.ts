/** The in-process setup and teardown of node mode, on a temporary folder standing for a node's root. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVolumeDir, removeVolumeDir, VolumeDirRefusedError } from '../../src/executor/node/node-dirs.js';

const BASE = '/opt/local-path-provisioner';
let root: string;
const host = (p: string): string => path.join(root, p);

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'node-dirs-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('createVolumeDir', () => {
  it('creates the base path and the volume directory with mode 0777, whatever the umask', async () => {
    const old = process.umask(0o077);
    try {
      await createVolumeDir(root, BASE, `${BASE}/pvc-1_default_data`);
    } finally {
      process.umask(old);
    }
    expect(statSync(host(`${BASE}/pvc-1_default_data`)).mode & 0o777).toBe(0o777);
    // Again: nothing to do.
    await createVolumeDir(root, BASE, `${BASE}/pvc-1_default_data`);
  });

  it('creates nested folders of a path pattern', async () => {
    await createVolumeDir(root, BASE, `${BASE}/default/data/pvc-1`);
    expect(statSync(host(`${BASE}/default/data/pvc-1`)).isDirectory()).toBe(true);
  });

  it('accepts a base path that is itself a symbolic link', async () => {
    mkdirSync(host('/disk'), { recursive: true });
    mkdirSync(host('/opt'), { recursive: true });
    symlinkSync(host('/disk'), host(BASE));
    await createVolumeDir(root, BASE, `${BASE}/pvc-1`);
    expect(existsSync(host('/disk/pvc-1'))).toBe(true);
  });

  it('refuses a path through a symbolic link below the base path', async () => {
    mkdirSync(host(BASE), { recursive: true });
    mkdirSync(host('/elsewhere'));
    symlinkSync(host('/elsewhere'), host(`${BASE}/default`));
    await expect(createVolumeDir(root, BASE, `${BASE}/default/data/pvc-1`)).rejects.toThrow(VolumeDirRefusedError);
    expect(existsSync(host('/elsewhere/data'))).toBe(false);
  });

  it('refuses a path outside the base path', async () => {
    await expect(createVolumeDir(root, BASE, '/etc/x')).rejects.toThrow('is not below');
    await expect(createVolumeDir(root, BASE, BASE)).rejects.toThrow('is not below');
  });
});

describe('removeVolumeDir', () => {
  it('removes the directory and its content; a missing one is fine', async () => {
    await createVolumeDir(root, BASE, `${BASE}/pvc-1`);
    writeFileSync(host(`${BASE}/pvc-1/file`), 'x');
    await removeVolumeDir(root, BASE, `${BASE}/pvc-1`);
    expect(existsSync(host(`${BASE}/pvc-1`))).toBe(false);
    expect(existsSync(host(BASE))).toBe(true);
    await removeVolumeDir(root, BASE, `${BASE}/pvc-1`);
  });

  it('refuses a volume directory that is a symbolic link, and keeps its target', async () => {
    mkdirSync(host(BASE), { recursive: true });
    mkdirSync(host('/precious'));
    writeFileSync(host('/precious/file'), 'x');
    symlinkSync(host('/precious'), host(`${BASE}/pvc-1`));
    await expect(removeVolumeDir(root, BASE, `${BASE}/pvc-1`)).rejects.toThrow(VolumeDirRefusedError);
    expect(existsSync(host('/precious/file'))).toBe(true);
  });

  it('refuses a path through a symbolic link below the base path', async () => {
    mkdirSync(host(BASE), { recursive: true });
    mkdirSync(host('/precious/data'), { recursive: true });
    symlinkSync(host('/precious'), host(`${BASE}/default`));
    await expect(removeVolumeDir(root, BASE, `${BASE}/default/data`)).rejects.toThrow(VolumeDirRefusedError);
    expect(existsSync(host('/precious/data'))).toBe(true);
  });
});
