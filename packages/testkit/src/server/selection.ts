import type { KubeObject } from '../api/objects.js';
import { resourceKey, type ResourceType } from '../api/resources.js';
import { matchesLabels, parseLabelSelector, type LabelSelector } from '../selectors/labels.js';
import {
  fieldsOf,
  matchesFields,
  parseFieldSelector,
  validateFieldSelector,
  type FieldSelector,
} from '../selectors/fields.js';

/** Parsed label and field selectors of a list or watch. */
export interface Selectors {
  labels?: LabelSelector;
  fields?: FieldSelector;
}

/** Parses the `labelSelector` and `fieldSelector` parameters, answering 400 for bad ones as the real server. */
export function parseSelectors(r: ResourceType, labelSelector: string | null, fieldSelector: string | null): Selectors {
  const s: Selectors = {};
  if (labelSelector !== null && labelSelector !== '') s.labels = parseLabelSelector(labelSelector);
  if (fieldSelector !== null && fieldSelector !== '') {
    s.fields = parseFieldSelector(fieldSelector);
    validateFieldSelector(resourceKey(r), s.fields);
  }
  return s;
}

/** Whether an object is selected. */
export function matchesSelectors(r: ResourceType, o: KubeObject, s: Selectors): boolean {
  if (s.labels !== undefined && !matchesLabels(s.labels, o.metadata.labels)) return false;
  if (s.fields !== undefined && !matchesFields(s.fields, fieldsOf(resourceKey(r), o))) return false;
  return true;
}
