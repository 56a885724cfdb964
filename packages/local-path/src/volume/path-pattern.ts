/**
 * Where a volume's directory goes under its base path: the default folder name `<pv>_<ns>_<pvc>`, or the
 * StorageClass `pathPattern` rendered as a Go template over `{ PVName, PVC }` (upstream's `pvMetadata`).
 *
 * Security: upstream (v0.0.33–v0.0.37) checks the `<namespace>/<name>/` prefix on the raw rendered string and then
 * only rejects paths that climb above the base path, so `ns/name/../../otherns/x` passes and lands in another
 * tenant's directory. Here the rendered path is cleaned like Go's `filepath.Clean` first, any `..` element is
 * rejected, and the cleaned path must lie under `<namespace>/<name>/`. `allowUnsafePathPattern` turns every
 * check off, as upstream does.
 *
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { GoTemplate, GoTemplateError, type GoValue, type MissingKey } from './go-template.js';

/** What a pattern is rendered over: the PV name and the PVC's metadata. */
export interface PatternData {
  /** The PV name, `pvc-<PVC UID>`. */
  readonly pvName: string;
  /** The PVC's metadata (`.PVC` in templates). */
  readonly pvc: V1ObjectMeta;
}

/** A `pathPattern` that cannot be used: the message names the pattern and, when there is one, the rendered path. */
export class PathPatternError extends Error {
  override readonly name = 'PathPatternError';
  constructor(
    message: string,
    /** The `pathPattern` parameter as written. */
    readonly pattern: string,
    /** The rendered path, when rendering got that far. */
    readonly rendered?: string,
  ) {
    super(message);
  }
}

/** The `ObjectMeta` fields that exist in Go but are not offered to templates (times, lists of objects). */
const UNSUPPORTED_META_FIELDS = [
  'CreationTimestamp',
  'DeletionTimestamp',
  'DeletionGracePeriodSeconds',
  'OwnerReferences',
  'Finalizers',
  'ManagedFields',
] as const;

function stringMap(m: Readonly<Record<string, string>> | undefined): GoValue {
  return { kind: 'map', type: 'map[string]string', entries: m };
}

/**
 * The template data for `pathPattern`, `userPattern`, `groupPattern` and `permPattern`, with upstream's Go field
 * names: `.PVName`, and `.PVC.Name`, `.PVC.GenerateName`, `.PVC.Namespace`, `.PVC.SelfLink`, `.PVC.UID`,
 * `.PVC.ResourceVersion`, `.PVC.Generation`, `.PVC.Labels`, `.PVC.Annotations`.
 */
export function patternData(data: PatternData): GoValue {
  const m = data.pvc;
  const str = (value: string | undefined): GoValue => ({ kind: 'string', value: value ?? '' });
  const pvc: GoValue = {
    kind: 'struct',
    type: 'v1.ObjectMeta',
    fields: {
      Name: str(m.name),
      GenerateName: str(m.generateName),
      Namespace: str(m.namespace),
      SelfLink: str(m.selfLink),
      UID: str(m.uid),
      ResourceVersion: str(m.resourceVersion),
      Generation: { kind: 'int', value: m.generation ?? 0 },
      Labels: stringMap(m.labels),
      Annotations: stringMap(m.annotations),
    },
    unsupported: UNSUPPORTED_META_FIELDS,
  };
  return { kind: 'struct', type: 'main.pvMetadata', fields: { PVName: str(data.pvName), PVC: pvc } };
}

/**
 * Parses a pattern (to report syntax errors before anything happens). Throws a {@link GoTemplateError}.
 * @param name - the template name used in messages, e.g. `pathPattern`.
 */
export function parsePattern(name: string, pattern: string): GoTemplate {
  return GoTemplate.parse(name, pattern);
}

/** Renders a pattern over {@link patternData}. Throws a {@link GoTemplateError} on syntax or execution errors. */
export function renderPattern(
  name: string,
  pattern: string,
  data: PatternData,
  missingKey: MissingKey = 'default',
): string {
  return parsePattern(name, pattern).execute(patternData(data), missingKey);
}

