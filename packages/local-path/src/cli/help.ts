/**
 * The help of `local-path-provisioner`, laid out as urfave/cli lays out upstream's: both commands, then every flag of
 * the tables of `flags.ts` with its aliases, value name, environment variable and default.
 *
 * @packageDocumentation
 */
import { flagDefaultText, type FlagTable } from '@kprov/provisioner-lib/runtime';
import { KUTTI_PROVISIONER_NAME } from '../executor/node/kutti.js';
import { ACTION_FLAGS, GLOBAL_FLAGS, OUR_START_FLAGS, UPSTREAM_START_FLAGS } from './flags.js';

/** The binary's name, used in help and version output. */
export const PROGRAM = 'local-path-provisioner';

/** Every flag the help lists, by section. */
const SECTIONS = [{ ...GLOBAL_FLAGS, ...ACTION_FLAGS }, UPSTREAM_START_FLAGS, OUR_START_FLAGS] as const;

/** `--name, -n VALUE`: the names (one letter: `-n`) and the value's name. */
function flagColumn(name: string, table: FlagTable): string {
  const def = table[name]!;
  const names = [name, ...(def.aliases ?? [])].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)).join(', ');
  return def.valueName === undefined ? names : `${names} ${def.valueName}`;
}

const WIDTH = Math.max(...SECTIONS.flatMap((t) => Object.keys(t).map((n) => flagColumn(n, t).length))) + 2;

/** One entry per flag: the names and the usage, then `(env X, default Y)` on the next line. */
function helpLines(table: FlagTable): string {
  return Object.entries(table)
    .map(([name, def]) => {
      const shown = flagDefaultText(def, true);
      const notes = [
        ...(def.env === undefined ? [] : [`env ${def.env}`]),
        ...(shown === undefined ? [] : [`default ${shown}`]),
      ];
      const line = `  ${flagColumn(name, table).padEnd(WIDTH)}${def.usage}`;
      return notes.length === 0 ? line : `${line}\n${' '.repeat(WIDTH + 2)}(${notes.join(', ')})`;
    })
    .join('\n');
}

/** The help text: both commands, every flag with its environment variable and default. */
export const HELP = `NAME:
  ${PROGRAM} - Local Path Provisioner

USAGE:
  ${PROGRAM} [--debug] start [flags]
  ${PROGRAM} [--debug]     with KUTTI_NODE_NAME and KUTTI_ROOT_PATH set: as kuttiproject/provisioner-localvolume,
                                  "start --node-mode --provisioner-name ${KUTTI_PROVISIONER_NAME}"

COMMANDS:
  start    run the provisioner
  status   print each node path's capacity, allocated and free space ("status --help" for its flags)

GLOBAL FLAGS (also accepted after "start"):
${helpLines(SECTIONS[0])}

START FLAGS (upstream):
${helpLines(UPSTREAM_START_FLAGS)}

START FLAGS (sidecar style, ours):
${helpLines(OUR_START_FLAGS)}

ENVIRONMENT (read directly):
  CONFIG_MOUNT_PATH  directory of the mounted ConfigMap; if set, <dir>/helperPod.yaml is re-read every 30s
  KUTTI_NODE_NAME    --node-name when neither the flag nor NODE_NAME is set; with no command, see USAGE
  KUBECONFIG, HOME   kubeconfig discovery when --kubeconfig is empty

A flag wins over its environment variable. Values go as "--flag value" or "--flag=value" (one dash works too);
booleans take "--flag" or "--flag=false", never a separate value.
`;
