/**
 * The guard against a volume path that runs through a symbolic link below its base path, whatever the `setup` and
 * `teardown` scripts of the ConfigMap are: a link left in a retained volume (by a pod using it) would otherwise send
 * a new volume, or a teardown's `rm -rf`, outside the base path. One idea in two forms, which give the same answers
 * and the same messages (test/volume/path-guard.test.ts runs both on the same cases):
 *
 * - {@link PATH_GUARD_SCRIPT}, the helper pod's command ({@link guardedCommand}): a POSIX sh prologue (busybox sh is
 *   the default helper image's shell) that checks the path, then runs the script or command it wraps;
 * - {@link guardVolumePath}, node mode's check in-process, before the built-in behaviour or a script runs.
 *
 * The walk: every component of the volume path below the base path must be a directory and not a symbolic link (the
 * base path itself may be a link: it is the administrator's, and a helper pod's hostPath mount of it resolves it).
 * For setup, missing components above the volume directory are made one at a time (`mkdir`, then checked again, so a
 * link raced into place is seen) and the walk runs again once the setup finished. The walk ends at the first
 * component that does not exist (nothing below it does).
 *
 * It cannot close the window between its check and the script's own `mkdir`/`rm` (or the kubelet's mount of the
 * volume later): whoever can write in a directory of the path at that moment can still swap a component for a link.
 * Only a pod whose own volume is a parent of the new path can, which a safe `pathPattern` makes impossible for
 * another claim (see docs/local-path.md, Security model).
 *
 * Hand-written (no library checks a path component by component without following links, in sh or in Node.js).
 *
 * @module
 */
import { lstat, mkdir, readlink } from 'node:fs/promises';
import path from 'node:path';

/** A volume path refused by the guard; the message names the component and what to do. */
export class VolumeDirRefusedError extends Error {
  override readonly name = 'VolumeDirRefusedError';
}

/** What a refusal message is made of: plain text, or text in the sh prologue (variables and substitutions). */
interface RefusalParts {
  /** The volume path. */
  readonly dir: string;
  /** The component at fault. */
  readonly component: string;
  /** The base path. */
  readonly base: string;
}

/**
 * `refusing <dir>: <component> is a symbolic link (to <target>); ...`. The fixed words hold no `"`, `$`, `` ` `` or
 * `\`, so that the message can stand inside the prologue's double quotes.
 */
function linkRefusal(p: RefusalParts, target: string): string {
  return (
    `refusing ${p.dir}: ${p.component} is a symbolic link (to ${target}); a volume path may not run through a ` +
    `symbolic link below its base path ${p.base}, as a link left in a retained volume could send the volume, or its ` +
    `removal, outside it; remove the link on the node, then the operation is retried`
  );
}

/** `refusing <dir>: <component> is not a directory; <advice>`. */
function notDirectoryRefusal(p: RefusalParts): string {
  return (
    `refusing ${p.dir}: ${p.component} is not a directory; every component of a volume path below its base path ` +
    `${p.base} must be one; remove or rename it on the node, then the operation is retried`
  );
}

/** `refusing <dir>: it is not below the base path <base>`. */
function notBelowRefusal(dir: string, base: string): string {
  return `refusing ${dir}: it is not below the base path ${base}`;
}

/** `refusing <dir>: it has an empty, . or .. component`. */
function badComponentRefusal(dir: string): string {
  return `refusing ${dir}: it has an empty, . or .. component`;
}

/** How the prologue names the parts of a message: its shell variables. */
const SH: RefusalParts = { dir: '$dir', component: '$d', base: '$base' };

/**
 * The helper pod's prologue, run as `/bin/sh -c <this> local-path-guard <create|delete> <command...>` with the
 * `VOL_DIR` and `VOL_BASE` of the helper pod: it refuses (exit 1, one line on stderr) a path that runs through a
 * symbolic link or a non-directory below `VOL_BASE`, else runs `<command...>` (the ConfigMap's script or
 * `setupCommand`): for `delete` it execs it; for `create` it first makes the missing parents, and walks the path
 * again after the command ended. POSIX sh and busybox applets only; no `$$` and no `$(NAME)` of an environment
 * variable, which the kubelet would expand in a command.
 */
