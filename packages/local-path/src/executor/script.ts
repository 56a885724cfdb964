/**
 * What a `setup` or `teardown` script is given, typed once for both executors: upstream's helper pod hands the script
 * (or `setupCommand`/`teardownCommand`) the arguments `-p <dir> -s <bytes> -m <mode> -a <action>` and the variables
 * `VOL_DIR`, `VOL_MODE`, `VOL_SIZE_BYTES`, `VOL_USER`, `VOL_GROUP`, `VOL_PERM` (empty for delete) and `VOL_BASE`, in
 * that order; node mode's child processes get the same.
 *
 * @module
 */

/** What a script does: make the volume directory (`create`, the `setup` script) or remove it (`delete`, `teardown`). */
export type VolumeAction = 'create' | 'delete';

/** The volume's side of a script's inputs. */
export interface ScriptInputs {
  /** Size in bytes (`VOL_SIZE_BYTES`, `-s`): the claim's request, or the PV's capacity. */
  readonly sizeBytes: number | bigint;
  /** `Filesystem` or `Block` (`VOL_MODE`, `-m`). */
  readonly volumeMode: string;
  /** `VOL_USER`: the rendered `userPattern`; empty when unset (always empty for delete). */
  readonly user?: string | undefined;
  /** `VOL_GROUP`: the rendered `groupPattern`; empty when unset (always empty for delete). */
  readonly group?: string | undefined;
  /** `VOL_PERM`: the rendered `permPattern`; empty when unset (always empty for delete). */
  readonly perm?: string | undefined;
}

/** The arguments and variables of a script run for `action` on `volDir`, below `volBase`, as the script sees them. */
export function scriptInterface(
  inputs: ScriptInputs & {
    readonly action: VolumeAction;
    /** The volume directory as the script sees it. */
    readonly volDir: string;
    /** The directory the volume lies in as the script sees it. */
    readonly volBase: string;
  },
): { args: string[]; env: Record<string, string> } {
  const { action, volDir, volumeMode } = inputs;
  const size = String(inputs.sizeBytes);
  const create = action === 'create';
  return {
    args: ['-p', volDir, '-s', size, '-m', volumeMode, '-a', action],
    env: {
      VOL_DIR: volDir,
      VOL_MODE: volumeMode,
      VOL_SIZE_BYTES: size,
      VOL_USER: create ? (inputs.user ?? '') : '',
      VOL_GROUP: create ? (inputs.group ?? '') : '',
      VOL_PERM: create ? (inputs.perm ?? '') : '',
      VOL_BASE: inputs.volBase,
    },
  };
}
