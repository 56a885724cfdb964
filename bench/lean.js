// What the controller process (controller.js) needs: client-node, the built library and a few helpers. It does not
// import the testkit, so the controller's memory is that of a provisioner binary. common.js re-exports all of it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL, URLSearchParams } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PROVISIONER_NAME = 'bench.kprov.dev/memory';
export const STORAGE_CLASS = 'bench-memory';

/**
 * The root package has no dependency on the workspace packages, so client-node is resolved from
 * provisioner-lib's own dependencies: the same file (and module instance) the built library imports.
 */
const libRequire = createRequire(join(ROOT, 'packages/provisioner-lib/package.json'));
export const k8s = await import(pathToFileURL(libRequire.resolve('@kubernetes/client-node')).href);
/** The built library; `KPROV_BENCH_LIB` points at another build of it (a `dist/index.js`), to compare versions. */
export const LIB_PATH = process.env.KPROV_BENCH_LIB ?? join(ROOT, 'packages/provisioner-lib/dist/index.js');
export const lib = await import(pathToFileURL(LIB_PATH).href);

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on this machine. */
export function now() {
  return performance.timeOrigin + performance.now();
}

/** Loads the kubeconfig `kprov-testkit serve` wrote, with the client-node instance the built library uses. */
export function loadKubeConfig(path) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** `verb resource[/subresource]` of a Kubernetes API request, as the API server's audit log names it. */
export function classify(method, path) {
  const [pathname, query = ''] = path.split('?');
  const params = new URLSearchParams(query);
  let parts = pathname.split('/').filter((p) => p !== '');
  if (parts[0] === 'api') parts = parts.slice(2);
  else if (parts[0] === 'apis') parts = parts.slice(3);
  else return { verb: method.toLowerCase(), resource: pathname };
  if (parts[0] === 'namespaces' && parts.length >= 3) parts = parts.slice(2);
  const [resource = '', name, sub] = parts;
  const target = sub === undefined ? resource : `${resource}/${sub}`;
  let verb;
  switch (method.toUpperCase()) {
    case 'GET':
      verb =
        params.get('watch') === 'true' || params.get('watch') === '1' ? 'watch' : name === undefined ? 'list' : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { verb, resource: target };
}
