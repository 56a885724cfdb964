import type { Options } from 'tsup';
import { builtinsThroughRequire } from './builtins-through-require.js';
import { clientNodeConfigByPath, clientNodeWithoutSideEffects } from './client-node.js';
import { libraryRequire } from './library-require.js';
import { pinoWritersWhenUsed } from './pino.js';

/**
 * The tsup options that build a provisioner binary as this project's own are built: one ES module with every
 * dependency bundled in, tree-shaken and minified, beside its source map, which runs without `node_modules` (the
 * images ship `dist/` alone). Use it as a tsup config: `export default defineConfig(binaryBundle({ cli: 'src/cli.ts' }))`.
 *
 * A Node.js process pays memory for every module it loads, used or not, and client-node's entry point loads all of
 * its generated API classes and models: with client-node and the library loaded from `node_modules`, a process that
 * runs nothing has an RSS of about 128 MiB on Node.js 24, against 44 MiB for bare Node.js. Bundled, only the code the
 * binary can reach is kept (client-node's `CoreV1Api` but not its 60 other API groups) and the same process takes
 * about 72 MiB (bench/README.md, "Where the memory goes"), and starts in half the time (local-path's `--help`: about
 * 150 ms against 350). Besides bundling, the options make the bundle pure ASCII (Node.js keeps a source with one
 * other character as UTF-16, twice its size) and add five esbuild plugins: the library's own lazy `require`s of
 * client-node, undici, pino and prom-client are served from the bundle (a plain bundle would look for them in a
 * `node_modules` beside it on first use, and fail where there is none), Node.js built-ins are loaded with `require`,
 * client-node's modules count as free of side effects but its `File` polyfill, its `config.js` taking its two
 * generated names from their own modules (so that the bundle keeps only the models and APIs the code uses), and
 * pino's file and thread writers load when pino first makes one.
 *
 * Minified identifiers make stack traces terse; `NODE_OPTIONS=--enable-source-maps` maps them back to the sources
 * through the `.js.map` beside the bundle. Keeping the names instead (`keepNames`) cost about 12 MiB more. The
 * license comments go to `<name>.js.LEGAL.txt` beside the bundle: ship it with the binary.
 *
 * @param entry - the outputs and their sources, e.g. `{ cli: 'src/cli.ts' }`; they go to `dist/`. The options do not
 *   clean `dist/` (a package that also builds a library there lets that build clean it).
 * @param overrides - tsup options that replace these (spread over them, e.g. `{ outDir: 'build' }`). Default none.
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
    // Built-ins keep their `node:` prefix, for builtinsThroughRequire to see them as written. (tsup strips it by default,
    // which breaks `node:sqlite`, a built-in only under its prefix, that undici's SqliteCacheStore requires.)
    removeNodeProtocol: false,
    esbuildPlugins: [
      libraryRequire,
      builtinsThroughRequire,
      clientNodeWithoutSideEffects,
      clientNodeConfigByPath,
      pinoWritersWhenUsed,
    ],
    esbuildOptions(options) {
      // A bundle must be pure ASCII: with a single other character, Node.js 24 keeps the whole source as a UTF-16
      // string, twice its size (4.2 MB instead of 2.1: 2.0 MiB more RSS in the bench's process with nothing
      // running). esbuild escapes such characters in code, but copies license comments as they are, and one of them
      // (formdata-polyfill's, in undici) has an `ä`. The license comments go to `<name>.js.LEGAL.txt` beside the
      // bundle instead, which the bundle names; it is in `dist/`, which the packages and the images ship.
      options.charset = 'ascii';
      options.legalComments = 'linked';
    },
    // Bundled CommonJS dependencies (pino, prom-client) call `require` for Node.js built-ins, which an ES module lacks.
    // The banner is pasted above the bundle as it is, so its import has a name no bundled module uses.
    banner: {
      js: "import { createRequire as kprovCreateRequire } from 'node:module'; const require = kprovCreateRequire(import.meta.url);",
    },
    ...overrides,
  };
}
