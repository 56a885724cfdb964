import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EsbuildPlugin } from './plugin.js';

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
export const clientNodeWithoutSideEffects: EsbuildPlugin = {
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
export const clientNodeConfigByPath: EsbuildPlugin = {
  name: 'kprov-client-node-config-by-path',
  setup(build) {
    build.onLoad({ filter: CLIENT_NODE_CONFIG }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!GENERATED_INDEX_IMPORT.test(source)) {
        throw new Error(
          `${args.path}: its import of the generated index changed; update @kprov/provisioner-lib's clientNodeConfigByPath (src/bundle/client-node.ts)`,
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
