#!/usr/bin/env node
/**
 * The `local-volume-provisioner` binary: runs {@link main} with the process's arguments and environment, or, when
 * the first argument is `node-cleanup`, the node-cleanup controller ({@link nodeCleanupMain}) with the rest; then
 * exits with its code (explicitly, so that idle keep-alive connections cannot hold the process open).
 */
import { restartWithoutJit } from '@kprov/provisioner-lib/runtime';
import { main } from './main.js';
import { nodeCleanupMain } from './node-cleanup/main.js';
import { NODE_CLEANUP_COMMAND } from './node-cleanup/options.js';

/**
 * The provisioner runs without V8's JIT: its JavaScript and regular expressions interpreted, no executable memory.
 * It runs on every node and its work is a discovery pass every few seconds and cleaners run as commands, nothing hot
 * enough to pay for V8's compilers: at rest with 50 volumes, through the images' launcher, 60.2-60.3 MiB with them,
 * 58.5-58.8 with Sparkplug and Maglev off, 56.4 without the JIT (three runs each; bench/README.md, local-static).
 * `--jitless` takes effect only on Node.js's command line: the binary starts again in its own process with it
 * (`restartWithoutJit`), and turns the compilers off from inside where it cannot. Without the JIT there is no
 * WebAssembly, which only a kubeconfig's `proxy-url` would need (it says so). `KPROV_V8_FLAGS` replaces these flags.
 */
const [command, ...rest] = process.argv.slice(2);
if (command !== NODE_CLEANUP_COMMAND) restartWithoutJit();
const run =
  command === NODE_CLEANUP_COMMAND ? nodeCleanupMain(rest, process.env) : main(process.argv.slice(2), process.env);

run.then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`Critical error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
