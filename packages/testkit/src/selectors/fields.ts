/**
 * Field selectors as kube-apiserver parses, validates and evaluates them: `fields.ParseSelector` for the syntax,
 * the per-kind field label conversion functions of the scheme for which labels a resource accepts, and the
 * `ToSelectableFields` functions of the registries for the values an object offers.
 */

import { isPlainObject, type KubeObject } from '../api/objects.js';
import { RESOURCES, resourceKey } from '../api/resources.js';
import { badRequest } from '../api/status.js';

/** `=` and `==` both mean equality. */
export type FieldOperator = '=' | '==' | '!=';

/** One term of a field selector. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** The unescaped value. */
  readonly value: string;
}

/** A parsed field selector: the AND of its requirements. No requirements select everything. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/** Splits on commas that are not escaped by a backslash; escapes stay in the terms. */
function splitTerms(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

const OPERATORS: readonly FieldOperator[] = ['!=', '==', '='];

/** Splits a term at the first operator; the left-hand side has no escaping. */
function splitTerm(term: string): { field: string; operator: FieldOperator; raw: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of OPERATORS) {
      if (term.startsWith(operator, i))
        return { field: term.slice(0, i), operator, raw: term.slice(i + operator.length) };
    }
  }
  return undefined;
}

/** Removes the backslash escapes of `\\`, `\,` and `\=`; other escapes and bare `,` or `=` are errors. */
function unescapeValue(raw: string): string {
  let out = '';
  let escaped = false;
  for (const c of raw) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=')
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      // The real message prints the rune with %v, i.e. as its code point number.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0) ?? 0}`);
    } else {
      out += c;
    }
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses a field selector: comma-joined `field=value`, `field==value` or `field!=value` terms, where a value may
 * escape `\`, `,` and `=` with a backslash. Empty terms are skipped, terms are sorted as the real parser sorts
 * them, and nothing is trimmed. Which fields exist is checked separately by {@link validateFieldSelector}.
 *
 * @throws StatusError 400 BadRequest with the apimachinery message, e.g.
 *   `invalid selector: 'a'; can't understand 'a'` or `invalid field selector: invalid escape sequence: \x`.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const terms = splitTerms(text).sort();
  const requirements: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === '') continue;
    const split = splitTerm(term);
    if (split === undefined) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const value = unescapeValue(split.raw);
    // A term whose field and value are both empty selects everything and is dropped.
    if (split.field === '' && value === '') continue;
    requirements.push({ field: split.field, operator: split.operator, value });
  }
  return { requirements };
}

