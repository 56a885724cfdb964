/**
 * What node mode runs to set up or tear down a volume directory: `setupCommand`/`teardownCommand` of `config.json`
 * when set, else the ConfigMap's `setup`/`teardown` script, each as a child process with the command line and
 * environment a helper pod gives it; or the built-in in-process behaviour when the script is a stock one (the
 * scripts of our manifest and chart, or upstream's plain `mkdir`/`rm`), which does the same, or when no script is
 * known.
 *
 * The script sees the directories where this process sees them: `VOL_DIR`, `VOL_BASE` and `-p` are the node paths
 * below `--host-root` (`/host/opt/local-path-provisioner/...` with `--host-root /host`), and `HOST_ROOT` is set to
 * it (empty without one), so a script needing the node path strips that prefix.
 *
 * @module
 */
import { onHost } from './node-dirs.js';
import { scriptInterface, type ScriptInputs, type VolumeAction } from '../script.js';

/** The ConfigMap's scripts, as far as they are known (`undefined`: none, the built-in behaviour is used). */
export interface NodeScripts {
  readonly setup?: string | undefined;
  readonly teardown?: string | undefined;
}

/** `setup` of deploy/local-path-storage.yaml and of the chart, without comments (refuses links, then `mkdir`). */
const OUR_SETUP = `set -eu
base="\${VOL_BASE:-$(dirname "$VOL_DIR")}"
d="$VOL_DIR"
while [ ! -e "$d" ] && [ ! -L "$d" ]; do d="$(dirname "$d")"; done
want="$(readlink -f "$base")\${d#"$base"}"
real="$(readlink -f "$d" || true)"
if [ "$real" != "$want" ]; then
echo "refusing $VOL_DIR: $d resolves to \${real:-nothing}" >&2
exit 1
fi
mkdir -m 0777 -p "$VOL_DIR"`;

/** `teardown` of deploy/local-path-storage.yaml and of the chart, without comments (refuses links, then `rm`). */
const OUR_TEARDOWN = `set -eu
base="\${VOL_BASE:-$(dirname "$VOL_DIR")}"
if [ -e "$VOL_DIR" ] || [ -L "$VOL_DIR" ]; then
want="$(readlink -f "$base")\${VOL_DIR#"$base"}"
real="$(readlink -f "$VOL_DIR" || true)"
if [ "$real" != "$want" ]; then
echo "refusing $VOL_DIR: it resolves to \${real:-nothing}" >&2
exit 1
fi
fi
rm -rf "$VOL_DIR"`;

/** The stock scripts, normalised ({@link normaliseScript}): the built-in behaviour does what they do. */
const STOCK: Readonly<Record<VolumeAction, readonly string[]>> = {
  create: [OUR_SETUP, 'set -eu\nmkdir -m 0777 -p "$VOL_DIR"'],
  delete: [OUR_TEARDOWN, 'set -eu\nrm -rf "$VOL_DIR"'],
};

/** A script without comment lines, blank lines and indentation: two spellings of the same script compare equal. */
export function normaliseScript(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .join('\n');
}

/** Whether `text` is a stock `setup` (`create`) or `teardown` (`delete`) script. */
export function isStockScript(action: VolumeAction, text: string): boolean {
  return STOCK[action].includes(normaliseScript(text));
}

/** What to run: the built-in behaviour, or a program with its arguments. */
export type ScriptPlan =
  { readonly kind: 'builtin' } | { readonly kind: 'run'; readonly argv: readonly string[]; readonly what: string };

/**
 * What runs for `action`: `[command, ...args]` when the config's command is set (upstream's `[setupCommand]`); else
 * `/bin/sh -c <script> /script/<name> ...args` (the helper pod's `/bin/sh /script/setup ...args`) for a script that
 * is not a stock one; else the built-in behaviour.
 */
export function planScript(
  action: VolumeAction,
  command: string | undefined,
  script: string | undefined,
  args: readonly string[],
): ScriptPlan {
  const name = action === 'create' ? 'setup' : 'teardown';
  if (command !== undefined && command !== '')
    return { kind: 'run', argv: [command, ...args], what: `${name}Command ${command}` };
  if (script === undefined || isStockScript(action, script)) return { kind: 'builtin' };
  return { kind: 'run', argv: ['/bin/sh', '-c', script, `/script/${name}`, ...args], what: `the ${name} script` };
}

/** Inputs of {@link scriptCall}: where the script runs, then the script's ({@link ScriptInputs}). */
export interface ScriptCallInputs extends ScriptInputs {
  readonly action: VolumeAction;
  /** `--host-root` (`""`: none). */
  readonly hostRoot: string;
  /** The volume directory, a node path. */
  readonly path: string;
  /** The base path it lies in, a node path. */
  readonly basePath: string;
  /** `PATH` of the child. Default this process's, else the usual system one. */
  readonly searchPath?: string | undefined;
}

/**
 * The arguments and environment a helper pod gives the script (`-p <dir> -s <bytes> -m <mode> -a <action>`,
 * `VOL_DIR`, `VOL_MODE`, `VOL_SIZE_BYTES`, `VOL_USER`, `VOL_GROUP`, `VOL_PERM`, `VOL_BASE`), with the paths below
 * the host root, plus `HOST_ROOT` and `PATH`. Nothing else of this process's environment is passed on.
 */
export function scriptCall(inputs: ScriptCallInputs): { args: string[]; env: Record<string, string> } {
  const script = scriptInterface({
    ...inputs,
    volDir: onHost(inputs.hostRoot, inputs.path),
    volBase: onHost(inputs.hostRoot, inputs.basePath),
  });
  return {
    args: script.args,
    env: {
      PATH: inputs.searchPath ?? process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      ...script.env,
      HOST_ROOT: inputs.hostRoot,
    },
  };
}
