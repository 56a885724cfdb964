import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * Has the bundle load Node.js built-ins with `require` (the banner's) instead of `import`. An ES module import of a
 * built-in, even of one name (`import { request } from 'node:http'`), builds the built-in's whole namespace, which
 * reads every export: `node:http`'s lazy `WebSocket`, `CloseEvent` and `MessageEvent` then load Node.js's internal
 * copy of undici (0.75 MB of source; the binaries bundle their own undici and never use it). `require` returns the
 * module object and leaves its lazy exports unread: esbuild wraps it as a CommonJS module and reads a property where
 * the code uses it. The bench's process with nothing running (bench/baseline.js, medians of 15 runs) took 1.9 MiB
 * less RSS this way on Node.js 24 (heap after GC 10.9 MiB instead of 12.0) and 3.1 MiB less on Node.js 22.19, and
 * imported its module in 8 ms less.
 */
const builtinsThroughRequire: EsbuildPlugin = {
  name: 'kprov-builtins-through-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?\w+(\/\w+)*$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      // Calls of `require` (the module below's, bundled CommonJS code's) stay calls of the banner's `require`.
      if (args.kind === 'require-call') return { path: args.path, external: true };
      // A dynamic `import()` loads the namespace only when it runs; left as it is.
      if (args.kind !== 'import-statement') return undefined;
      return { path: args.path, namespace: 'kprov-builtin' };
    });
    build.onLoad({ filter: /./, namespace: 'kprov-builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** The one module of client-node's that changes something outside itself (it sets `globalThis.File`). */
const CLIENT_NODE_SIDE_EFFECTS = /\/@kubernetes\/client-node\/dist\/polyfill\.js$/;

/**
 * Lets esbuild leave out the modules of client-node the code does not use. client-node declares no `sideEffects`,
 * and each of its 759 generated model modules assigns static fields at its top level, which esbuild must take for a
 * side effect; `KubeConfig`'s module reaches all of them through its generated index, so every model stayed in a
 * bundle that uses none of them (0.36 MB, and `ObjectSerializer`'s map of them). Its only module with a real side
 * effect, the `File` polyfill, keeps it. The bench's controller bundle went from 1.51 to 1.05 MB, and its process with
 * nothing running (bench/baseline.js, medians of 6) from 70.7 to 65.5 MiB of RSS and 10.5 to 8.5 MiB of heap after GC.
 * A binary that calls a generated API (local-path's `CoreV1Api`) keeps what that API's serializer names.
 */
const clientNodeWithoutSideEffects: EsbuildPlugin = {
  name: 'kprov-client-node-without-side-effects',
  setup(build) {
    build.onResolve({ filter: /^(\.|@kubernetes\/client-node$)/ }, async (args) => {
      if (args.pluginData === CLIENT_NODE_SIDE_EFFECTS) return undefined;
      if (args.path.startsWith('.') && !args.importer.includes('/@kubernetes/client-node/dist/')) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: CLIENT_NODE_SIDE_EFFECTS,
      });
      if (resolved.errors.length > 0 || resolved.external) return undefined;
      return { ...resolved, sideEffects: CLIENT_NODE_SIDE_EFFECTS.test(resolved.path) };
    });
  },
};

/**
 * How a provisioner binary (`dist/cli.js` of local-path, local-static and hostpath-example) is built: one ES module
 * with every dependency bundled in, tree-shaken and minified, beside its source map.
 *
 * A Node.js process pays memory for every module it loads, used or not, and client-node's entry point loads all of
 * its generated API classes and models: with client-node and the library loaded from `node_modules`, a process that
 * runs nothing has an RSS of about 128 MiB on Node.js 24, against 44 MiB for bare Node.js. Bundled, only the code the
 * binary can reach is kept (client-node's `CoreV1Api` but not its 60 other API groups) and the same process takes
 * about 72 MiB (bench/README.md, "Where the memory goes"; 75 before the two details below), and starts in half the
 * time (local-path's `--help`: about 150 ms against 350). The binary then needs no `node_modules` either.
 *
 * Minified identifiers make stack traces terse; `NODE_OPTIONS=--enable-source-maps` maps them back to the sources
 * through `cli.js.map`. Keeping the names instead (`keepNames`) cost about 12 MiB more.
 *
 * `entry` names the outputs, e.g. `{ cli: 'src/cli.ts' }`; they go to `dist/` beside the package's library
 * build, which owns `clean`.
 */
/**
 * The library (`@kprov/provisioner-lib`'s dist) loads client-node's entry point, undici, pino and prom-client's classes with
 * a `require` of its own (`createRequire(import.meta.url)`), when first needed, so that a program run from
 * node_modules loads only what it uses. A bundle has no node_modules beside it (the images ship `dist/` alone), and
 * esbuild cannot see such a `require`: for the library's modules, `node:module` becomes this module, whose
 * `createRequire` serves those names from the bundle (the names the library uses: esbuild keeps only those) and
 * anything else as Node.js's does.
 */
