import { GROUP_VERSIONS, RESOURCES, type ResourceType } from '../api/resources.js';

/**
 * A minimal OpenAPI v3 discovery: enough for kubectl to see that each kind's PATCH takes the `fieldValidation`
 * parameter, so it leaves field validation to the server instead of downloading full schemas. Schemas are not
 * served; kubectl then computes apply patches from its compiled-in types, as it does for built-in kinds.
 */

const HASH = 'kprov-testkit-0001';

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function objectPath(r: ResourceType): string {
  const base = `/${gvPath(r.group, r.version)}`;
  return r.namespaced ? `${base}/namespaces/{namespace}/${r.plural}/{name}` : `${base}/${r.plural}/{name}`;
}

function document(group: string, version: string): object {
  const paths: Record<string, object> = {};
  for (const r of RESOURCES.filter((x) => x.group === group && x.version === version)) {
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    paths[objectPath(r)] = {
      patch: {
        operationId: `patch${r.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters: [
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ],
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas: {} } };
}

/** Answers `/openapi/v3` and `/openapi/v3/<group-version path>`, or `undefined`. */
export function openApiV3(path: string): object | undefined {
  if (path === '/openapi/v3') {
    const paths: Record<string, object> = {};
    for (const gv of [{ group: '', version: 'v1' }, ...GROUP_VERSIONS]) {
      const p = gvPath(gv.group, gv.version);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${HASH}` };
    }
    return { paths };
  }
  const m = /^\/openapi\/v3\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (m === null) return undefined;
  const group = m[1] !== undefined ? '' : (m[2] ?? '');
  const version = m[1] ?? m[3] ?? '';
  if (group === '' && version !== 'v1') return undefined;
  if (group !== '' && !GROUP_VERSIONS.some((g) => g.group === group && g.version === version)) return undefined;
  return document(group, version);
}
