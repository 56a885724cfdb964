/**
 * JSON merge patch (RFC 7386), the `application/merge-patch+json` patch type: objects merge member by member,
 * `null` removes a member, and every other value, arrays included, replaces what was there.
 */

import { clone, isPlainObject } from '../api/objects.js';
import { badRequest } from '../api/status.js';

/** Sets an own data property, so that a member named `__proto__` stays a plain member. */
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Merges into `target`, which the caller owns; `patch` is only read. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      const current = Object.prototype.hasOwnProperty.call(result, key) ? result[key] : undefined;
      put(result, key, mergeInto(current, value));
    }
  }
  return result;
}

/**
 * Applies an RFC 7386 merge patch and returns the result as a new value; neither input is modified. A patch that
 * is not an object replaces the target outright (so `null` yields `null`), members whose patch value is `null`
 * are removed, objects merge recursively, and arrays and scalars replace.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(clone(target), patch);
}

/**
 * Checks a merge patch body the way kube-apiserver's patch handler does before merging: `null` and bare scalars
 * (strings, numbers, booleans) are rejected. Arrays pass here; merging one yields an array, which the caller then
 * rejects as an object.
 *
 * @throws StatusError 400 BadRequest `Invalid JSON Patch` (json-patch's `errBadJSONPatch`).
 */
export function checkMergePatchBody(patch: unknown): void {
  if (patch === null || (typeof patch !== 'object' && !Array.isArray(patch))) throw badRequest('Invalid JSON Patch');
}
