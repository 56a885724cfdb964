/**
 * Real mounts for the tests (we may run as root: tmpfs, loop devices), or, where mounting is not permitted, a
 * mount-table fixture listing the directories a test "mounts". Every mount is undone by the test's clean-up.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

function tryExec(file: string, args: string[]): boolean {
  try {
    execFileSync(file, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether this process may mount a tmpfs (probed once). */
export const CAN_MOUNT: boolean = (() => {
  if (process.platform !== 'linux') return false;
  const dir = mkdtempSync(path.join(tmpdir(), 'kprov-mount-probe-'));
  try {
    if (!tryExec('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir])) return false;
    tryExec('umount', [dir]);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** Whether loop devices can be attached (probed once; needs {@link CAN_MOUNT}). */
export const CAN_LOOP: boolean = (() => {
  if (!CAN_MOUNT) return false;
  const dir = mkdtempSync(path.join(tmpdir(), 'kprov-loop-probe-'));
  const image = path.join(dir, 'probe.img');
  try {
    writeFileSync(image, Buffer.alloc(1 << 20));
    const device = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
    tryExec('losetup', ['-d', device]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** Why block device tests are skipped, or undefined when they run. */
export const NO_LOOP_REASON = CAN_LOOP
  ? undefined
  : 'loop devices cannot be attached here (not root, or no /dev/loop*)';

/**
 * The mounts of one test. With {@link CAN_MOUNT}, `mount(dir)` mounts a fresh tmpfs there and the provisioner reads
 * the real `/proc/self/mountinfo`; otherwise the directory is listed in a fixture file ({@link Mounts.mountInfoPath})
 * that the provisioner is given instead.
 */
export class Mounts {
  /** The mount table the provisioner should read. */
  readonly mountInfoPath: string;
  private readonly fixtureDir: string;
  private readonly mounted: string[] = [];
  private readonly listed = new Set<string>();
  private readonly loops: string[] = [];

  constructor() {
    this.fixtureDir = mkdtempSync(path.join(tmpdir(), 'kprov-mounts-'));
    this.mountInfoPath = CAN_MOUNT ? '/proc/self/mountinfo' : path.join(this.fixtureDir, 'mountinfo');
    this.writeFixture();
  }

  private writeFixture(): void {
    if (CAN_MOUNT) return;
    const lines = [...this.listed].map(
      (p, i) => `${100 + i} 1 0:${50 + i} / ${p.replaceAll(' ', '\\040')} rw,relatime - tmpfs tmpfs rw`,
    );
    writeFileSync(path.join(this.fixtureDir, 'mountinfo'), `${lines.join('\n')}\n`);
  }

  /** Makes `dir` a mount point (a tmpfs of `sizeMiB`, or a fixture entry). */
  mount(dir: string, sizeMiB = 16): void {
    mkdirSync(dir, { recursive: true });
    if (CAN_MOUNT) {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
      this.mounted.push(dir);
    } else {
      this.listed.add(dir);
      this.writeFixture();
    }
  }

  /** Bind-mounts `source` onto `target` (made if missing). Needs {@link CAN_MOUNT}. */
  bind(source: string, target: string): void {
    mkdirSync(target, { recursive: true });
    execFileSync('mount', ['--bind', source, target]);
    this.mounted.push(target);
  }

  /** Undoes {@link mount}. */
  unmount(dir: string): void {
    if (CAN_MOUNT) {
      execFileSync('umount', [dir]);
      const i = this.mounted.lastIndexOf(dir);
      if (i >= 0) this.mounted.splice(i, 1);
    } else {
      this.listed.delete(dir);
      this.writeFixture();
    }
  }

  /** A loop device over a new zeroed image of `sizeMiB`; detached by {@link cleanup}. Needs {@link CAN_LOOP}. */
  loopDevice(sizeMiB = 8): string {
    const image = path.join(this.fixtureDir, `disk-${this.loops.length}.img`);
    writeFileSync(image, Buffer.alloc(sizeMiB << 20));
    const device = execFileSync('losetup', ['-f', '--show', image], { encoding: 'utf8' }).trim();
    this.loops.push(device);
    return device;
  }

  /** Unmounts everything (latest first), detaches the loop devices and removes the fixture. */
  cleanup(): void {
    for (const dir of [...this.mounted].reverse()) tryExec('umount', ['-l', dir]);
    this.mounted.length = 0;
    for (const device of this.loops) tryExec('losetup', ['-d', device]);
    this.loops.length = 0;
    rmSync(this.fixtureDir, { recursive: true, force: true });
  }
}
