/**
 * A binary's entry that starts again with `--jitless` (`restartWithV8Flags`, the built library), then writes one
 * JSON line saying what it runs with. JavaScript: Node.js strips TypeScript's types with WebAssembly.
 *
 * Usage: node restarted.mjs [arguments...]
 */
import process from 'node:process';
import { restartWithV8Flags } from '@kprov/provisioner-lib/runtime';

process.stderr.write('entry ran\n');
restartWithV8Flags(['--jitless']);
process.stdout.write(
  `${JSON.stringify({
    pid: process.pid,
    execArgv: process.execArgv,
    args: process.argv.slice(2),
    webAssembly: typeof WebAssembly,
    marker: process.env.RESTART_MARKER ?? null,
  })}\n`,
);
