/**
 * The helper pod template (`helperPod.yaml` of the provisioner's ConfigMap): parsing and the safety checks that
 * upstream added in v0.0.36, which `--allow-unsafe-helper-pod-template` (`ALLOW_UNSAFE_HELPER_POD_TEMPLATE=true`)
 * turns off.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

/** The command-line flag that allows templates failing {@link validateHelperPodTemplate}. */
export const FLAG_ALLOW_UNSAFE_HELPER_POD_TEMPLATE = 'allow-unsafe-helper-pod-template';

/** A template that cannot be used; the message is upstream's. */
export class HelperPodTemplateError extends Error {
  override readonly name = 'HelperPodTemplateError';
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether the JSON shape could be unmarshalled into a Go `v1.Pod` (the parts the provisioner relies on). */
function podShapeProblem(doc: unknown): string | undefined {
  if (doc === null) return undefined;
  if (!isObject(doc)) return 'not an object';
  for (const key of ['metadata', 'spec'] as const) {
    if (doc[key] !== undefined && doc[key] !== null && !isObject(doc[key])) return `${key} is not an object`;
  }
  const spec = isObject(doc.spec) ? doc.spec : {};
  for (const key of ['containers', 'initContainers', 'ephemeralContainers', 'volumes', 'tolerations'] as const) {
    const list = spec[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || !list.every(isObject)) return `spec.${key} is not a list of objects`;
  }
  for (const c of (spec.containers as JsonObject[] | undefined) ?? []) {
    for (const key of ['env', 'envFrom', 'volumeMounts', 'command', 'args'] as const) {
      if (c[key] !== undefined && c[key] !== null && !Array.isArray(c[key])) return `containers[].${key} is not a list`;
    }
  }
  return undefined;
}

/** Go's `json.Unmarshal` leaves a field nil for JSON `null`; drop nulls so `undefined` means nil everywhere. */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, value] of Object.entries(v)) if (value !== null) out[k] = dropNulls(value);
    return out;
  }
  return v;
}

/**
 * Parses `helperPod.yaml` and, unless `allowUnsafe`, validates it ({@link validateHelperPodTemplate}). Throws a
 * {@link HelperPodTemplateError} with upstream's messages: `invalid YAMLToJSON the helper pod with helperPodYaml: <yaml>`,
 * `invalid unmarshal the helper pod with helperPodJson: <json>`, `helper pod template does not specify any container`,
 * or a validation message. Returns no pod when rejected.
 */
export function loadHelperPodTemplate(helperPodYaml: string, allowUnsafe: boolean): V1Pod {
  let doc: unknown;
  try {
    doc = parseYaml(helperPodYaml) as unknown;
  } catch {
    throw new HelperPodTemplateError(`invalid YAMLToJSON the helper pod with helperPodYaml: ${helperPodYaml}`);
  }
  if (podShapeProblem(doc) !== undefined) {
    throw new HelperPodTemplateError(`invalid unmarshal the helper pod with helperPodJson: ${JSON.stringify(doc)}`);
  }
  const pod = (dropNulls(doc) ?? {}) as V1Pod;
  if ((pod.spec?.containers ?? []).length === 0) {
    throw new HelperPodTemplateError('helper pod template does not specify any container');
  }
  validateHelperPodTemplate(pod, allowUnsafe);
  return pod;
}

function forbidden(what: string): HelperPodTemplateError {
  return new HelperPodTemplateError(
    `helper pod template must not ${what} unless ${FLAG_ALLOW_UNSAFE_HELPER_POD_TEMPLATE} is enabled`,
  );
}

function nonEmpty(list: readonly unknown[] | undefined): boolean {
  return list !== undefined && list.length > 0;
}

/**
 * Upstream's checks, in upstream's order (the first failure is thrown): exactly one container; no initContainers,
 * ephemeralContainers, custom volumes, host namespaces, `spec.nodeName`, `spec.serviceAccountName`, volumeMounts,
 * envFrom, lifecycle hooks, probes, `env[].valueFrom`; pod securityContext without `runAsUser: 0`,
 * `runAsGroup: 0` or sysctls; container securityContext without `privileged: true`, added capabilities or
 * `allowPrivilegeEscalation: true`. Hardening settings, image, resources, scheduling fields, labels, annotations and
 * plain env values are allowed. Does nothing when `allowUnsafe`.
 */
export function validateHelperPodTemplate(pod: V1Pod, allowUnsafe: boolean): void {
  if (allowUnsafe) return;
  const spec = pod.spec;
  const containers = spec?.containers ?? [];
  if (containers.length !== 1)
    throw new HelperPodTemplateError('helper pod template must specify exactly one container');
  const c = containers[0]!;
  const checks: [boolean, string][] = [
    [nonEmpty(spec?.initContainers), 'define initContainers'],
    [nonEmpty(spec?.ephemeralContainers), 'define ephemeralContainers'],
    [nonEmpty(spec?.volumes), 'define custom volumes'],
    [spec?.hostNetwork === true || spec?.hostPID === true || spec?.hostIPC === true, 'enable host namespaces'],
    [(spec?.nodeName ?? '') !== '', 'set spec.nodeName'],
    [(spec?.serviceAccountName ?? '') !== '', 'set spec.serviceAccountName'],
    [nonEmpty(c.volumeMounts), 'define custom volumeMounts'],
    [nonEmpty(c.envFrom), 'define envFrom'],
    [c.lifecycle !== undefined, 'define container lifecycle hooks'],
    [c.livenessProbe !== undefined, 'define container livenessProbe'],
    [c.readinessProbe !== undefined, 'define container readinessProbe'],
    [c.startupProbe !== undefined, 'define container startupProbe'],
  ];
  for (const env of c.env ?? [])
    checks.push([env.valueFrom !== undefined, `define env.valueFrom (env ${JSON.stringify(env.name ?? '')})`]);
  const psc = spec?.securityContext;
  checks.push(
    [psc?.runAsUser === 0, 'set pod runAsUser to 0 (root)'],
    [psc?.runAsGroup === 0, 'set pod runAsGroup to 0 (root)'],
    [nonEmpty(psc?.sysctls), 'define sysctls'],
  );
  const sc = c.securityContext;
  checks.push(
    [sc?.privileged === true, 'set privileged: true'],
    [nonEmpty(sc?.capabilities?.add), 'add capabilities'],
    [sc?.allowPrivilegeEscalation === true, 'set allowPrivilegeEscalation: true'],
  );
  for (const [bad, what] of checks) if (bad) throw forbidden(what);
}
