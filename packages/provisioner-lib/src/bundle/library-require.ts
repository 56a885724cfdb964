import { dirname } from 'node:path';
import { DEFAULT_METRIC_MODULES } from '../metrics/default-metrics.js';
import type { EsbuildPlugin } from './plugin.js';

/**
 * The library (`@kprov/provisioner-lib`'s dist) loads client-node's entry point, undici, pino and prom-client's classes with
 * a `require` of its own (`createRequire(import.meta.url)`), when first needed, so that a program run from
 * node_modules loads only what it uses. A bundle has no node_modules beside it (the images ship `dist/` alone), and
 * esbuild cannot see such a `require`: for the library's modules, `node:module` becomes this module, whose
 * `createRequire` serves those names from the bundle (the names the library uses: esbuild keeps only those) and
 * anything else as Node.js's does.
 */
const LIBRARY_REQUIRE = 'kprov-library-require';
export const libraryRequire: EsbuildPlugin = {
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
        // see client-node.ts, esbuild leaves the lazily initialized modules of these names uninitialized), and each required
        // when the library first asks for it: esbuild then wraps these modules to run on that first call, so that a
        // binary that never asks for undici, client-node's KubeConfig or prom-client's default metrics does not run
        // them (imported at the top of this module instead, every binary ran undici, client-node's generated client
        // and prom-client's entry point, its cluster and Pushgateway code, as it started).
        // A require esbuild cannot resolve inside a try block is left to run time: a program that does not install
        // an optional peer of the library (pino, prom-client) still bundles, and fails only if it uses it.
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
          'js-yaml': () => require('js-yaml'),
          undici: () => { try { return require('undici'); } finally {} },
          pino: () => { try { return require('pino'); } finally {} },
          'prom-client/lib/counter': () => { try { return require('prom-client/lib/counter'); } finally {} },
          'prom-client/lib/gauge': () => { try { return require('prom-client/lib/gauge'); } finally {} },
          'prom-client/lib/histogram': () => { try { return require('prom-client/lib/histogram'); } finally {} },
          'prom-client/lib/registry': () => { try { return require('prom-client/lib/registry'); } finally {} },
${DEFAULT_METRIC_MODULES.map((id) => `          '${id}': () => { try { return require('${id}'); } finally {} },\n`).join('')}        };
        export function createRequire(url) {
          const own = nodeModule.createRequire(url);
          return (id) => (Object.hasOwn(bundled, id) ? bundled[id]() : own(id));
        }
        export const isBuiltin = nodeModule.isBuiltin;
      `,
    }));
  },
};
