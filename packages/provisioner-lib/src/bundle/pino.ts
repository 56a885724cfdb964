import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EsbuildPlugin } from './plugin.js';

/** pino's own modules: `pino.js` and `lib/*.js` of the `pino` package. */
const PINO_MODULE = /[/\\]pino[/\\](pino\.js|lib[/\\][^/\\]+\.js)$/;
/** pino's helpers, whose `isMainThread` decides how it flushes a destination of its own at exit. */
const PINO_TOOLS = /[/\\]pino[/\\]lib[/\\]tools\.js$/;
const IS_MAIN_THREAD_IMPORT = "const { isMainThread } = require('worker_threads')";
const LAZY = 'kprov-pino-lazy-class';

/**
 * Leaves pino's thread and file writers unloaded until pino makes one. Loading pino loads `sonic-boom` (its file
 * destination), `thread-stream` (its transports' worker thread) and, through them and its helpers, Node.js's
 * `assert` and `worker_threads`; a binary that gives pino a destination of its own (the runtime's loggers do) never
 * uses any of them. In the bundle, pino's `require` of each of the two packages gets a stand-in that loads the package
 * when pino first makes one (`new`) and answers `instanceof` as the class would, and pino's helpers read
 * `worker_threads`' `isMainThread` where they use it, not as they load. local-static at rest with 50 volumes took
 * 0.6 MiB less (bench/README.md, local-static).
 *
 * Hand-written because nothing configures what pino loads. If pino's helpers no longer import `isMainThread` as this
 * expects, they are bundled as they are (the bundle still works, `worker_threads` loaded as before), and the test
 * `test/bundle/pino.test.ts` says so.
 */
export const pinoWritersWhenUsed: EsbuildPlugin = {
  name: 'kprov-pino-writers-when-used',
  setup(build) {
    build.onResolve({ filter: /^(sonic-boom|thread-stream)$/ }, async (args) => {
      if (args.kind !== 'require-call' || !PINO_MODULE.test(args.importer) || args.pluginData === LAZY)
        return undefined;
      const real = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: LAZY,
      });
      if (real.errors.length > 0 || real.external) return undefined;
      return { path: real.path, namespace: LAZY };
    });
    build.onLoad({ filter: /./, namespace: LAZY }, (args) => ({
      resolveDir: dirname(args.path),
      loader: 'js',
      contents: `
        let loaded;
        const load = () => (loaded ??= require(${JSON.stringify(args.path)}));
        function WhenUsed(...args) {
          return new (load())(...args);
        }
        Object.defineProperty(WhenUsed, Symbol.hasInstance, { value: (value) => loaded !== undefined && value instanceof loaded });
        module.exports = WhenUsed;
      `,
    }));
    build.onLoad({ filter: PINO_TOOLS }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(IS_MAIN_THREAD_IMPORT)) return undefined;
      const contents = source
        .replace(IS_MAIN_THREAD_IMPORT, "const kprovWorkerThreads = () => require('worker_threads')")
        .replaceAll(/\bisMainThread\b/g, 'kprovWorkerThreads().isMainThread');
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};