const LIBRARY_REQUIRE = 'kprov-library-require';
const libraryRequire: EsbuildPlugin = {
  name: LIBRARY_REQUIRE,
  setup(build) {
    build.onResolve({ filter: /^(node:)?module$/ }, (args) =>
      args.kind === 'import-statement' && /[/\\]provisioner-lib[/\\]dist[/\\]/.test(args.importer)
        ? { path: 'module', namespace: LIBRARY_REQUIRE, pluginData: dirname(args.importer) }
        : undefined,
    );
    // The names resolve from the library's folder, as its own `require` would resolve them.
    build.onLoad({ filter: /./, namespace: LIBRARY_REQUIRE }, (args) => ({
      resolveDir: args.pluginData as string,
      loader: 'js',
      contents: `
        // Each from the module that defines it (through client-node's entry point, side-effect free for the bundle,
        // see below, esbuild leaves the lazily initialized modules of these names uninitialized), and each required
        // when the library first asks for it: esbuild then wraps these modules to run on that first call, so that a
        // binary that never asks for undici, client-node's KubeConfig or prom-client's default metrics does not run
        // them (imported at the top of this module instead, every binary ran undici, client-node's generated client
        // and prom-client's entry point, its cluster and Pushgateway code, as it started).
        const nodeModule = require('node:module');
        const bundled = {
          '@kubernetes/client-node': () => ({
            get KubeConfig() { return require('@kubernetes/client-node/dist/config.js').KubeConfig; },
            get IsomorphicFetchHttpLibrary() {
              return require('@kubernetes/client-node/dist/gen/http/isomorphic-fetch.js').IsomorphicFetchHttpLibrary;
            },
            get createConfiguration() {
              return require('@kubernetes/client-node/dist/gen/configuration.js').createConfiguration;
            },
            get ServerConfiguration() { return require('@kubernetes/client-node/dist/gen/servers.js').ServerConfiguration; },
            get Watch() { return require('@kubernetes/client-node/dist/watch.js').Watch; },
          }),
          undici: () => require('undici'),
          pino: () => require('pino'),
          'prom-client/lib/counter': () => require('prom-client/lib/counter'),
          'prom-client/lib/gauge': () => require('prom-client/lib/gauge'),
          'prom-client/lib/histogram': () => require('prom-client/lib/histogram'),
          'prom-client/lib/registry': () => require('prom-client/lib/registry'),
          'prom-client/lib/defaultMetrics': () => require('prom-client/lib/defaultMetrics'),
        };
        export function createRequire(url) {
          const own = nodeModule.createRequire(url);
          return (id) => (Object.hasOwn(bundled, id) ? bundled[id]() : own(id));
        }
        export const isBuiltin = nodeModule.isBuiltin;
      `,
    }));
  },
};

/**
 * client-node's `config.js` (its `KubeConfig`) takes `createConfiguration` and `ServerConfiguration` from its generated
 * index, which re-exports every generated API and model. While `config.js` runs as the bundle starts, esbuild keeps
 * only what it uses of that index; but a module that runs when first required or imported (the library's `require` of
 * `KubeConfig`, its `import()` of the authenticators, `oidc_auth.js` importing `config.js`) is wrapped by esbuild, and a
 * wrapped module keeps every export of what it imports: every model (0.36 MB; kprov-hostpath 1.16 → 1.56 MB). Here
 * `config.js` takes the two from the modules that define them, so that it can run when first asked for: a binary that
 * never needs client-node's `KubeConfig` or an authenticator runs neither them nor what they import (undici, HTTP/2,
 * openid-client, socks, the proxy agents).
 */
const CLIENT_NODE_CONFIG = /[/\\]@kubernetes[/\\]client-node[/\\]dist[/\\]config\.js$/;
const GENERATED_INDEX_IMPORT = /import \{ createConfiguration, ServerConfiguration, \} from '\.\/gen\/index\.js';/;
const clientNodeConfigByPath: EsbuildPlugin = {
  name: 'kprov-client-node-config-by-path',
  setup(build) {
    build.onLoad({ filter: CLIENT_NODE_CONFIG }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!GENERATED_INDEX_IMPORT.test(source)) {
        throw new Error(
          `${args.path}: its import of the generated index changed; update tsup.binary.ts's clientNodeConfigByPath`,
        );
      }
      const contents = source.replace(
        GENERATED_INDEX_IMPORT,
        "import { createConfiguration } from './gen/configuration.js'; import { ServerConfiguration } from './gen/servers.js';",
      );
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

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
    // Built-ins keep their `node:` prefix, for the plugin above to see them as written. (tsup strips it by default,
    // which breaks `node:sqlite`, a built-in only under its prefix, that undici's SqliteCacheStore requires.)
    removeNodeProtocol: false,
    esbuildPlugins: [libraryRequire, builtinsThroughRequire, clientNodeWithoutSideEffects, clientNodeConfigByPath],
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
      // Everything but the binary and its gates, which the other builds write at the same time.
      clean: [...Object.keys(binary).map((name) => `!${name}.js*`), `!${GATES_DIR}/**`],
      target: 'node22',
      platform: 'node',
      ...library,
    },
    binaryBundle(binary),
    // The gates import the (first) binary bundle.
    ...nodeVersionGates(Object.keys(binary)[0]),
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
