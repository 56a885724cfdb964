#!/usr/bin/env node
/**
 * The `local-volume-provisioner` binary: runs {@link main} with the process's arguments and environment, or, when
 * the first argument is `node-cleanup`, the node-cleanup controller ({@link nodeCleanupMain}) with the rest; then
 * exits with its code (explicitly, so that idle keep-alive connections cannot hold the process open).
 */
import { addV8Flags } from '@kprov/provisioner-lib/runtime';
import { main } from './main.js';
import { nodeCleanupMain } from './node-cleanup/main.js';
import { NODE_CLEANUP_COMMAND } from './node-cleanup/options.js';

/**
 * The provisioner's V8 flags beside the runtime's: its JavaScript runs in V8's interpreter only. It runs on every
 * node and its work is a discovery pass every few seconds and cleaners run as commands, nothing hot enough to pay
 * for V8's baseline and optimizing compilers, whose code and memory were about 2 MiB of its RSS at rest (59.3
 * against 61.5 MiB with 50 volumes; bench/README.md, local-static). `KPROV_V8_FLAGS` replaces them.
 */
const PROVISIONER_V8_FLAGS = ['--no-sparkplug', '--no-maglev'];

const [command, ...rest] = process.argv.slice(2);
if (command !== NODE_CLEANUP_COMMAND) addV8Flags(PROVISIONER_V8_FLAGS);
const run =
  command === NODE_CLEANUP_COMMAND ? nodeCleanupMain(rest, process.env) : main(process.argv.slice(2), process.env);

run.then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`Critical error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
