// Running the tools (helm, pnpm) for the release scripts: their output passed through, a failure reported as one line.
import { spawnSync } from 'node:child_process';
import { REPO, ReleaseError } from './paths.ts';

/** Runs a command in the repository (or `cwd`) with its output shown; throws a ReleaseError when it fails. */
export function run(command: string, args: string[], cwd = REPO): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.error !== undefined) {
    const missing = (result.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ReleaseError(missing ? `${command} not found on the PATH` : result.error.message);
  }
  if (result.status !== 0) {
    const how = result.status === null ? `signal ${result.signal}` : `exit code ${result.status}`;
    throw new ReleaseError(`${[command, ...args].join(' ')} failed (${how})`);
  }
}
