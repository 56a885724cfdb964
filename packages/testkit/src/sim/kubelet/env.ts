/**
 * A container's environment and `$(VAR)` expansion, as the kubelet builds them (`pkg/kubelet/kubelet_pods.go`,
 * `third_party/forked/golang/expansion`): `envFrom` first, then `env` in order, each value able to refer to the
 * variables defined before it; `command` and `args` are expanded with the result.
 */
import type { KubeletCluster } from './cluster.js';
import { podMetadataField } from './fields.js';
import type { Container, Pod } from '../types.js';
import { objectData } from './volumes.js';

/** A container whose configuration cannot be built yet (kubelet reason `CreateContainerConfigError`). */
export class ContainerConfigError extends Error {
  override readonly name = 'ContainerConfigError';
}

/**
 * Expands `$(NAME)` references with `vars`; `$$` stands for a literal `$` (so `$$(NAME)` stays `$(NAME)`), and a
 * reference to an undefined variable or without a closing parenthesis is kept as written.
 */
export function expand(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i += 1;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = vars.get(name);
      out += value ?? `$(${name})`;
      i = close + 1;
    } else {
      out += '$';
      i += 1;
    }
  }
  return out;
}

/** What `fieldRef` can read, besides the pod object itself. */
export interface FieldContext {
  hostIP: string;
  podIP: string;
}

function fieldValue(pod: Pod, fieldPath: string, ctx: FieldContext): string {
  const meta = podMetadataField(pod, fieldPath);
  if (meta !== undefined) return meta;
  switch (fieldPath) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP;
    default:
      throw new ContainerConfigError(`unsupported fieldPath: ${fieldPath}`);
  }
}

function keyValue(
  cluster: KubeletCluster,
  kind: 'configmaps' | 'secrets',
  namespace: string,
  name: string,
  key: string,
  optional: boolean,
): string | undefined {
  const data = objectData(cluster, kind, namespace, name);
  const label = kind === 'configmaps' ? 'configmap' : 'secret';
  if (data === undefined) {
    if (optional) return undefined;
    throw new ContainerConfigError(`${label} "${name}" not found`);
  }
  const value = data.get(key);
  if (value === undefined) {
    if (optional) return undefined;
    throw new ContainerConfigError(
      `couldn't find key ${key} in ${kind === 'configmaps' ? 'ConfigMap' : 'Secret'} ${namespace}/${name}`,
    );
  }
  return value.toString('utf8');
}

/**
 * The variables a container's spec defines (`envFrom`, then `env`), expanded but not path-mapped. Throws
 * {@link ContainerConfigError} for a missing non-optional configMap, secret or key.
 */
export function containerEnv(
  cluster: KubeletCluster,
  pod: Pod,
  container: Container,
  ctx: FieldContext,
): Map<string, string> {
  const namespace = pod.metadata.namespace ?? '';
  const vars = new Map<string, string>();
  for (const src of container.envFrom ?? []) {
    const prefix = src.prefix ?? '';
    const ref = src.configMapRef ?? src.secretRef;
    if (ref === undefined) continue;
    const kind = src.configMapRef !== undefined ? 'configmaps' : 'secrets';
    const data = objectData(cluster, kind, namespace, ref.name ?? '');
    if (data === undefined) {
      if (ref.optional === true) continue;
      throw new ContainerConfigError(`${kind === 'configmaps' ? 'configmap' : 'secret'} "${ref.name ?? ''}" not found`);
    }
    for (const [k, v] of data) vars.set(prefix + k, v.toString('utf8'));
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    let value: string | undefined;
    if (from === undefined) value = expand(e.value ?? '', vars);
    else if (from.fieldRef !== undefined) value = fieldValue(pod, from.fieldRef.fieldPath, ctx);
    else if (from.configMapKeyRef !== undefined) {
      const r = from.configMapKeyRef;
      value = keyValue(cluster, 'configmaps', namespace, r.name ?? '', r.key, r.optional === true);
    } else if (from.secretKeyRef !== undefined) {
      const r = from.secretKeyRef;
      value = keyValue(cluster, 'secrets', namespace, r.name ?? '', r.key, r.optional === true);
    } else {
      value = ''; // resourceFieldRef: no resource accounting in the simulation.
    }
    if (value !== undefined) vars.set(e.name, value);
  }
  return vars;
}
