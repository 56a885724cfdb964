/**
 * JSON patch (RFC 6902), the `application/json-patch+json` patch type, with the behaviour kube-apiserver gets from
 * `gopkg.in/evanphx/json-patch.v4`: the body must decode as an array of objects (400 otherwise), and an operation
 * that does not apply fails the whole patch with the handler's generic 422.
 */

import { clone, isPlainObject } from '../api/objects.js';
import { StatusError, badRequest } from '../api/status.js';

/** The most operations one patch may hold (`maxJSONPatchOperations` in the apiserver's patch handler). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** How Go's encoding/json names the JSON type of a value in `cannot unmarshal` errors. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Raised inside this module when an operation does not apply; turned into the 422 at the end. */
class NotApplicable extends Error {}

/**
 * The 422 the patch handler answers for any failed operation (`errors.NewGenericServerResponse(422, ...)`): its
 * message is generic, so the reason is attached as `cause` for debugging only.
 */
function notApplicable(reason: string): StatusError {
  const err = new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  err.cause = new Error(reason);
  return err;
}

/** Decodes an RFC 6901 pointer into reference tokens; `''` is the whole document. */
function parsePointer(pointer: unknown, field: string): string[] {
  if (typeof pointer !== 'string') throw new NotApplicable(`operation has no string ${field}`);
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new NotApplicable(`${field} ${JSON.stringify(pointer)} does not start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** An array index as json-patch reads it (`strconv.Atoi`), or undefined. */
function indexOf(token: string): number | undefined {
  return /^[+-]?\d+$/.test(token) ? Number(token) : undefined;
}

type Container = Record<string, unknown> | unknown[];

/** Walks to the container that holds the last token of a path. */
function parentOf(doc: unknown, tokens: readonly string[], path: string): { parent: Container; key: string } {
  let cur = doc;
  for (const token of tokens.slice(0, -1)) {
    let next: unknown;
    if (Array.isArray(cur)) {
      const i = indexOf(token);
      next = i !== undefined && i >= 0 && i < cur.length ? cur[i] : undefined;
    } else if (isPlainObject(cur)) {
      next = Object.prototype.hasOwnProperty.call(cur, token) ? cur[token] : undefined;
    }
    if (!isPlainObject(next) && !Array.isArray(next)) throw new NotApplicable(`doc is missing path: ${path}`);
    cur = next;
  }
  if (!isPlainObject(cur) && !Array.isArray(cur)) throw new NotApplicable(`doc is missing path: ${path}`);
  return { parent: cur, key: tokens[tokens.length - 1] ?? '' };
}

function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The value at a location: a missing object member reads as `null`, as json-patch v4 reads it. */
function getAt(parent: Container, key: string): unknown {
  if (Array.isArray(parent)) {
    const i = indexOf(key);
    if (i === undefined || i < 0 || i >= parent.length) throw new NotApplicable(`invalid index referenced: ${key}`);
    return parent[i];
  }
  return Object.prototype.hasOwnProperty.call(parent, key) ? parent[key] : null;
}

function addAt(parent: Container, key: string, value: unknown): void {
  if (!Array.isArray(parent)) {
    put(parent, key, value);
    return;
  }
  if (key === '-') {
    parent.push(value);
    return;
  }
  let i = indexOf(key);
  // Like json-patch v4, a negative index counts from the end (-1 appends).
  if (i === undefined || i > parent.length || i < -(parent.length + 1))
    throw new NotApplicable(`invalid index: ${key}`);
  if (i < 0) i += parent.length + 1;
  parent.splice(i, 0, value);
}

function removeAt(parent: Container, key: string): unknown {
  if (!Array.isArray(parent)) {
    if (!Object.prototype.hasOwnProperty.call(parent, key))
      throw new NotApplicable(`Unable to remove nonexistent key: ${key}`);
    const old = parent[key];
    delete parent[key];
    return old;
  }
  let i = indexOf(key);
  if (i === undefined || i >= parent.length || i < -parent.length) throw new NotApplicable(`invalid index: ${key}`);
  if (i < 0) i += parent.length;
  return parent.splice(i, 1)[0];
}

/** JSON equality: same type, numbers by value, objects by members regardless of order, arrays in order. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/** Applies one operation to `doc` (which this module owns) and returns the new document root. */
function applyOperation(doc: unknown, op: unknown): unknown {
  const o = isPlainObject(op) ? op : {};
  const kind = o.op;
  const value = Object.prototype.hasOwnProperty.call(o, 'value') ? o.value : null;
  const path = o.path;
  switch (kind) {
    case 'add': {
      const tokens = parsePointer(path, 'path');
      if (tokens.length === 0) return clone(value);
      const { parent, key } = parentOf(doc, tokens, String(path));
      addAt(parent, key, clone(value));
      return doc;
    }
    case 'remove': {
      const tokens = parsePointer(path, 'path');
      if (tokens.length === 0) throw new NotApplicable('cannot remove the whole document');
      const { parent, key } = parentOf(doc, tokens, String(path));
      removeAt(parent, key);
      return doc;
    }
    case 'replace': {
      const tokens = parsePointer(path, 'path');
      if (tokens.length === 0) return clone(value);
      const { parent, key } = parentOf(doc, tokens, String(path));
      if (Array.isArray(parent)) {
        getAt(parent, key);
        parent[indexOf(key) ?? 0] = clone(value);
      } else {
        // json-patch v4 (and so kube-apiserver) sets a missing object member instead of failing.
        put(parent, key, clone(value));
      }
      return doc;
    }
    case 'move': {
      const fromTokens = parsePointer(o.from, 'from');
      const toTokens = parsePointer(path, 'path');
      if (fromTokens.length === 0) throw new NotApplicable('cannot move the whole document');
      const from = parentOf(doc, fromTokens, String(o.from));
      const moved = removeAt(from.parent, from.key);
      if (toTokens.length === 0) return moved;
      const to = parentOf(doc, toTokens, String(path));
      addAt(to.parent, to.key, moved);
      return doc;
    }
    case 'copy': {
      const fromTokens = parsePointer(o.from, 'from');
      const toTokens = parsePointer(path, 'path');
      let copied: unknown = doc;
      if (fromTokens.length > 0) {
        const from = parentOf(doc, fromTokens, String(o.from));
        copied = getAt(from.parent, from.key);
      }
      if (toTokens.length === 0) return clone(copied);
      const to = parentOf(doc, toTokens, String(path));
      addAt(to.parent, to.key, clone(copied));
      return doc;
    }
    case 'test': {
      const tokens = parsePointer(path, 'path');
      let actual: unknown = doc;
      if (tokens.length > 0) {
        const { parent, key } = parentOf(doc, tokens, String(path));
        actual = getAt(parent, key);
      }
      if (!Object.prototype.hasOwnProperty.call(o, 'value') || !deepEqual(actual, value)) {
        throw new NotApplicable(`testing value ${String(path)} failed`);
      }
      return doc;
    }
    default:
      throw new NotApplicable(`Unexpected kind: ${typeof kind === 'string' ? kind : 'unknown'}`);
  }
}

/**
 * Applies an RFC 6902 JSON patch and returns the patched document as a new value; neither input is modified.
 * Supports `add`, `remove`, `replace`, `move`, `copy` and `test`, `~0`/`~1` pointer escapes and `-` to append.
 * Like kube-apiserver (json-patch v4), `replace` of a missing object member sets it, negative array indexes count
 * from the end in `add` and `remove`, a missing object member reads as `null` for `copy` and `test`, and a `null`
 * body is an empty patch.
 *
 * @throws StatusError 400 BadRequest when the body is not an array of objects, with Go's decode error
 *   (`json: cannot unmarshal object into Go value of type jsonpatch.Patch`); 413 RequestEntityTooLarge above
 *   {@link MAX_JSON_PATCH_OPERATIONS} operations; 422 Invalid `the server rejected our request due to an error in
 *   our request` when an operation does not apply (unknown op, missing path, out-of-range index, failed test).
 */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (ops === null) return clone(doc);
  if (!Array.isArray(ops))
    throw badRequest(`json: cannot unmarshal ${jsonKind(ops)} into Go value of type jsonpatch.Patch`);
  for (const op of ops) {
    if (op !== null && !isPlainObject(op)) {
      throw badRequest(`json: cannot unmarshal ${jsonKind(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new StatusError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
    );
  }
  let result = clone(doc);
  for (const op of ops) {
    try {
      result = applyOperation(result, op);
    } catch (e) {
      if (e instanceof NotApplicable) throw notApplicable(e.message);
      throw e;
    }
  }
  return result;
}
