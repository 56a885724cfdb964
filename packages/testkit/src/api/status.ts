/**
 * `metav1.Status` failures, shaped exactly as kube-apiserver sends them
 * (`k8s.io/apimachinery/pkg/api/errors`): kind, apiVersion, metadata, status, message, reason, details, code.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'Timeout'
  | 'TooManyRequests'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'InternalError'
  | 'ServiceUnavailable'
  | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Thrown by the store and the handlers; the HTTP layer turns it into a Status body with its code. */
export class StatusError extends Error {
  readonly status: Status;
  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    // In the real server's field order: details come before code.
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      ...(details === undefined ? {} : { details }),
      code,
    };
    // The real server omits an empty reason.
    if (reason === '') delete status.reason;
    this.status = status;
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

/** Identifies a resource in error messages: `resource` for the core group, `resource.group` otherwise. */
export interface GroupResource {
  group: string;
  /** Lower-case plural. */
  plural: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.plural : `${gr.plural}.${gr.group}`;
}

function details(gr: GroupResource, name: string): StatusDetails {
  const d: StatusDetails = { name };
  if (gr.group !== '') d.group = gr.group;
  d.kind = gr.plural;
  return d;
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, details(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, details(gr, name));
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    details(gr, name),
  );
}

export const OBJECT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

/**
 * 405 for a method the server has no route for (a verb a resource does not support, a create through the
 * all-namespaces path): the router's generic answer, which names neither verb nor resource.
 */
export function methodNotAllowed(): StatusError {
  return new StatusError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** The generic 404 for a path the server does not serve at all. */
export function unknownPath(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function gone(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

export function resourceExpired(requested: number, oldest: number): StatusError {
  return gone(`too old resource version: ${requested} (${oldest})`);
}

export function tooManyRequests(retryAfterSeconds: number): StatusError {
  return new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds });
}

export function internalError(cause: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${cause}`, { causes: [{ message: cause }] });
}

export function serviceUnavailable(message = 'the server is currently unable to handle the request'): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message);
}

export function unsupportedMediaType(accepted: readonly string[]): StatusError {
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** One field error of an Invalid response, as `field.Error` renders it. */
export interface FieldError {
  /** `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, `FieldValueForbidden`, `FieldValueDuplicate`, `FieldValueTooLong`. */
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong';
  field: string;
  /** Rendered detail, e.g. `Required value` or `Invalid value: "x": must be ...`. */
  message: string;
}

export function required(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, message: detail === '' ? 'Required value' : `Required value: ${detail}` };
}

function renderValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? 'null';
}

export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${renderValue(value)}: ${detail}` };
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return {
    type: 'FieldValueNotSupported',
    field,
    message: `Unsupported value: ${renderValue(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  };
}

export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, message: `Duplicate value: ${renderValue(value)}` };
}

/**
 * 422 Invalid, as `errors.NewInvalid` builds it: message `Kind "name" is invalid: <field>: <detail>` (several
 * errors are joined as a bracketed list), details carry group, Kind (not resource) and one cause per field error.
 */
export function invalid(group: string, kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const rendered = errors.map((e) => `${e.field}: ${e.message}`);
  const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  // Go leaves an empty name out (omitempty).
  const d: StatusDetails = name === '' ? {} : { name };
  if (group !== '') d.group = group;
  d.kind = kind;
  d.causes = errors.map((e) => ({ reason: e.type, message: e.message, field: e.field }));
  return new StatusError(
    422,
    'Invalid',
    `${kind}${group === '' ? '' : `.${group}`} "${name}" is invalid: ${summary}`,
    d,
  );
}
