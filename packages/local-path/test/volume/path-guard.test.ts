/**
 * The guard against a volume path through a symbolic link, in both its forms on the same cases and a temporary
 * folder: the helper pod's sh prologue (run by this machine's /bin/sh and, when installed, by busybox sh, the default
 * helper image's shell) and node mode's in-process walk. Both must give the same answer and the same message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  guardedCommand,
  guardVolumePath,
  PATH_GUARD_SCRIPT,
  VolumeDirRefusedError,
} from '../../src/volume/path-guard.js';

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find((p) => existsSync(p));
/** The shells the prologue is run by. */
const SHELLS: [string, string[]][] = [
  ['/bin/sh', ['/bin/sh']],
  ...(BUSYBOX === undefined ? [] : ([['busybox sh', [BUSYBOX, 'sh']]] as [string, string[]][])),
];

let root: string;
let base: string;
let outside: string;
/** A file the wrapped command creates: whether it ran. */
let marker: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'path-guard-'));
  base = path.join(root, 'opt/local-path-provisioner');
  outside = path.join(root, 'etc');
  marker = path.join(root, 'ran');
  mkdirSync(base, { recursive: true });
  mkdirSync(outside);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The outcome of one form of the guard: `ok`, or the refusal's message. */
type Outcome = { ok: true } | { ok: false; message: string };

/** Runs the prologue with `shell`, wrapping `command` (default: touch the marker, as the user's script). */
function runPrologue(
  shell: string[],
  action: 'create' | 'delete',
  dir: string,
  command: string[] = ['/bin/sh', '-c', 'mkdir -m 0777 -p "$VOL_DIR" && touch "$0"', marker],
): Outcome {
  const [, ...rest] = guardedCommand(action, command);
  const [file = '', ...args] = [...shell, ...rest];
  const run = spawnSync(file, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', VOL_DIR: dir, VOL_BASE: base },
    encoding: 'utf8',
  });
  if (run.status === 0) return { ok: true };
  return { ok: false, message: run.stderr.trim() };
}

/** Runs the in-process walk (making parents for create, as setup does). */
async function runWalk(action: 'create' | 'delete', dir: string): Promise<Outcome> {
  try {
    await guardVolumePath({ hostRoot: '', base, dir, make: action === 'create' });
    return { ok: true };
  } catch (err) {
    if (!(err instanceof VolumeDirRefusedError)) throw err;
    return { ok: false, message: err.message };
  }
}

/** Each case: what to plant below the base path, the action and path, and what the guard must say. */
const CASES: {
  name: string;
  plant: () => void;
  action: 'create' | 'delete';
  dir: () => string;
  refused?: (dir: string) => string[];
}[] = [
  {
    name: 'a new path of a pathPattern (missing parents)',
    plant: () => undefined,
    action: 'create',
    dir: () => `${base}/default/data/pvc-1`,
  },
  {
    name: 'a retained directory reused as it is',
    plant: () => mkdirSync(`${base}/default/data`, { recursive: true }),
    action: 'create',
    dir: () => `${base}/default/data`,
  },
  {
    name: 'a base path that is itself a symbolic link',
    plant: () => {
      const disk = path.join(root, 'disk');
      mkdirSync(disk);
      rmSync(base, { recursive: true });
      symlinkSync(disk, base);
    },
    action: 'create',
    dir: () => `${base}/pvc-1_default_data`,
  },
  {
    name: 'a retained directory replaced by a symbolic link to outside',
    plant: () => {
      mkdirSync(`${base}/default`);
      symlinkSync(outside, `${base}/default/data`);
    },
    action: 'create',
    dir: () => `${base}/default/data`,
    refused: () => [
      `${base}/default/data is a symbolic link (to ${outside}); a volume path may not run through a symbolic link below its base path ${base},`,
      'remove the link on the node, then the operation is retried',
    ],
  },
  {
    name: 'a link planted inside a retained volume, on the way',
    plant: () => {
      mkdirSync(`${base}/default/data`, { recursive: true });
      symlinkSync(outside, `${base}/default/data/evil`);
    },
    action: 'create',
    dir: () => `${base}/default/data/evil/pvc-2`,
    refused: () => [`${base}/default/data/evil is a symbolic link (to ${outside})`],
  },
  {
    name: 'a file on the way',
    plant: () => writeFileSync(`${base}/default`, ''),
    action: 'create',
    dir: () => `${base}/default/data`,
    refused: () => [`${base}/default is not a directory; every component of a volume path below its base path ${base}`],
  },
  {
    name: 'a path outside the base path',
    plant: () => undefined,
    action: 'create',
    dir: () => `${outside}/x`,
    refused: (dir) => [`refusing ${dir}: it is not below the base path ${base}`],
  },
  {
    name: 'a .. component',
    plant: () => undefined,
    action: 'create',
    dir: () => `${base}/../etc`,
    refused: () => ['has an empty, . or .. component'],
  },
  {
    name: 'a teardown of an existing directory',
    plant: () => mkdirSync(`${base}/default/data`, { recursive: true }),
    action: 'delete',
    dir: () => `${base}/default/data`,
  },
  {
    name: 'a teardown of a directory already gone',
    plant: () => undefined,
    action: 'delete',
    dir: () => `${base}/default/data`,
  },
  {
    name: 'a teardown whose parent was replaced by a link to outside',
    plant: () => {
      mkdirSync(`${outside}/data`);
      symlinkSync(outside, `${base}/default`);
    },
    action: 'delete',
    dir: () => `${base}/default/data`,
    refused: () => [`${base}/default is a symbolic link (to ${outside})`],
  },
  {
    name: 'a teardown of a volume directory replaced by a link',
    plant: () => {
      mkdirSync(`${base}/default`);
      symlinkSync(outside, `${base}/default/data`);
    },
    action: 'delete',
    dir: () => `${base}/default/data`,
    refused: () => [`${base}/default/data is a symbolic link (to ${outside})`],
  },
];

