import { formatTable, type FormatTableOptions, type TableLike } from './table-text.js';

/**
 * What `kubectl get` prints for `path` on the server at `url`: asks for the server's Table output and renders it,
 * or `No resources found` for an empty list (kubectl's wording). For demos and logs, not for assertions.
 *
 * @param url - the server's base URL, e.g. `kit.url`.
 * @param path - a list or object path, e.g. `/api/v1/namespaces/default/persistentvolumeclaims`.
 * @throws Error when the server answers with an error status (the message has the status and body).
 */
export async function kubectlGet(url: string, path: string, options: FormatTableOptions = {}): Promise<string> {
  const res = await fetch(`${url}${path}`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  const table = (await res.json()) as TableLike;
  return (table.rows ?? []).length === 0 ? 'No resources found' : formatTable(table, options).trimEnd();
}
