import type { Options } from 'tsup';

/**
 * How a provisioner binary (`dist/cli.js` of local-path, local-static and hostpath-example) is built: one ES module
 * with every dependency bundled in, tree-shaken and minified, beside its source map.
 *
 * A Node.js process pays memory for every module it loads, used or not, and client-node's entry point loads all of
 * its generated API classes and models: with client-node and the library loaded from `node_modules`, a process that
 * runs nothing has an RSS of about 128 MiB on Node.js 24, against 44 MiB for bare Node.js. Bundled, only the code the
 * binary can reach is kept (client-node's `CoreV1Api` but not its 60 other API groups) and the same process takes
 * about 75 MiB (bench/README.md, "Where the memory goes"), and starts in half the time (local-path's `--help`: about
 * 160 ms against 350). The binary then needs no `node_modules` either.
 *
 * Minified identifiers make stack traces terse; `NODE_OPTIONS=--enable-source-maps` maps them back to the sources
 * through `cli.js.map`. Keeping the names instead (`keepNames`) cost about 12 MiB more.
 *
 * `entry` names the outputs, e.g. `{ cli: 'src/cli.ts' }`; they go to `dist/` beside the package's library
 * build, which owns `clean`.
 */
export function binaryBundle(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ['esm'],
    target: 'node22',
    platform: 'node',
    noExternal: [/./],
    splitting: false,
    minify: true,
    sourcemap: true,
    dts: false,
    clean: false,
    // Bundled CommonJS dependencies (pino, prom-client) call `require` for Node.js built-ins, which an ES module lacks.
    // The banner is pasted above the bundle as it is, so its import has a name no bundled module uses.
    banner: {
      js: "import { createRequire as kprovCreateRequire } from 'node:module'; const require = kprovCreateRequire(import.meta.url);",
    },
    ...overrides,
  };
}

/**
 * The builds of a package that is both a library and a binary: `dist/index.js` (and its types) with the dependencies
 * external, as a library is published, and the binary bundled by {@link binaryBundle}. `library` adds to or overrides
 * the library build (e.g. an `onSuccess` copying files).
 */
export function libraryAndBinary(binary: Record<string, string>, library: Options = {}): Options[] {
  return [
    {
      entry: ['src/index.ts'],
      format: ['esm'],
      dts: true,
      sourcemap: true,
      // Everything but the binary, which the other build writes at the same time.
      clean: Object.keys(binary).map((name) => `!${name}.js*`),
      target: 'node22',
      platform: 'node',
      ...library,
    },
    binaryBundle(binary),
  ];
}
