#!/usr/bin/env node
/**
 * The file a package's `bin` names (`dist/bin/<binary>.js`): it checks the Node.js version before anything else is
 * loaded, then imports the program (`dist/cli.js`). On a Node.js older than the package's `engines.node`, the
 * program would fail in a way that says nothing useful (Node.js 20 cannot even parse the bundled undici, and prints a
 * screenful of its source); the gate prints one line and exits 1 instead.
 *
 * Built by tsup.binary.ts's `nodeVersionGates()`, one copy per binary, with the three names below replaced by
 * esbuild's `define`, lowered to syntax Node.js 14 parses and not bundled: the program is imported only once the
 * version is known to be good. Keep it free of imports and of syntax newer than ES2020.
 */

/** The binary's name, as `bin` gives it, e.g. `local-path-provisioner`. */
declare const KPROV_BINARY: string;
/** The oldest supported Node.js, X.Y.Z from the package.json's `engines.node` (`>=X.Y.Z`). */
declare const KPROV_NODE_MIN: string;
/** The program, relative to the gate, e.g. `../cli.js`. */
declare const KPROV_PROGRAM: string;

/** Whether the running Node.js is older than `min` (X.Y.Z). */
function older(min: string): boolean {
  const want = min.split('.').map(Number);
  const have = process.versions.node.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const h = have[i] ?? 0;
    const w = want[i] ?? 0;
    if (h !== w) return h < w;
  }
  return false;
}

if (older(KPROV_NODE_MIN)) {
  process.stderr.write(
    `${KPROV_BINARY} needs Node.js >= ${KPROV_NODE_MIN} (this is ${process.version}); install a newer Node.js\n`,
  );
  process.exit(1);
}
// A failure to load the program is an unhandled rejection: Node.js prints it and exits 1, as it would have.
void import(KPROV_PROGRAM);
