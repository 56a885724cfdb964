/**
 * StorageClass parameters and annotations, and the PVC `volumeType` annotation, parsed and validated up front.
 *
 * Upstream checks some of these only after the helper pod has created the directory (a bad `volumeType` leaves an
 * orphaned directory and re-runs setup on every retry). Here {@link parseVolumeParameters} and
 * {@link resolveVolume} check every input — including rendering the patterns — before anything is created.
 *
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { GoTemplateError } from './go-template.js';
import {
  cleanPath,
  parsePattern,
  PathPatternError,
  renderPattern,
  volumeFolder,
  type PatternData,
} from './path-pattern.js';

/** StorageClass parameter: force a base path from the node's `paths`. */
export const PARAM_NODE_PATH = 'nodePath';
/** StorageClass parameter: Go template for the volume sub-directory. */
export const PARAM_PATH_PATTERN = 'pathPattern';
/** StorageClass parameter, else annotation: turn off the `pathPattern` safety checks. */
export const PARAM_ALLOW_UNSAFE_PATH_PATTERN = 'allowUnsafePathPattern';
/** StorageClass parameter: node label key of the PV node affinity. */
export const PARAM_NODE_AFFINITY_KEY = 'nodeAffinityKey';
/** StorageClass parameter, else annotation: template for `VOL_USER`. */
export const PARAM_USER_PATTERN = 'userPattern';
/** StorageClass parameter, else annotation: template for `VOL_GROUP`. */
export const PARAM_GROUP_PATTERN = 'groupPattern';
/** StorageClass parameter, else annotation: template for `VOL_PERM`. */
export const PARAM_PERM_PATTERN = 'permPattern';
/** StorageClass annotation (not a parameter): default volume type of the class. */
export const ANNOTATION_DEFAULT_VOLUME_TYPE = 'defaultVolumeType';
/** PVC annotation: volume type of this claim, overriding the class default. */
export const ANNOTATION_VOLUME_TYPE = 'volumeType';
/** The node affinity key used when `nodeAffinityKey` is absent or empty. */
export const DEFAULT_NODE_AFFINITY_KEY = 'kubernetes.io/hostname';

/** The PV source kind: `hostPath` (default) or `local`. */
export type VolumeType = 'hostPath' | 'local';

/** An invalid parameter or annotation. `key` names it; `allowed` describes what would be accepted. */
export class ParameterError extends Error {
  override readonly name = 'ParameterError';
  constructor(
    message: string,
    /** The parameter or annotation key at fault. */
    readonly key: string,
    /** What the key accepts. */
    readonly allowed: string,
  ) {
    super(message);
  }
}

/** The validated parameters of a StorageClass (and the claim's `volumeType`). */
export interface VolumeParameters {
  /** `nodePath`, when present and non-empty (empty counts as not requested, as upstream). */
  readonly nodePath: string | undefined;
  /** `pathPattern`, when present (already parsed successfully). */
  readonly pathPattern: string | undefined;
  /** `allowUnsafePathPattern` (parameter, else annotation); only consulted when `pathPattern` is present. */
  readonly allowUnsafePathPattern: boolean;
  /** `nodeAffinityKey`, or {@link DEFAULT_NODE_AFFINITY_KEY} when absent or empty. */
  readonly nodeAffinityKey: string;
  /** `userPattern` (parameter, else annotation), when present. */
  readonly userPattern: string | undefined;
  /** `groupPattern` (parameter, else annotation), when present. */
  readonly groupPattern: string | undefined;
  /** `permPattern` (parameter, else annotation), when present. */
  readonly permPattern: string | undefined;
  /** PVC `volumeType`, else StorageClass `defaultVolumeType`, else `hostPath`; normalised spelling. */
  readonly volumeType: VolumeType;
  /** Warnings to log (upstream's messages for an unparseable `allowUnsafePathPattern`). */
  readonly warnings: readonly string[];
}

/** Inputs of {@link parseVolumeParameters}. */
export interface ParameterSources {
  /** StorageClass `parameters`. */
  readonly parameters?: Readonly<Record<string, string>> | undefined;
  /** StorageClass `metadata.annotations`. */
  readonly storageClassAnnotations?: Readonly<Record<string, string>> | undefined;
  /** PVC `metadata.annotations`. */
  readonly pvcAnnotations?: Readonly<Record<string, string>> | undefined;
}

