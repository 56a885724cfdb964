/**
 * Namespace, Node, ConfigMap, Secret, ServiceAccount, Event (core/v1 and events.k8s.io/v1) and Lease rules, after
 * `pkg/apis/core/validation` (validation.go, events.go) and `pkg/apis/coordination/validation`, Kubernetes 1.32.
 */

import { forbidden, invalidValue, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateKubeFinalizerName, validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { isConfigMapKey, isDNS1123Subdomain, isQualifiedName, nameIsDNSLabel, nameIsDNSSubdomain } from './names.js';
import { asArr, asNum, asObj, asStr, byteLen, key, semanticEqual, tooLong } from './util.js';
import type { Obj } from './util.js';

const MAX_SECRET_SIZE = 1024 * 1024;

/** Validates a Namespace (create, and the main-resource update). */
export function validateNamespace(ns: Obj): FieldError[] {
  const errs = validateObjectMeta(ns.metadata, { nameFn: nameIsDNSLabel, namespaced: false, kubeFinalizers: true });
  for (const f of asArr(asObj(ns.spec)?.finalizers).map(asStr)) {
    for (const m of isQualifiedName(f)) errs.push(invalidValue('spec.finalizers', f, m));
    errs.push(...validateKubeFinalizerName(f, 'spec.finalizers'));
  }
  return errs;
}

/** Validates a namespaces/status update: the phase must agree with deletionTimestamp. */
export function validateNamespaceStatus(ns: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(ns.metadata, old.metadata, true);
  const phase = asStr(asObj(ns.status)?.phase);
  if (asStr(asObj(ns.metadata)?.deletionTimestamp) === '') {
    if (phase !== 'Active')
      errs.push(invalidValue('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty"));
  } else if (phase !== 'Terminating') {
    errs.push(invalidValue('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  return errs;
}

/** Validates a Node: metadata only. */
export function validateNode(node: Obj): FieldError[] {
  return validateObjectMeta(node.metadata, { nameFn: nameIsDNSSubdomain, namespaced: false, kubeFinalizers: true });
}

/** Validates a Node update: metadata, plus the podCIDR and providerID set-once rules. */
export function validateNodeUpdate(node: Obj, old: Obj): FieldError[] {
  const errs = [...validateNode(node), ...validateObjectMetaUpdate(node.metadata, old.metadata, true)];
  const spec = asObj(node.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  const oldCIDRs = asArr(oldSpec.podCIDRs);
  if (oldCIDRs.length > 0 && !semanticEqual(spec.podCIDRs, oldSpec.podCIDRs)) {
    errs.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  const oldProvider = asStr(oldSpec.providerID);
  if (oldProvider !== '' && oldProvider !== asStr(spec.providerID)) {
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  return errs;
}

function dataKeys(data: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of Object.keys(asObj(data) ?? {}))
    for (const m of isConfigMapKey(k)) errs.push(invalidValue(key(path, k), k, m));
  return errs;
}

function base64Size(value: unknown): number {
  return typeof value === 'string' ? Buffer.from(value, 'base64').length : 0;
}

/** Validates a ConfigMap: keys, no key in both data and binaryData, 1 MiB in all. */
export function validateConfigMap(cm: Obj): FieldError[] {
  const errs = validateObjectMeta(cm.metadata, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: true });
  const data = asObj(cm.data) ?? {};
  const binary = asObj(cm.binaryData) ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    for (const m of isConfigMapKey(k)) errs.push(invalidValue(key('data', k), k, m));
    if (k in binary) errs.push(invalidValue(key('data', k), k, 'duplicate of key present in binaryData'));
    size += byteLen(asStr(v));
  }
  errs.push(...dataKeys(binary, 'binaryData'));
  for (const v of Object.values(binary)) size += base64Size(v);
  if (size > MAX_SECRET_SIZE) errs.push(tooLong('', MAX_SECRET_SIZE));
  return errs;
}

function immutableData(obj: Obj, old: Obj, fields: readonly string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields)
    if (!semanticEqual(obj[f], old[f])) errs.push(forbidden(f, 'field is immutable when `immutable` is set'));
  return errs;
}

/** Validates a ConfigMap update. */
export function validateConfigMapUpdate(cm: Obj, old: Obj): FieldError[] {
  return [
    ...validateObjectMetaUpdate(cm.metadata, old.metadata, true),
    ...immutableData(cm, old, ['data', 'binaryData']),
    ...validateConfigMap(cm),
  ];
}

/** Validates a Secret: data keys, 1 MiB, and the per-type required keys. */
export function validateSecret(secret: Obj): FieldError[] {
  const errs = validateObjectMeta(secret.metadata, {
    nameFn: nameIsDNSSubdomain,
    namespaced: true,
    kubeFinalizers: true,
  });
  const data = asObj(secret.data) ?? {};
  errs.push(...dataKeys(data, 'data'));
  const size = Object.values(data).reduce<number>((n, v) => n + base64Size(v), 0);
  if (size > MAX_SECRET_SIZE) errs.push(tooLong('data', MAX_SECRET_SIZE));
  const has = (k: string): boolean => k in data;
  const need = (k: string): void => {
    if (!has(k)) errs.push(required(key('data', k)));
  };
  switch (asStr(secret.type)) {
    case 'kubernetes.io/service-account-token':
      if (asStr(asObj(asObj(secret.metadata)?.annotations)?.['kubernetes.io/service-account.name']) === '') {
        errs.push(required(key('metadata.annotations', 'kubernetes.io/service-account.name')));
      }
      break;
    case 'kubernetes.io/dockercfg':
      need('.dockercfg');
      break;
    case 'kubernetes.io/dockerconfigjson':
      need('.dockerconfigjson');
      break;
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) {
        need('username');
        need('password');
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (base64Size(data['ssh-privatekey']) === 0) errs.push(required(key('data', 'ssh-privatekey')));
      break;
    case 'kubernetes.io/tls':
      need('tls.crt');
      need('tls.key');
      break;
    default:
  }
  return errs;
}

/** Validates a Secret update: the type is immutable, and so is the data of an immutable Secret. */
export function validateSecretUpdate(secret: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(secret.metadata, old.metadata, true);
  if (asStr(secret.type) !== asStr(old.type)) errs.push(invalidValue('type', asStr(secret.type), 'field is immutable'));
  return [...errs, ...immutableData(secret, old, ['data']), ...validateSecret(secret)];
}

/** Validates a ServiceAccount: metadata only. */
export function validateServiceAccount(sa: Obj): FieldError[] {
  return validateObjectMeta(sa.metadata, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: true });
}

/** An Event in the internal shape the validation code sees, whichever API version it came through. */
interface InternalEvent {
  namespace: string;
  involvedObjectNamespace: string;
  eventTime: unknown;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  message: string;
  type: string;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: number;
  source: Obj;
  series: Obj | undefined;
}

function toInternal(ev: Obj, v1beta: boolean): InternalEvent {
  const meta = asObj(ev.metadata) ?? {};
  const involved = asObj(v1beta ? ev.regarding : ev.involvedObject) ?? {};
  return {
    namespace: asStr(meta.namespace),
    involvedObjectNamespace: asStr(involved.namespace),
    eventTime: ev.eventTime,
    reportingController: asStr(v1beta ? ev.reportingController : ev.reportingComponent),
    reportingInstance: asStr(ev.reportingInstance),
    action: asStr(ev.action),
    reason: asStr(ev.reason),
    message: asStr(v1beta ? ev.note : ev.message),
    type: asStr(ev.type),
    firstTimestamp: v1beta ? ev.deprecatedFirstTimestamp : ev.firstTimestamp,
    lastTimestamp: v1beta ? ev.deprecatedLastTimestamp : ev.lastTimestamp,
    count: asNum(v1beta ? ev.deprecatedCount : ev.count) ?? 0,
    source: asObj(v1beta ? ev.deprecatedSource : ev.source) ?? {},
    series: asObj(ev.series),
  };
}

const isZeroTime = (t: unknown): boolean => typeof t !== 'string' || t === '';

/** `legacyValidateEvent`: what every Event must satisfy (field paths are the internal ones, as upstream reports). */
function legacyValidateEvent(e: InternalEvent): FieldError[] {
  const errs: FieldError[] = [];
  if (isZeroTime(e.eventTime)) {
    if (e.involvedObjectNamespace === '') {
      if (e.namespace !== '' && e.namespace !== 'default') {
        errs.push(
          invalidValue('involvedObject.namespace', e.involvedObjectNamespace, 'does not match event.namespace'),
        );
      }
    } else if (e.namespace !== e.involvedObjectNamespace) {
      errs.push(invalidValue('involvedObject.namespace', e.involvedObjectNamespace, 'does not match event.namespace'));
    }
  } else {
    if (e.involvedObjectNamespace === '' && e.namespace !== 'default' && e.namespace !== 'kube-system') {
      errs.push(invalidValue('involvedObject.namespace', e.involvedObjectNamespace, 'does not match event.namespace'));
    }
    if (e.reportingController === '') errs.push(required('reportingController'));
    for (const m of isQualifiedName(e.reportingController))
      errs.push(invalidValue('reportingController', e.reportingController, m));
    if (e.reportingInstance === '') errs.push(required('reportingInstance'));
    if (byteLen(e.reportingInstance) > 128)
      errs.push(invalidValue('reportingInstance', '', 'can have at most 128 characters'));
    if (e.action === '') errs.push(required('action'));
    if (byteLen(e.action) > 128) errs.push(invalidValue('action', '', 'can have at most 128 characters'));
    if (e.reason === '') errs.push(required('reason'));
    if (byteLen(e.reason) > 128) errs.push(invalidValue('reason', '', 'can have at most 128 characters'));
    if (byteLen(e.message) > 1024) errs.push(invalidValue('message', '', 'can have at most 1024 characters'));
  }
  for (const m of isDNS1123Subdomain(e.namespace)) errs.push(invalidValue('namespace', e.namespace, m));
  return errs;
}

function validateSeries(e: InternalEvent): FieldError[] {
  if (e.series === undefined) return [];
  const errs: FieldError[] = [];
  if ((asNum(e.series.count) ?? 0) < 2) errs.push(invalidValue('series.count', '', 'should be at least 2'));
  if (isZeroTime(e.series.lastObservedTime)) errs.push(required('series.lastObservedTime'));
  return errs;
}

/**
 * Validates an Event on create. core/v1 requests get only the legacy rules (names are then held to the generic
 * path-segment rule); events.k8s.io/v1 requests get the strict ones.
 */
export function validateEvent(ev: Obj, strict: boolean): FieldError[] {
  const e = toInternal(ev, strict);
  const errs = legacyValidateEvent(e);
  if (!strict) return errs;
  errs.push(...validateObjectMeta(ev.metadata, { nameFn: nameIsDNSSubdomain, namespaced: true, kubeFinalizers: true }));
  errs.push(...validateSeries(e));
  if (isZeroTime(e.eventTime)) errs.push(required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(invalidValue('type', '', `has invalid value: ${e.type}`));
  if (!isZeroTime(e.firstTimestamp)) errs.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (!isZeroTime(e.lastTimestamp)) errs.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (e.count !== 0) errs.push(invalidValue('count', '', 'needs to be unset'));
  if (asStr(e.source.component) !== '' || asStr(e.source.host) !== '')
    errs.push(invalidValue('source', '', 'needs to be unset'));
  return errs;
}

/** Validates an Event update (events.k8s.io/v1 freezes most fields; core/v1 only re-runs the legacy rules). */
export function validateEventUpdate(ev: Obj, old: Obj, strict: boolean): FieldError[] {
  const e = toInternal(ev, strict);
  const errs = legacyValidateEvent(e);
  if (!strict) return errs;
  const o = toInternal(old, true);
  errs.push(...validateObjectMetaUpdate(ev.metadata, old.metadata, true));
  if (!semanticEqual(ev.series, old.series)) errs.push(...validateSeries(e));
  const frozen: [string, unknown, unknown][] = [
    ['involvedObject', ev.regarding, old.regarding],
    ['reason', e.reason, o.reason],
    ['message', e.message, o.message],
    ['source', e.source, o.source],
    ['firstTimestamp', e.firstTimestamp, o.firstTimestamp],
    ['lastTimestamp', e.lastTimestamp, o.lastTimestamp],
    ['count', e.count, o.count],
    ['type', e.type, o.type],
    ['eventTime', e.eventTime, o.eventTime],
    ['action', e.action, o.action],
    ['related', ev.related, old.related],
    ['reportingController', e.reportingController, o.reportingController],
    ['reportingInstance', e.reportingInstance, o.reportingInstance],
  ];
  for (const [field, now, before] of frozen)
    if (!semanticEqual(now, before)) errs.push(invalidValue(field, now, 'field is immutable'));
  return errs;
}

/** Validates a Lease (apimachinery metadata rules, no core finalizer rule) and its spec. */
export function validateLease(lease: Obj): FieldError[] {
  const errs = validateObjectMeta(lease.metadata, {
    nameFn: nameIsDNSSubdomain,
    namespaced: true,
    kubeFinalizers: false,
  });
  return [...errs, ...validateLeaseSpec(lease)];
}

/** `ValidateLeaseSpec`: positive duration, non-negative transitions. */
export function validateLeaseSpec(lease: Obj): FieldError[] {
  const spec = asObj(lease.spec) ?? {};
  const errs: FieldError[] = [];
  const duration = asNum(spec.leaseDurationSeconds);
  if (duration !== undefined && duration <= 0)
    errs.push(invalidValue('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = asNum(spec.leaseTransitions);
  if (transitions !== undefined && transitions < 0) {
    errs.push(invalidValue('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  return errs;
}
