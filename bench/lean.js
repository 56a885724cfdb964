// Helpers of the controller process (controller.js) and the driver alike, with nothing heavy imported: the controller
// process loads its code (the library and client-node) from provisioner-binary.js's module, as a provisioner binary
// would. common.js re-exports these.
import { performance } from 'node:perf_hooks';
import { fileURLToPath, URL, URLSearchParams } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PROVISIONER_NAME = 'bench.kprov.dev/memory';
export const STORAGE_CLASS = 'bench-memory';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on this machine. */
export function now() {
  return performance.timeOrigin + performance.now();
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
