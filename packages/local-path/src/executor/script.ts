/**
 * What upstream's helper pod hands the `setup` and `teardown` scripts (or `setupCommand`/`teardownCommand`): the
 * arguments `-p <dir> -s <bytes> -m <mode> -a <action>` and the variables `VOL_DIR`, `VOL_MODE`, `VOL_SIZE_BYTES`,
 * `VOL_USER`, `VOL_GROUP`, `VOL_PERM` (empty for delete) and `VOL_BASE`, in that order. Shared by the helper pod
 * and node mode's child processes, so both give a script the same interface.
 */
export function scriptInterface(inputs: {
  readonly action: 'create' | 'delete';
  /** The volume directory as the script sees it. */
  readonly volDir: string;
  /** The directory the volume lies in as the script sees it. */
  readonly volBase: string;
  readonly sizeBytes: number | bigint;
  readonly volumeMode: string;
  readonly user?: string | undefined;
  readonly group?: string | undefined;
  readonly perm?: string | undefined;
}): { args: string[]; env: Record<string, string> } {
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
