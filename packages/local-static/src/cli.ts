#!/usr/bin/env node
/**
 * The `local-volume-provisioner` binary: runs {@link main} with the process's arguments and environment, then exits
 * with its code (explicitly, so that idle keep-alive connections cannot hold the process open).
 */
import { main } from './main.js';

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`Critical error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
