/**
 * `helm template` run on a chart folder, its output parsed into objects: what a test of a chart reads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseManifests, type Manifest } from '../manifests/manifests.js';
import { findHelm } from './find.js';

/** Options of {@link helmTemplate}. */
export interface HelmTemplateOptions {
  /** The release name (`.Release.Name`). */
  releaseName: string;
  /** The release namespace (`--namespace`, `.Release.Namespace`). */
  namespace: string;
  /**
   * Values given as a values file (`-f`), merged over the chart's `values.yaml` as helm merges them (`null` removes
   * a default).
   * @defaultValue none: the chart's own values
   */
  values?: Readonly<Record<string, unknown>>;
  /**
   * Values given with `--set key=value`, one flag each, after `values`; helm parses each as it parses `--set` (dotted
   * keys, `true` and numbers typed, a comma starts another key).
   * @defaultValue none
   */
  set?: Readonly<Record<string, string | number | boolean>>;
  /**
   * More arguments for `helm template`, after the others (`--show-only templates/x.yaml`, `--kube-version 1.32`).
   * @defaultValue none
   */
  extraArgs?: readonly string[];
}

/** The most output `helm template` may print. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Renders the chart in `chartDir` with `helm template` (the helm of {@link findHelm}) and returns the objects of its
 * output, in helm's order (its install order of kinds: Namespaces, ..., Secrets, ConfigMaps, ..., Deployments, ...),
 * parsed as `parseManifests` parses them (documents that are empty or only comments left out). `NOTES.txt` is not
 * part of the output, as with `helm template`.
 *
 * @throws Error with helm's own stderr when helm fails (a template error, values that do not fit), or as
 *   {@link findHelm} when there is no helm.
 */
export async function helmTemplate(chartDir: string, options: HelmTemplateOptions): Promise<Manifest[]> {
  const helm = await findHelm();
  const args = ['template', options.releaseName, chartDir, '--namespace', options.namespace];
  let valuesDir: string | undefined;
  try {
    if (options.values !== undefined) {
      valuesDir = await mkdtemp(path.join(tmpdir(), 'kprov-helm-values-'));
      const file = path.join(valuesDir, 'values.json');
      // JSON is YAML: helm reads it as a values file.
      await writeFile(file, JSON.stringify(options.values));
      args.push('--values', file);
    }
    for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set', `${key}=${String(value)}`);
    args.push(...(options.extraArgs ?? []));
    const stdout = await run(helm, args);
    return parseManifests(`helm template ${options.releaseName} ${chartDir}`, stdout);
  } finally {
    if (valuesDir !== undefined) await rm(valuesDir, { recursive: true, force: true });
  }
}

/** Runs `helm args...` and resolves with its stdout; rejects with its stderr when it fails. */
function run(helm: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(helm, args, { encoding: 'utf8', maxBuffer: MAX_OUTPUT_BYTES }, (err, stdout, stderr) => {
      if (err === null) {
        resolve(stdout);
        return;
      }
      const why = stderr.trim() !== '' ? stderr.trim() : err.message;
      reject(new Error(`helm ${args.join(' ')} failed (exit code ${String(err.code ?? err.signal)}):\n${why}`));
    });
  });
}