describe('the volume path guard', () => {
  describe.each(CASES)('on $name', (c) => {
    it.each(SHELLS)('the prologue run by %s refuses it or runs the command', (_name, shell) => {
      c.plant();
      const dir = c.dir();
      const outcome = runPrologue(shell, c.action, dir);
      if (c.refused === undefined) {
        expect(outcome).toEqual({ ok: true });
        expect(existsSync(marker)).toBe(true);
      } else {
        expect(outcome.ok).toBe(false);
        const message = outcome.ok ? '' : outcome.message;
        expect(message.startsWith(`refusing ${dir}: `)).toBe(true);
        for (const part of c.refused(dir)) expect(message).toContain(part);
        // The command never ran, and nothing was made outside the base path.
        expect(existsSync(marker)).toBe(false);
        expect(readdirSync(outside).filter((n) => n !== 'data')).toEqual([]);
      }
    });

    it('the in-process walk gives the same answer and message as the prologue', async () => {
      c.plant();
      const dir = c.dir();
      const walked = await runWalk(c.action, dir);
      rmSync(marker, { force: true });
      expect(walked).toEqual(runPrologue(['/bin/sh'], c.action, dir));
    });
  });

  it('makes the missing parents of a new volume directory, with the mode mkdir -p gives them, but not the directory', async () => {
    const old = process.umask(0o022);
    try {
      await guardVolumePath({ hostRoot: '', base, dir: `${base}/default/data/pvc-1`, make: true });
    } finally {
      process.umask(old);
    }
    expect(statSync(`${base}/default/data`).mode & 0o777).toBe(0o755);
    expect(existsSync(`${base}/default/data/pvc-1`)).toBe(false);
  });

  it.each(SHELLS)(
    'run by %s, walks the path again after setup: a component swapped for a link meanwhile fails the setup',
    (_name, shell) => {
      const dir = `${base}/default/data`;
      // A setup during which the parent is swapped for a link (what a racing pod could do).
      const outcome = runPrologue(shell, 'create', dir, [
        '/bin/sh',
        '-c',
        'mkdir -p "$VOL_DIR" && mv "$VOL_BASE/default" "$VOL_BASE/moved" && ln -s "$0" "$VOL_BASE/default"',
        outside,
      ]);
      expect(outcome).toEqual({
        ok: false,
        message: expect.stringContaining(`${base}/default is a symbolic link (to ${outside})`) as unknown,
      });
    },
  );

  it('names node paths when the node is mounted below a host root', async () => {
    const node = '/opt/local-path-provisioner';
    mkdirSync(path.join(root, node, 'default'), { recursive: true });
    symlinkSync('/etc', path.join(root, node, 'default/data'));
    await expect(guardVolumePath({ hostRoot: root, base: node, dir: `${node}/default/data/x` })).rejects.toThrow(
      `refusing ${node}/default/data/x: ${node}/default/data is a symbolic link (to /etc); a volume path may not run through a symbolic link below its base path ${node},`,
    );
  });

  it('is a command the kubelet passes on unchanged: no $$ and no $(NAME) of a variable', () => {
    expect(PATH_GUARD_SCRIPT).not.toContain('$$');
    expect(PATH_GUARD_SCRIPT).not.toMatch(/\$\([A-Za-z_][A-Za-z0-9_]*\)/);
  });
});
