#!/usr/bin/env node
/**
 * The `local-volume-provisioner` binary: runs {@link main} with the process's arguments and environment, or, when
 * the first argument is `node-cleanup`, the node-cleanup controller ({@link nodeCleanupMain}) with the rest; then
 * exits with its code (explicitly, so that idle keep-alive connections cannot hold the process open).
 */
import { main } from './main.js';
import { nodeCleanupMain } from './node-cleanup/main.js';
import { NODE_CLEANUP_COMMAND } from './node-cleanup/options.js';

const [command, ...rest] = process.argv.slice(2);
const run =
  command === NODE_CLEANUP_COMMAND ? nodeCleanupMain(rest, process.env) : main(process.argv.slice(2), process.env);

run.then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`Critical error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
