import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { findHelm } from '../helm/find.js';

/**
 * `kprov-testkit helm <args...>`: runs the helm of `findHelm` with `args`, its stdin, stdout and stderr those of
 * this process; resolves with helm's exit code (128 + the signal's number when a signal ended it).
 */
export async function helmCommand(args: readonly string[]): Promise<number> {
  const helm = await findHelm();
  const child = spawn(helm, args, { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}