/** Whether a field set satisfies every requirement; a field the set lacks reads as the empty string. */
export function matchesFields(sel: FieldSelector, fields: Readonly<Record<string, string>>): boolean {
  return sel.requirements.every((r) => {
    const actual = Object.prototype.hasOwnProperty.call(fields, r.field) ? (fields[r.field] ?? '') : '';
    return r.operator === '!=' ? actual !== r.value : actual === r.value;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Supported labels per resource: the scheme's field label conversion functions (pkg/apis/core/v1/conversion.go,
// pkg/apis/events/v1/conversion.go). Kinds without one fall back to `runtime.DefaultMetaV1FieldSelectorConversion`.

const SUPPORTED: Readonly<Record<string, readonly string[]>> = {
  pods: [
    'metadata.name',
    'metadata.namespace',
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.podIPs',
    'status.nominatedNodeName',
    // Old v1 clients send spec.host; the server reads it as spec.nodeName.
    'spec.host',
  ],
  nodes: ['metadata.name', 'spec.unschedulable'],
  'batch/jobs': ['metadata.name', 'metadata.namespace', 'status.successful'],
  namespaces: ['status.phase', 'metadata.name'],
  secrets: ['type', 'metadata.namespace', 'metadata.name'],
  events: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
    'metadata.namespace',
    'metadata.name',
  ],
  'events.k8s.io/events': [
    'reason',
    'regarding.kind',
    'regarding.namespace',
    'regarding.name',
    'regarding.uid',
    'regarding.apiVersion',
    'regarding.resourceVersion',
    'regarding.fieldPath',
    'reportingController',
    'source',
    'type',
    'metadata.namespace',
    'metadata.name',
  ],
};

/**
 * Checks that every field of a selector is one the resource supports, as the list and watch handlers do before
 * selecting. Kinds with their own conversion function (pods, nodes, namespaces, secrets, both Event kinds) answer
 * `field label not supported: <field>`; all others accept only `metadata.name` and `metadata.namespace` and answer
 * `"<field>" is not a known field selector: only "metadata.name", "metadata.namespace"`. The first offending term
 * in sorted order is reported. The selector can then be matched against {@link fieldsOf} as it is.
 *
 * @throws StatusError 400 BadRequest for an unsupported field.
 */
export function validateFieldSelector(resourceKeyOfType: string, sel: FieldSelector): void {
  const own = Object.prototype.hasOwnProperty.call(SUPPORTED, resourceKeyOfType)
    ? SUPPORTED[resourceKeyOfType]
    : undefined;
  for (const { field } of sel.requirements) {
    if (own !== undefined) {
      if (own.includes(field)) continue;
      // batch/v1's conversion function words it its own way.
      if (resourceKeyOfType === 'batch/jobs')
        throw badRequest(`field label ${JSON.stringify(field)} not supported for Job`);
      throw badRequest(`field label not supported: ${field}`);
    } else if (field !== 'metadata.name' && field !== 'metadata.namespace') {
      throw badRequest(
        `${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Selectable field values (the registries' ToSelectableFields), read from the object's JSON.

function at(obj: unknown, ...path: string[]): unknown {
  let cur = obj;
  for (const key of path) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const flag = (v: unknown): string => (v === true ? 'true' : 'false');

function firstPodIP(pod: KubeObject): string {
  const ips = at(pod, 'status', 'podIPs');
  if (Array.isArray(ips) && ips.length > 0) return text(at(ips[0], 'ip'));
  return text(at(pod, 'status', 'podIP'));
}

/**
 * The selectable fields of an object, keyed by the labels clients use in selectors for that resource (see
 * {@link validateFieldSelector}). Every object has `metadata.name`, namespaced ones `metadata.namespace`; pods add
 * `spec.nodeName` (also as `spec.host`), `spec.restartPolicy`, `spec.schedulerName`, `spec.serviceAccountName`,
 * `spec.hostNetwork`, `status.phase`, `status.podIP` (the first of `status.podIPs`) and `status.nominatedNodeName`;
 * nodes `spec.unschedulable`; namespaces `status.phase`; secrets `type`; core events their `involvedObject.*`
 * fields, `reason`, `reportingComponent`, `source` (`source.component`, else `reportingComponent`) and `type`;
 * `events.k8s.io` events the same values under their `regarding.*` and `reportingController` names (and the core
 * names too). Labels the server accepts but does not fill, such as pods' `status.podIPs`, read as empty.
 */
export function fieldsOf(resourceKeyOfType: string, obj: KubeObject): Record<string, string> {
  const type = RESOURCES.find((r) => resourceKey(r) === resourceKeyOfType);
  const namespaced = type?.namespaced ?? typeof obj.metadata.namespace === 'string';
  const fields: Record<string, string> = { 'metadata.name': text(obj.metadata.name) };
  if (namespaced) fields['metadata.namespace'] = text(obj.metadata.namespace);

  switch (resourceKeyOfType) {
    case 'pods': {
      const nodeName = text(at(obj, 'spec', 'nodeName'));
      Object.assign(fields, {
        'spec.nodeName': nodeName,
        'spec.host': nodeName,
        'spec.restartPolicy': text(at(obj, 'spec', 'restartPolicy')),
        'spec.schedulerName': text(at(obj, 'spec', 'schedulerName')),
        'spec.serviceAccountName': text(at(obj, 'spec', 'serviceAccountName')),
        'spec.hostNetwork': flag(at(obj, 'spec', 'hostNetwork')),
        'status.phase': text(at(obj, 'status', 'phase')),
        'status.podIP': firstPodIP(obj),
        'status.nominatedNodeName': text(at(obj, 'status', 'nominatedNodeName')),
      });
      break;
    }
    case 'nodes':
      fields['spec.unschedulable'] = flag(at(obj, 'spec', 'unschedulable'));
      break;
    case 'namespaces':
      fields['status.phase'] = text(at(obj, 'status', 'phase'));
      break;
    case 'batch/jobs': {
      const succeeded = at(obj, 'status', 'succeeded');
      fields['status.successful'] = String(typeof succeeded === 'number' ? succeeded : 0);
      break;
    }
    case 'secrets':
      fields.type = text(obj.type);
      break;
    case 'events': {
      const reporting = text(obj.reportingComponent);
      Object.assign(fields, involvedFields(obj.involvedObject, 'involvedObject'), {
        reason: text(obj.reason),
        reportingComponent: reporting,
        source: text(at(obj, 'source', 'component')) || reporting,
        type: text(obj.type),
      });
      break;
    }
    case 'events.k8s.io/events': {
      const reporting = text(obj.reportingController);
      Object.assign(
        fields,
        involvedFields(obj.regarding, 'involvedObject'),
        involvedFields(obj.regarding, 'regarding'),
        {
          reason: text(obj.reason),
          reportingComponent: reporting,
          reportingController: reporting,
          source: text(at(obj, 'deprecatedSource', 'component')) || reporting,
          type: text(obj.type),
        },
      );
      break;
    }
  }
  return fields;
}

function involvedFields(ref: unknown, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
    out[`${prefix}.${key}`] = text(at(ref, key));
  }
  return out;
}