/**
 * Go's `filepath.Clean` on a slash-separated path: collapses repeated slashes, drops `.` elements, resolves
 * `..` against the element before it (at the root `..` is dropped; leading `..` of a relative path stay), drops a
 * trailing slash; the empty result is `.`.
 */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** Go's `filepath.Join`: joins the non-empty elements with `/` and cleans the result; no elements give `""`. */
export function joinPath(...elements: string[]): string {
  const parts = elements.filter((e) => e !== '');
  return parts.length === 0 ? '' : cleanPath(parts.join('/'));
}

/** The default folder name, `<PV name>_<PVC namespace>_<PVC name>`. */
export function defaultFolderName(pvName: string, namespace: string, name: string): string {
  return `${pvName}_${namespace}_${name}`;
}

function patternError(pattern: string, detail: string, rendered?: string): PathPatternError {
  return new PathPatternError(`failed to create path from pattern ${pattern}: ${detail}`, pattern, rendered);
}

/**
 * Renders `pathPattern` into a folder relative to the base path.
 *
 * Safe mode (the default): the rendered path must be relative and non-empty, must contain no `..` element, and
 * once cleaned must lie under `<namespace>/<name>/` (and the raw string must start with that prefix, as upstream
 * requires — so `{{ .PVC.Namespace }}/{{ .PVC.Name }}` without the trailing slash is rejected, as upstream does).
 * The cleaned path is returned.
 *
 * Unsafe mode (`allowUnsafePathPattern`): the rendered string is returned as is; {@link volumePath} still joins
 * it under the base path.
 *
 * Errors ({@link PathPatternError}) read `failed to create path from pattern <pattern>: …` and end with the rendered
 * path when there is one.
 */
export function folderFromPattern(pattern: string, data: PatternData, allowUnsafePathPattern: boolean): string {
  let rendered: string;
  try {
    rendered = renderPattern('pathPattern', pattern, data);
  } catch (err) {
    if (err instanceof GoTemplateError) throw patternError(pattern, err.message);
    throw err;
  }
  if (allowUnsafePathPattern) return rendered;

  const namespace = data.pvc.namespace ?? '';
  const name = data.pvc.name ?? '';
  const prefix = `${joinPath(namespace, name)}/`;
  if (!rendered.startsWith(prefix)) {
    throw patternError(
      pattern,
      `pathPattern must start with {{ .PVC.Namespace }}/{{ .PVC.Name }}/: ${rendered}`,
      rendered,
    );
  }
  if (rendered.startsWith('/') || rendered.split('/').includes('..')) {
    throw patternError(pattern, `folder path contains invalid references: ${rendered}`, rendered);
  }
  const cleaned = cleanPath(rendered);
  if (cleaned !== prefix.slice(0, -1) && !cleaned.startsWith(prefix)) {
    throw patternError(pattern, `folder path ${cleaned} (cleaned from ${rendered}) is not under ${prefix}`, rendered);
  }
  return cleaned;
}

/** Inputs of {@link volumeFolder}. */
export interface FolderOptions extends PatternData {
  /** The StorageClass `pathPattern` parameter, if present. */
  readonly pathPattern?: string | undefined;
  /** Whether the safety checks are off (see {@link folderFromPattern}). */
  readonly allowUnsafePathPattern?: boolean | undefined;
}

/** The volume folder: {@link folderFromPattern} when a `pathPattern` is present, else {@link defaultFolderName}. */
export function volumeFolder(options: FolderOptions): string {
  if (options.pathPattern !== undefined) {
    return folderFromPattern(options.pathPattern, options, options.allowUnsafePathPattern ?? false);
  }
  return defaultFolderName(options.pvName, options.pvc.namespace ?? '', options.pvc.name ?? '');
}

/**
 * The volume's full path, `<basePath>/<folder>` joined and cleaned like Go's `filepath.Join` (so in unsafe mode an
 * absolute-looking folder still lands under the base path, and `..` can climb out of it as upstream allows).
 */
export function volumePath(basePath: string, folder: string): string {
  return joinPath(basePath, folder);
}
