import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor } from '../kubeconfig.js';
import { rest } from '../tiers/rest.js';
import { formatTable, type FormatTableOptions, type TableLike } from './table-text.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/**
 * What `kubectl get` prints for `path` on a server: asks for the server's Table output and renders it, or `No
 * resources found` for an empty list (kubectl's wording). For demos and logs, not for assertions.
 *
 * @param server - the testkit's base URL (e.g. `kit.url`), or a `KubeConfig` for any server.
 * @param path - a list or object path, e.g. `/api/v1/namespaces/default/persistentvolumeclaims`.
 * @throws Error when the server answers with an error status (the message has the status and body).
 */
export async function kubectlGet(server: string | KubeConfig, path: string, options: FormatTableOptions = {}): Promise<string> {
  const kc = typeof server === 'string' ? kubeConfigFor(server) : server;
  const res = await rest(kc, 'GET', path, { accept: TABLE });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body}`);
  const table = JSON.parse(res.body) as TableLike;
  return (table.rows ?? []).length === 0 ? 'No resources found' : formatTable(table, options).trimEnd();
}
