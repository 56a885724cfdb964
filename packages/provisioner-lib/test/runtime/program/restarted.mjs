/**
 * A binary's entry that starts again with `--jitless` (`restartWithV8Flags`, the built library; with
 * `RESTART_WITH=without-jit`, `restartWithoutJit`), then writes one JSON line saying what it runs with and which
 * flags it set from inside. JavaScript: Node.js strips TypeScript's types with WebAssembly.
 *
 * Usage: node restarted.mjs [arguments...]
 */
import process from 'node:process';
import { restartWithoutJit, restartWithV8Flags } from '@kprov/provisioner-lib/runtime';

process.stderr.write('entry ran\n');
const withoutJit = process.env.RESTART_WITH === 'without-jit';
let setInside;
if (withoutJit) setInside = restartWithoutJit();
else restartWithV8Flags(['--jitless']);
process.stdout.write(
  `${JSON.stringify({
    pid: process.pid,
    execArgv: process.execArgv,
    args: process.argv.slice(2),
    webAssembly: typeof WebAssembly,
    marker: process.env.RESTART_MARKER ?? null,
    ...(withoutJit ? { setInside } : {}),
  })}\n`,
);
