import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';
import { asciiOutput } from './tsup.ascii.js';

/**
 * The builds of a package that is both a library and a binary: `dist/index.js` (and its types) with the dependencies
 * external, as a library is published, and `binary`, the binary's build (provisioner-lib's `binaryBundle`, which
 * the package's config imports from `@kprov/provisioner-lib/bundle`, as a provisioner author's does). `library` adds
 * to or overrides the library build (e.g. an `onSuccess` copying files).
 */
export function libraryAndBinary(binary: Options, library: Options = {}): Options[] {
  const names = Object.keys(binary.entry as Record<string, string>);
  return [
    {
      entry: ['src/index.ts'],
      format: ['esm'],
      dts: true,
      sourcemap: true,
      // Everything but the binary and its gates, which the other builds write at the same time.
      clean: [...names.map((name) => `!${name}.js*`), `!${GATES_DIR}/**`],
      target: 'node22',
      platform: 'node',
      plugins: [asciiOutput],
      ...library,
    },
    binary,
    // The gates import the (first) binary bundle.
    ...nodeVersionGates(names[0]),
  ];
}

/** The folder of `dist/` the gates go to; a package's `bin` names `./dist/bin/<binary>.js`. */
export const GATES_DIR = 'bin';

const GATE_SOURCE = fileURLToPath(new URL('./node-version-gate.ts', import.meta.url));

/**
 * The builds of a package's `bin` entries: for each binary, `dist/bin/<binary>.js` from node-version-gate.ts, which
 * checks the running Node.js against the package.json's `engines.node` before it imports the program,
 * `dist/<program>.js` (see that file). Read from the package.json of the folder tsup runs in, so that the minimum
 * has one home. A gate is not bundled (the program's `import()` stays as written) and is lowered to Node.js 14's
 * syntax, so that an old Node.js gets as far as the check.
 */
export function nodeVersionGates(program = 'cli'): Options[] {
  const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
    name?: string;
    engines?: { node?: string };
    bin?: Record<string, string>;
  };
  const min = /^>=(\d+\.\d+\.\d+)$/.exec(pkg.engines?.node ?? '')?.[1];
  if (min === undefined) {
    throw new Error(`${pkg.name}: engines.node must be ">=X.Y.Z" for the binaries' Node.js check`);
  }
  const binaries = Object.entries(pkg.bin ?? {});
  if (binaries.length === 0) throw new Error(`${pkg.name}: no bin entries to build Node.js checks for`);
  return binaries.map(([binary, file]) => {
    if (file !== `./dist/${GATES_DIR}/${binary}.js`) {
      throw new Error(`${pkg.name}: bin.${binary} must be ./dist/${GATES_DIR}/${binary}.js (its Node.js check)`);
    }
    return {
      entry: { [`${GATES_DIR}/${binary}`]: GATE_SOURCE },
      format: ['esm'],
      target: 'node14',
      platform: 'node',
      bundle: false,
      sourcemap: false,
      dts: false,
      clean: false,
      define: {
        KPROV_BINARY: JSON.stringify(binary),
        KPROV_NODE_MIN: JSON.stringify(min),
        KPROV_PROGRAM: JSON.stringify(`../${program}.js`),
      },
    };
  });
}
