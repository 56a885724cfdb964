/**
 * Matching rules the scheduler and the PV controller share: label selectors, node selector terms (node affinity),
 * StorageClass allowed topologies, taints and tolerations, resource quantities and access modes. Each follows the
 * semantics of its Kubernetes counterpart (`k8s.io/apimachinery/pkg/labels`, `k8s.io/component-helpers/scheduling/corev1`,
 * `pkg/apis/core/v1/helper`, `k8s.io/apimachinery/pkg/api/resource`).
 */
import { quantityNumber } from '@kprov/quantity';
import { labelSelectorFromObject, matchesLabels } from '../selectors/labels.js';
import type {
  LabelSelector,
  NodeSelector,
  NodeSelectorTerm,
  SelectorRequirement,
  StorageClass,
  Taint,
  Toleration,
} from './types.js';

function requirementMatches(req: SelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const have = Number.parseInt(value, 10);
      const want = Number.parseInt(values[0] ?? '', 10);
      if (Number.isNaN(have) || Number.isNaN(want)) return false;
      return req.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/**
 * Whether `labels` match a `metav1.LabelSelector`. `undefined`/`null` is "no selector" and matches everything, as
 * does the empty selector `{}`.
 */
export function matchesLabelSelector(
  selector: LabelSelector | null | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (selector === undefined || selector === null) return true;
  return matchesLabels(labelSelectorFromObject(selector), labels);
}

/** Whether one node selector term matches; a term without requirements matches nothing. */
function termMatches(term: NodeSelectorTerm, labels: Record<string, string>, name: string): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  if (!exprs.every((r) => requirementMatches(r, labels[r.key]))) return false;
  return fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, name));
}

/** Whether a node (its labels and name) matches a `v1.NodeSelector`: any one of its terms (ORed). */
export function matchesNodeSelector(
  selector: NodeSelector | undefined,
  labels: Record<string, string> | undefined,
  name: string,
): boolean {
  if (selector === undefined) return true;
  const terms = selector.nodeSelectorTerms ?? [];
  return terms.some((t) => termMatches(t, labels ?? {}, name));
}

/** Whether node labels satisfy a StorageClass's `allowedTopologies` (none means no restriction). */
export function matchesAllowedTopologies(sc: StorageClass, labels: Record<string, string> | undefined): boolean {
  const terms = sc.allowedTopologies ?? [];
  if (terms.length === 0) return true;
  const have = labels ?? {};
  return terms.some((t) =>
    (t.matchLabelExpressions ?? []).every((e) => {
      const v = have[e.key];
      return v !== undefined && (e.values ?? []).includes(v);
    }),
  );
}

/** Whether one toleration tolerates a taint (`v1.Toleration.ToleratesTaint`). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** The first `NoSchedule`/`NoExecute` taint none of the tolerations tolerate, if any. */
export function firstUntoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[] | undefined,
): Taint | undefined {
  return taints.find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') &&
      !(tolerations ?? []).some((t) => tolerates(t, taint)),
  );
}

/** The `storage` entry of a resource list as a number; a missing entry counts as 0. */
export function storageOf(list: Record<string, string | number> | undefined): number {
  const q = list?.storage;
  if (q === undefined) return 0;
  return quantityNumber(q) ?? 0;
}

/** Whether a volume's access modes include every mode a claim asks for (`CheckAccessModes`). */
export function hasAccessModes(
  volumeModes: readonly string[] | undefined,
  claimModes: readonly string[] | undefined,
): boolean {
  const have = new Set(volumeModes ?? []);
  return (claimModes ?? []).every((m) => have.has(m));
}
