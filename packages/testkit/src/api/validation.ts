/**
 * Server-side validation as kube-apiserver 1.32 runs it for the kinds the testkit serves: each kind's strategy
 * validation plus the generic metadata checks of `rest.BeforeCreate` / `rest.BeforeUpdate`, with the real field paths
 * and messages. Pure functions over JSON; the per-kind rules live in `./validation/*.ts`.
 */

import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';
import { resourceKey } from './resources.js';
import { badRequest, invalid } from './status.js';
import type { FieldError, StatusError } from './status.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './validation/meta.js';
import { isValidPathSegmentName, nameIsDNSLabel, nameIsDNSSubdomain, nameIsPathSegment } from './validation/names.js';
import type { NameFn } from './validation/names.js';
import {
  validateConfigMap,
  validateConfigMapUpdate,
  validateEvent,
  validateEventUpdate,
  validateLease,
  validateLeaseSpec,
  validateNamespace,
  validateNamespaceStatus,
  validateNode,
  validateNodeUpdate,
  validateSecret,
  validateSecretUpdate,
  validateServiceAccount,
} from './validation/other.js';
import { validateJob, validateJobStatus, validateJobUpdate } from './validation/job.js';
import { validatePod, validatePodStatus, validatePodUpdate } from './validation/pod.js';
import { validatePV, validatePVUpdate } from './validation/pv.js';
import { validatePVC, validatePVCStatus, validatePVCUpdate } from './validation/pvc.js';
import { validateStorageClass, validateStorageClassUpdate } from './validation/storageclass.js';
import { dedupe } from './validation/util.js';
import type { Obj } from './validation/util.js';

/** The name rule each kind's strategy applies (core/v1 Events only have the generic path-segment rule). */
function nameFnOf(resource: ResourceType): NameFn {
  switch (resourceKey(resource)) {
    case 'namespaces':
      return nameIsDNSLabel;
    case 'events':
      return nameIsPathSegment;
    default:
      return nameIsDNSSubdomain;
  }
}

/**
 * Checks a name (or, with `prefix`, a `generateName`) against the kind's name rule; returns the problem
 * descriptions as the server words them, empty when the name is acceptable.
 */
export function validateName(resource: ResourceType, name: string, prefix = false): string[] {
  return nameFnOf(resource)(name, prefix);
}

/** `path.ValidatePathSegmentName`: the rule every name in a URL path must meet. */
export function validatePathSegmentName(name: string, prefix = false): string[] {
  return isValidPathSegmentName(name, prefix);
}

/**
 * The 400 the registry answers for a URL name that cannot be a path segment (`Name parameter invalid: ...`), or
 * `undefined` when the name is fine.
 */
