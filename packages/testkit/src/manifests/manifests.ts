/**
 * Checks for the YAML manifests a package ships (a deploy/ folder, examples, a rendered chart), without a cluster:
 * strict parsing of YAML streams, validation against the Kubernetes OpenAPI schemas through model classes the caller
 * brings (kubernetes-models), object names, and RBAC rule lookups.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** What every object in a manifest has. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
}

/** A DNS-1123 subdomain: what `metadata.name` must be for most kinds. */
export const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The objects of a YAML stream, strictly: a YAML error or warning (a duplicate key, say) or a document that is not a
 * mapping throws, naming `file` and the document; empty documents are skipped, as kubectl skips them.
 */
export function parseManifests(file: string, text: string): Manifest[] {
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${file}: not a YAML stream`);
  const out: Manifest[] = [];
  for (const [i, doc] of docs.entries()) {
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length > 0) throw new Error(`${file} document ${i + 1}: ${problems.map((p) => p.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${file} document ${i + 1}: not a mapping`);
    out.push(value as Manifest);
  }
  return out;
}

/** Manifest files read with {@link loadManifestFiles}. */
export interface ManifestFiles {
  /** The objects of each file, by its name; none for a file that does not parse. */
  readonly byFile: ReadonlyMap<string, Manifest[]>;
  /** Why a file did not parse, by its name: kept for a per-file test to report, so one bad file hides no other test. */
  readonly parseErrors: ReadonlyMap<string, Error>;
}

/** Reads and parses ({@link parseManifests}) each of `files`, named relative to `dir`. */
export function loadManifestFiles(dir: string, files: readonly string[]): ManifestFiles {
  const byFile = new Map<string, Manifest[]>();
  const parseErrors = new Map<string, Error>();
  for (const file of files) {
    try {
      byFile.set(file, parseManifests(file, readFileSync(join(dir, file), 'utf8')));
    } catch (e) {
      parseErrors.set(file, e instanceof Error ? e : new Error(String(e)));
      byFile.set(file, []);
    }
  }
  return { byFile, parseErrors };
}

/** A model class as kubernetes-models has them: its static apiVersion and kind, and instances that validate. */
export type ManifestModel = { readonly apiVersion: string; readonly kind: string } & (new (data: never) => {
  validate(): void;
});

/**
 * A function that validates an object against the schema of its apiVersion and kind, for the kinds of `models`; an
 * object of any other kind throws `no schema for apiVersion … kind …` instead of going unchecked.
 */
export function manifestValidator(models: readonly ManifestModel[]): (doc: Manifest) => void {
  const byKind = new Map(models.map((model) => [`${model.apiVersion}/${model.kind}`, model]));
  return (doc) => {
    const model = byKind.get(`${doc.apiVersion}/${doc.kind}`);
    if (model === undefined) throw new Error(`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
    new model(doc as never).validate();
  };
}

/** An RBAC policy rule, as far as {@link rulesAllow} reads it. */
export interface PolicyRuleLike {
  apiGroups?: string[] | undefined;
  resources?: string[] | undefined;
  verbs: string[];
}

/** Whether one of `rules` grants `verb` on `resource` of API group `group` (wildcards included). */
export function rulesAllow(
  rules: readonly PolicyRuleLike[] | undefined,
  group: string,
  resource: string,
  verb: string,
): boolean {
  const has = (list: string[] | undefined, v: string): boolean =>
    list !== undefined && (list.includes(v) || list.includes('*'));
  return (rules ?? []).some((r) => has(r.apiGroups, group) && has(r.resources, resource) && has(r.verbs, verb));
}
