import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor } from '../kubeconfig.js';
import { RestClient } from '../client/rest.js';
import { formatTable, type FormatTableOptions, type TableLike } from './table-text.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/**
 * What `kubectl get` prints for `path` on a server: asks for the server's Table output and renders it, or `No
 * resources found` for an empty list (kubectl's wording). For demos and logs, not for assertions.
 *
 * @param server - the testkit's base URL (e.g. `kit.url`), or a `KubeConfig` for any server.
 * @param path - a list or object path, e.g. `/api/v1/namespaces/default/persistentvolumeclaims`.
 * @throws ApiException when the server answers with an error status (the message has the method, path and message).
 */
export async function kubectlGet(
  server: string | KubeConfig,
  path: string,
  options: FormatTableOptions = {},
): Promise<string> {
  const kc = typeof server === 'string' ? kubeConfigFor(server) : server;
  const rest = new RestClient(kc);
  const table = (await rest.request('GET', path, { accept: TABLE }).finally(() => rest.close())) as TableLike;
  return (table.rows ?? []).length === 0 ? 'No resources found' : formatTable(table, options).trimEnd();
}
