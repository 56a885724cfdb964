/**
 * CustomResourceDefinitions from files, installed and awaited, as controller-runtime envtest's `CRDInstallOptions`
 * (`CRDDirectoryPaths`) do it: each path a file or a folder of `.yaml`, `.yml` and `.json` files (not recursive), each
 * file one or more documents; a CRD already there is replaced; and the call returns once each is Established and its
 * resource is served.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { RestClient, statusOf, type JsonObject } from '../client/rest.js';
import { parseManifests, type Manifest } from '../manifests/manifests.js';
import { waitFor } from '../process/wait-for.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Options of {@link installCRDs}. */
export interface CRDInstallOptions {
  /**
   * Files and folders of CRDs (envtest's `CRDDirectoryPaths`): a folder contributes its `.yaml`, `.yml` and `.json`
   * files, not its subfolders; documents of other kinds (a `kustomization.yaml`) are skipped. A path that does not
   * exist, or that holds no CRD, is an error (envtest ignores it unless `ErrorIfCRDPathMissing`). Default none.
   */
  paths?: readonly string[];
  /** CRD objects to install besides those of `paths` (envtest's `CRDs`). Default none. */
  crds?: readonly Manifest[];
  /** How long the CRDs may take to be Established and served, in ms. Default 30 000. */
  timeoutMs?: number;
}

/** A CRD with the file it came from, for messages. */
export interface FoundCRD {
  from: string;
  crd: Manifest & {
    spec?: { group?: string; names?: { plural?: string }; versions?: { name?: string; served?: boolean }[] };
  };
}

/** The files of one path: the path itself, or a folder's CRD files in name order. */
async function filesOf(p: string): Promise<string[]> {
  const info = await stat(p).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`CRD path ${p} ${err.code === 'ENOENT' ? 'does not exist' : `cannot be read (${err.code})`}`);
  });
  if (!info.isDirectory()) return [p];
  const entries = await readdir(p, { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && CRD_EXTENSIONS.has(path.extname(e.name)))
    .map((e) => path.join(p, e.name))
    .sort();
}

/** The CRDs of `paths` and `crds`, checked to be `apiextensions.k8s.io/v1`. */
export async function readCRDs(paths: readonly string[], crds: readonly Manifest[] = []): Promise<FoundCRD[]> {
  const found: FoundCRD[] = crds.map((crd, i) => ({ from: `crds[${i}]`, crd }));
  for (const p of paths.map((x) => path.resolve(x))) {
    const before = found.length;
    for (const file of await filesOf(p)) {
      for (const doc of parseManifests(file, await readFile(file, 'utf8'))) {
        if (doc.kind !== 'CustomResourceDefinition') continue;
        found.push({ from: file, crd: doc });
      }
    }
    if (found.length === before)
      throw new Error(
        `CRD path ${p} holds no CustomResourceDefinition (a folder is read for .yaml, .yml and .json files)`,
      );
  }
  for (const { from, crd } of found) {
    if (crd.apiVersion !== 'apiextensions.k8s.io/v1')
      throw new Error(
        `${from}: CustomResourceDefinition ${crd.metadata?.name ?? '(no name)'} is ${crd.apiVersion}; only apiextensions.k8s.io/v1 is served since Kubernetes 1.22`,
      );
    if (crd.metadata?.name === undefined) throw new Error(`${from}: a CustomResourceDefinition has no metadata.name`);
  }
  return found;
}

/** Whether the CRD says Established=True. */
function established(obj: JsonObject): boolean {
  const conditions = (obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return (conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
}

/**
 * Creates (or replaces) each CRD and resolves with their names once every one is Established and a list of its
 * first served version answers; see the module comment.
 *
 * @throws Error naming the file and the problem for a missing path, a file that does not parse, or a CRD that is
 *   not `apiextensions.k8s.io/v1`; the server's message for a CRD it refuses; or what was awaited after `timeoutMs`.
 */
export async function installCRDs(kubeConfig: KubeConfig, options: CRDInstallOptions): Promise<string[]> {
  return applyCRDs(kubeConfig, await readCRDs(options.paths ?? [], options.crds ?? []), options.timeoutMs);
}

/** {@link installCRDs} of CRDs already read with {@link readCRDs}. */
export async function applyCRDs(
  kubeConfig: KubeConfig,
  found: readonly FoundCRD[],
  timeoutMs = 30_000,
): Promise<string[]> {
  const rest = new RestClient(kubeConfig);
  try {
    for (const { from, crd } of found) {
      const name = crd.metadata?.name ?? '';
      const fail = (err: unknown): never => {
        throw new Error(
          `${from}: CustomResourceDefinition ${name}: ${err instanceof Error ? err.message : String(err)}`,
          {
            cause: err,
          },
        );
      };
      try {
        await rest.request('POST', CRD_PATH, { body: crd });
      } catch (err) {
        if (statusOf(err) !== 409) fail(err);
        // Already there (a CRD of an earlier run on a kept data folder): replaced, as envtest does.
        const current = await rest.request('GET', `${CRD_PATH}/${name}`);
        const resourceVersion = (current.metadata as { resourceVersion?: string }).resourceVersion;
        await rest
          .request('PUT', `${CRD_PATH}/${name}`, { body: { ...crd, metadata: { ...crd.metadata, resourceVersion } } })
          .catch(fail);
      }
    }
    for (const { crd } of found) {
      const name = crd.metadata?.name ?? '';
      await waitFor(
        `CustomResourceDefinition ${name} Established`,
        async () => (established(await rest.request('GET', `${CRD_PATH}/${name}`)) ? true : undefined),
        { timeoutMs },
      );
      const version = crd.spec?.versions?.find((v) => v.served !== false)?.name;
      const plural = crd.spec?.names?.plural;
      if (version !== undefined && plural !== undefined)
        await waitFor(
          `${plural}.${crd.spec?.group ?? ''}/${version} served`,
          async () => {
            await rest.request('GET', `/apis/${crd.spec?.group ?? ''}/${version}/${plural}`, { query: { limit: 1 } });
            return true;
          },
          { timeoutMs },
        );
    }
    return found.map((f) => f.crd.metadata?.name ?? '');
  } finally {
    await rest.close();
  }
}