export function nameParameterError(name: string): StatusError | undefined {
  const msgs = isValidPathSegmentName(name);
  return msgs.length === 0
    ? undefined
    : badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${msgs.join(';')}`);
}

/** Group and Kind of a resource type, as `invalid(group, kind, name, errors)` wants them. */
export function kindOf(resource: ResourceType): { group: string; kind: string } {
  return { group: resource.group, kind: resource.kind };
}

/** Builds the 422 Invalid error for a resource type and object name. */
export function invalidFor(resource: ResourceType, name: string, errors: readonly FieldError[]): StatusError {
  return invalid(resource.group, resource.kind, name, errors);
}

/** The generic metadata validation `rest.BeforeCreate`/`BeforeUpdate` run for every kind (path-segment names). */
function commonMeta(resource: ResourceType, obj: KubeObject): FieldError[] {
  return validateObjectMeta(obj.metadata, {
    nameFn: nameIsPathSegment,
    namespaced: resource.namespaced,
    kubeFinalizers: false,
  });
}

function strategyCreate(resource: ResourceType, obj: Obj): FieldError[] {
  switch (resourceKey(resource)) {
    case 'persistentvolumes':
      return validatePV(obj);
    case 'persistentvolumeclaims':
      return validatePVC(obj);
    case 'storage.k8s.io/storageclasses':
      return validateStorageClass(obj);
    case 'pods':
      return validatePod(obj);
    case 'namespaces':
      return validateNamespace(obj);
    case 'nodes':
      return validateNode(obj);
    case 'configmaps':
      return validateConfigMap(obj);
    case 'secrets':
      return validateSecret(obj);
    case 'serviceaccounts':
      return validateServiceAccount(obj);
    case 'events':
      return validateEvent(obj, false);
    case 'events.k8s.io/events':
      return validateEvent(obj, true);
    case 'coordination.k8s.io/leases':
      return validateLease(obj);
    case 'batch/jobs':
      return validateJob(obj);
    default:
      return validateObjectMeta(obj.metadata, {
        nameFn: nameFnOf(resource),
        namespaced: resource.namespaced,
        kubeFinalizers: false,
      });
  }
}

function strategyUpdate(resource: ResourceType, obj: Obj, old: Obj): FieldError[] {
  switch (resourceKey(resource)) {
    case 'persistentvolumes':
      return validatePVUpdate(obj, old);
    case 'persistentvolumeclaims':
      return validatePVCUpdate(obj, old);
    case 'storage.k8s.io/storageclasses':
      return [...validateObjectMetaUpdate(obj.metadata, old.metadata, true), ...validateStorageClassUpdate(obj, old)];
    case 'pods':
      return validatePodUpdate(obj, old);
    case 'namespaces':
      return [...validateNamespace(obj), ...validateObjectMetaUpdate(obj.metadata, old.metadata, true)];
    case 'nodes':
      return validateNodeUpdate(obj, old);
    case 'configmaps':
      return validateConfigMapUpdate(obj, old);
    case 'secrets':
      return validateSecretUpdate(obj, old);
    case 'serviceaccounts':
      return [...validateObjectMetaUpdate(obj.metadata, old.metadata, true), ...validateServiceAccount(obj)];
    case 'events':
      return validateEventUpdate(obj, old, false);
    case 'events.k8s.io/events':
      return validateEventUpdate(obj, old, true);
    case 'coordination.k8s.io/leases':
      return [...validateObjectMetaUpdate(obj.metadata, old.metadata, false), ...validateLeaseSpec(obj)];
    case 'batch/jobs':
      return validateJobUpdate(obj, old);
    default:
      return validateObjectMetaUpdate(obj.metadata, old.metadata, false);
  }
}

function strategyStatusUpdate(resource: ResourceType, obj: Obj, old: Obj): FieldError[] {
  const meta = validateObjectMetaUpdate(obj.metadata, old.metadata, true);
  switch (resourceKey(resource)) {
    case 'persistentvolumeclaims':
      return [...meta, ...validatePVCStatus(obj)];
    case 'pods':
      return validatePodStatus(obj, old);
    case 'namespaces':
      return validateNamespaceStatus(obj, old);
    case 'nodes':
      return [...validateNode(obj), ...meta];
    case 'batch/jobs':
      return validateJobStatus(obj, old);
    default:
      return meta;
  }
}

/**
 * Validates an object about to be created (after defaulting and name generation). Returns the field errors a real
 * server would report, in its order and without repeats; empty when the object is acceptable. The kind's own rules
 * run first; the generic metadata rules only when those pass, as `rest.BeforeCreate` does.
 */
export function validateCreate(resource: ResourceType, obj: KubeObject): FieldError[] {
  const errors = strategyCreate(resource, obj);
  return dedupe(errors.length > 0 ? errors : commonMeta(resource, obj));
}

/**
 * Validates an update of `old` into `obj` (after defaulting, with the store's carry-over of status or spec and of
 * system metadata already applied). `subresource: 'status'` selects the status strategy's lighter rules.
 */
export function validateUpdate(
  resource: ResourceType,
  obj: KubeObject,
  old: KubeObject,
  subresource?: 'status',
): FieldError[] {
  const common = [...commonMeta(resource, obj), ...validateObjectMetaUpdate(obj.metadata, old.metadata, false)];
  const own =
    subresource === 'status' && resource.subresources.includes('status')
      ? strategyStatusUpdate(resource, obj, old)
      : strategyUpdate(resource, obj, old);
  return dedupe([...common, ...own]);
}
