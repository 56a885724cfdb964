import { isBuiltin } from 'node:module';
import type { EsbuildPlugin } from './plugin.js';

/**
 * Has the bundle load Node.js built-ins with `require` (the banner's) instead of `import`. An ES module import of a
 * built-in, even of one name (`import { request } from 'node:http'`), builds the built-in's whole namespace, which
 * reads every export: `node:http`'s lazy `WebSocket`, `CloseEvent` and `MessageEvent` then load Node.js's internal
 * copy of undici (0.75 MB of source; the binaries bundle their own undici and never use it). `require` returns the
 * module object and leaves its lazy exports unread: esbuild wraps it as a CommonJS module and reads a property where
 * the code uses it. The bench's process with nothing running (bench/baseline.js, medians of 15 runs) took 1.9 MiB
 * less RSS this way on Node.js 24 (heap after GC 10.9 MiB instead of 12.0) and 3.1 MiB less on Node.js 22.19, and
 * imported its module in 8 ms less.
 *
 * The module the importing code sees has, for each of the built-in's exports, a getter (and setter) of it, not the
 * export itself: esbuild's wrapper copies the exports' property descriptors, and a descriptor of some of Node.js's
 * lazy exports is their value. Copied from `node:util` itself, `util.parseArgs`, `util.diff` and
 * `util.setTraceSigInt` loaded 33 internal modules, `worker_threads` among them, into a program that used
 * `util.promisify` alone (`node:fs` and `node:buffer` load one more each).
 */
export const builtinsThroughRequire: EsbuildPlugin = {
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
      contents: `
        const builtin = require(${JSON.stringify(args.path)});
        const shim = {};
        for (const name of Object.getOwnPropertyNames(builtin)) {
          Object.defineProperty(shim, name, {
            get: () => builtin[name],
            set: (value) => { builtin[name] = value; },
            enumerable: true,
          });
        }
        module.exports = shim;
      `,
      loader: 'js',
    }));
  },
};