export const PATH_GUARD_SCRIPT = `set -eu
action="$1"
shift
base="\${VOL_BASE:-}"
dir="\${VOL_DIR:-}"
refuse() {
  echo "$1" >&2
  exit 1
}
case "$dir" in
  "$base"/?*) ;;
  *) refuse "${notBelowRefusal(SH.dir, SH.base)}" ;;
esac
walk() {
  rest="\${dir#"$base"/}"
  d="$base"
  while [ -n "$rest" ]; do
    c="\${rest%%/*}"
    if [ "$c" = "$rest" ]; then rest=""; else rest="\${rest#*/}"; fi
    case "$c" in
      ''|.|..) refuse "${badComponentRefusal(SH.dir)}" ;;
    esac
    d="$d/$c"
    if [ "$1" = make ] && [ -n "$rest" ]; then mkdir "$d" 2>/dev/null || :; fi
    if [ -L "$d" ]; then
      refuse "${linkRefusal(SH, '$(readlink "$d" || :)')}"
    elif [ -d "$d" ]; then
      :
    elif [ -e "$d" ]; then
      refuse "${notDirectoryRefusal(SH)}"
    else
      return 0
    fi
  done
}
if [ "$action" = create ]; then
  walk make
  "$@"
  walk check
else
  walk check
  exec "$@"
fi
`;

/** The `$0` of the prologue, which sh shows in its own messages. */
export const PATH_GUARD_NAME = 'local-path-guard';

/** The helper container's command: {@link PATH_GUARD_SCRIPT} wrapping `command` for `action`. */
export function guardedCommand(action: 'create' | 'delete', command: readonly string[]): string[] {
  return ['/bin/sh', '-c', PATH_GUARD_SCRIPT, PATH_GUARD_NAME, action, ...command];
}

/** What {@link guardVolumePath} checks. */
export interface GuardedPath {
  /** Where the node's root file system is for this process (`""`: the base paths are mounted in place). */
  readonly hostRoot: string;
  /** The base path, a clean node path. */
  readonly base: string;
  /** The volume path, a clean node path strictly below `base`. */
  readonly dir: string;
  /** Make the missing components above the volume directory (setup); default false. */
  readonly make?: boolean | undefined;
}

/** The error code of a failed fs call, if any. */
function codeOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * {@link PATH_GUARD_SCRIPT}'s walk in-process: resolves with whether the whole path exists; rejects with a
 * {@link VolumeDirRefusedError} (the prologue's message) for a path not strictly below `base`, an empty, `.` or `..`
 * component, or a component that is a symbolic link or not a directory. Messages name node paths.
 */
export async function guardVolumePath(target: GuardedPath): Promise<boolean> {
  const { base, dir } = target;
  if (!dir.startsWith(`${base}/`) || dir.length === base.length + 1)
    throw new VolumeDirRefusedError(notBelowRefusal(dir, base));
  const names = dir.slice(base.length + 1).split('/');
  let component = base;
  for (const [i, name] of names.entries()) {
    if (name === '' || name === '.' || name === '..') throw new VolumeDirRefusedError(badComponentRefusal(dir));
    component = `${component}/${name}`;
    const onHost = target.hostRoot === '' ? component : path.join(target.hostRoot, component);
    if (target.make === true && i < names.length - 1) {
      try {
        await mkdir(onHost);
      } catch (err) {
        if (codeOf(err) !== 'EEXIST') throw err;
      }
    }
    let info;
    try {
      info = await lstat(onHost);
    } catch (err) {
      if (codeOf(err) === 'ENOENT') return false;
      throw err;
    }
    const parts = { dir, component, base };
    if (info.isSymbolicLink()) {
      const to = await readlink(onHost).catch(() => '');
      throw new VolumeDirRefusedError(linkRefusal(parts, to));
    }
    if (!info.isDirectory()) throw new VolumeDirRefusedError(notDirectoryRefusal(parts));
  }
  return true;
}
