#!/usr/bin/env node
/**
 * The `local-path-provisioner` binary: runs {@link main} with the process's arguments and environment, then exits
 * with its code (explicitly, so that idle keep-alive connections cannot hold the process open).
 */
import { restartWithoutJit } from '@kprov/provisioner-lib/runtime';
import { parseCommandLine } from './cli/options.js';
import { main } from './main.js';

/**
 * In node mode the provisioner runs without V8's JIT, as local-static's does: one runs on every node, and its work
 * (a directory made or removed per claim of its node) is not hot enough to pay for V8's compilers. At rest through
 * the images' launcher 59.4-59.5 MiB with them, 56.3-56.4 without; after a burst of 300 claims on its node 83-86
 * against 64 MiB, for 4.0 against 4.1-4.3 ms of CPU per claim (bench/README.md, local-static). `--jitless` takes
 * effect only on Node.js's command line: the binary starts again in its own process with it (`restartWithoutJit`),
 * and turns the compilers off from inside where it cannot. Without the JIT there is no WebAssembly, which only a
 * kubeconfig's `proxy-url` would need (it says so). `KPROV_V8_FLAGS` replaces these flags. The cluster-wide
 * provisioner, with its helper pods, keeps the compilers. A command line that does not parse is left to `main`.
 */

function startsInNodeMode(argv: readonly string[]): boolean {
  try {
    const command = parseCommandLine(argv, process.env);
    return command.kind === 'start' && command.options.nodeMode;
  } catch {
    return false;
  }
}

const argv = process.argv.slice(2);
if (startsInNodeMode(argv)) restartWithoutJit();

main(argv, process.env).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`Critical error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