function get(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

const BOOL_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const BOOL_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's `strconv.ParseBool`: `undefined` when the text is not one of its accepted spellings. */
export function parseGoBool(text: string): boolean | undefined {
  if (BOOL_TRUE.has(text)) return true;
  if (BOOL_FALSE.has(text)) return false;
  return undefined;
}

/**
 * The volume type named by `value`, compared case-insensitively; throws upstream's
 * `failed to create persistent volume source: "<v>" is not a recognised volume type` (upstream's words) otherwise,
 * followed by which annotation to set to what.
 */
export function parseVolumeType(value: string, key: string = ANNOTATION_VOLUME_TYPE): VolumeType {
  switch (value.toLowerCase()) {
    case 'hostpath':
      return 'hostPath';
    case 'local':
      return 'local';
    default:
      throw new ParameterError(
        `failed to create persistent volume source: "${value}" is not a recognised volume type; ` +
          `set the ${key === ANNOTATION_VOLUME_TYPE ? "claim's" : "StorageClass's"} annotation ${key} to "local" or "hostPath"`,
        key,
        '"local" or "hostPath" (any letter case)',
      );
  }
}

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `key` is a valid Kubernetes label key: optional DNS-subdomain prefix and `/`, then a name of ≤ 63 chars. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

/** `use` of `kind`'s pattern, a template error thrown as upstream words it (`failed to create <kind> from pattern ...`). */
function withPattern<T>(kind: 'user' | 'group' | 'perm', pattern: string, use: () => T): T {
  try {
    return use();
  } catch (err) {
    if (err instanceof GoTemplateError) {
      throw new ParameterError(
        `failed to create ${kind} from pattern ${pattern}: ${err.message}`,
        `${kind}Pattern`,
        'a Go template',
      );
    }
    throw err;
  }
}

function checkPattern(kind: 'user' | 'group' | 'perm', pattern: string | undefined): void {
  if (pattern !== undefined) withPattern(kind, pattern, () => parsePattern(`${kind}Pattern`, pattern));
}

/**
 * Reads and validates every parameter and annotation; throws a {@link ParameterError} (or a
 * {@link PathPatternError} for a `pathPattern` that does not parse) naming the key. Other parameters are ignored.
 */
export function parseVolumeParameters(sources: ParameterSources): VolumeParameters {
  const { parameters, storageClassAnnotations: scAnn, pvcAnnotations } = sources;
  const warnings: string[] = [];

  let nodePath = get(parameters, PARAM_NODE_PATH);
  if (nodePath === '') nodePath = undefined;
  if (nodePath !== undefined && (!nodePath.startsWith('/') || cleanPath(nodePath) !== nodePath || nodePath === '/')) {
    throw new ParameterError(
      `invalid StorageClass parameter ${PARAM_NODE_PATH} "${nodePath}": must be an absolute, clean path other than / (no trailing slash, . or ..), one of the node's paths in the config`,
      PARAM_NODE_PATH,
      "an absolute, clean path listed in the node's paths",
    );
  }

  const pathPattern = get(parameters, PARAM_PATH_PATTERN);
  let allowUnsafePathPattern = false;
  if (pathPattern !== undefined) {
    try {
      parsePattern('pathPattern', pathPattern);
    } catch (err) {
      if (err instanceof GoTemplateError) {
        throw new PathPatternError(`failed to create path from pattern ${pathPattern}: ${err.message}`, pathPattern);
      }
      throw err;
    }
    const param = get(parameters, PARAM_ALLOW_UNSAFE_PATH_PATTERN);
    const annotation = get(scAnn, PARAM_ALLOW_UNSAFE_PATH_PATTERN);
    const raw = param ?? annotation;
    if (raw !== undefined) {
      const parsed = parseGoBool(raw);
      if (parsed === undefined) {
        const err = `strconv.ParseBool: parsing "${raw}": invalid syntax`;
        warnings.push(
          param !== undefined
            ? `failed to parse allowUnsafePathPattern ${raw}, defaulting to false: ${err}`
            : `failed to parse allow-unsafe-path-pattern annotation ${raw}, defaulting to false: ${err}`,
        );
      }
      allowUnsafePathPattern = parsed ?? false;
    }
  }

  const affinity = get(parameters, PARAM_NODE_AFFINITY_KEY) ?? '';
  if (affinity !== '' && !isLabelKey(affinity)) {
    throw new ParameterError(
      `invalid StorageClass parameter ${PARAM_NODE_AFFINITY_KEY} "${affinity}": must be a node label key (an optional DNS subdomain prefix and "/", then 1-63 alphanumerics, "-", "_" or ".", starting and ending alphanumeric)`,
      PARAM_NODE_AFFINITY_KEY,
      'a Kubernetes label key, or empty for kubernetes.io/hostname',
    );
  }

  const userPattern = get(parameters, PARAM_USER_PATTERN) ?? get(scAnn, PARAM_USER_PATTERN);
  const groupPattern = get(parameters, PARAM_GROUP_PATTERN) ?? get(scAnn, PARAM_GROUP_PATTERN);
  const permPattern = get(parameters, PARAM_PERM_PATTERN) ?? get(scAnn, PARAM_PERM_PATTERN);
  checkPattern('user', userPattern);
  checkPattern('group', groupPattern);
  checkPattern('perm', permPattern);

  const claimType = get(pvcAnnotations, ANNOTATION_VOLUME_TYPE);
  const classType = get(scAnn, ANNOTATION_DEFAULT_VOLUME_TYPE);
  let volumeType: VolumeType = 'hostPath';
  if (claimType !== undefined) volumeType = parseVolumeType(claimType, ANNOTATION_VOLUME_TYPE);
  else if (classType !== undefined) volumeType = parseVolumeType(classType, ANNOTATION_DEFAULT_VOLUME_TYPE);

  return {
    nodePath,
    pathPattern,
    allowUnsafePathPattern,
    nodeAffinityKey: affinity === '' ? DEFAULT_NODE_AFFINITY_KEY : affinity,
    userPattern,
    groupPattern,
    permPattern,
    volumeType,
    warnings,
  };
}

/** Everything provisioning needs from the parameters, resolved for one claim before anything is created. */
export interface ResolvedVolume extends VolumeParameters {
  /** The folder under the base path (default name or rendered `pathPattern`). */
  readonly folder: string;
  /** `VOL_USER`: the rendered `userPattern`, trimmed, or `""`. */
  readonly user: string;
  /** `VOL_GROUP`: the rendered `groupPattern`, trimmed, or `""`. */
  readonly group: string;
  /** `VOL_PERM`: the rendered `permPattern`, trimmed, or `""`. */
  readonly perm: string;
}

/** Inputs of {@link resolveVolume}. */
export interface ResolveInputs {
  /** StorageClass `parameters`. */
  readonly parameters?: Readonly<Record<string, string>> | undefined;
  /** StorageClass `metadata.annotations`. */
  readonly storageClassAnnotations?: Readonly<Record<string, string>> | undefined;
  /** The PV name, `pvc-<uid>`. */
  readonly pvName: string;
  /** The PVC's metadata. */
  readonly pvc: V1ObjectMeta;
}

/** A mode `chmod` takes: octal (`0750`), or POSIX symbolic clauses (`u=rwx,g=rx,o=`, `a+X`). */
const CHMOD_MODE = /^(?:[0-7]{1,4}|[ugoa]*(?:[-+=](?:[rwxXst]*|[ugo]))+(?:,[ugoa]*(?:[-+=](?:[rwxXst]*|[ugo]))+)*)$/;
/** White space, control characters, or the `:` that separates user and group in `chown user:group`. */
const NOT_AN_OWNER = /[\s\p{Cc}:]/u;

/**
 * Refuses a rendered value no setup script can apply (`chown "$VOL_USER:$VOL_GROUP"`, `chmod "$VOL_PERM"`), so that
 * the error comes before the directory is made rather than from the script after it. Empty values pass (upstream
 * passes them on when a claim renders nothing).
 */
function checkOwnerValue(kind: 'user' | 'group' | 'perm', pattern: string, value: string): void {
  if (value === '') return;
  const key = `${kind}Pattern`;
  if (kind === 'perm') {
    if (CHMOD_MODE.test(value)) return;
    throw new ParameterError(
      `failed to create perm from pattern ${pattern}: permPattern rendered "${value}", which is not a mode chmod accepts; render an octal mode such as 0750 or a symbolic one such as u=rwx,g=rx,o=`,
      key,
      'an octal or symbolic chmod mode',
    );
  }
  if (!NOT_AN_OWNER.test(value)) return;
  throw new ParameterError(
    `failed to create ${kind} from pattern ${pattern}: ${key} rendered "${value}", which contains white space, a control character or ":"; render one ${kind} name or numeric id`,
    key,
    `one ${kind} name or numeric id`,
  );
}

function renderOwnerPattern(kind: 'user' | 'group' | 'perm', pattern: string | undefined, data: PatternData): string {
  if (pattern === undefined) return '';
  const value = withPattern(kind, pattern, () => renderPattern(`${kind}Pattern`, pattern, data, 'error').trim());
  checkOwnerValue(kind, pattern, value);
  return value;
}

/**
 * {@link parseVolumeParameters}, then the folder ({@link volumeFolder}) and the `userPattern`/`groupPattern`/
 * `permPattern` values (rendered with `missingkey=error` and trimmed, as upstream). Unlike upstream, which passes
 * them on as opaque strings, a rendered `VOL_PERM` must be a chmod mode and a `VOL_USER`/`VOL_GROUP` one name or id
 * (no white space, control character or `:`).
 * Call it before running the helper pod: every error it can raise is raised here.
 */
export function resolveVolume(inputs: ResolveInputs): ResolvedVolume {
  const params = parseVolumeParameters({
    parameters: inputs.parameters,
    storageClassAnnotations: inputs.storageClassAnnotations,
    pvcAnnotations: inputs.pvc.annotations,
  });
  const data: PatternData = { pvName: inputs.pvName, pvc: inputs.pvc };
  const folder = volumeFolder({
    ...data,
    pathPattern: params.pathPattern,
    allowUnsafePathPattern: params.allowUnsafePathPattern,
  });
  return {
    ...params,
    folder,
    user: renderOwnerPattern('user', params.userPattern, data),
    group: renderOwnerPattern('group', params.groupPattern, data),
    perm: renderOwnerPattern('perm', params.permPattern, data),
  };
}
