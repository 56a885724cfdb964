// By path: client-node's entry point loads every generated API and model; this module imports nothing.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';

/** The `Status` of a failed API call, when the server sent one. */
export interface ApiStatus {
  code: number;
  reason?: string;
  message?: string;
}

/**
 * An API server's refusal, as its Status says it: `code` (the HTTP status), `reason` (`Forbidden`, `NotFound`,
 * `AlreadyExists`, …; undefined when the answer was not a Status) and `message` (the Status message, as client-go's
 * errors print it). The controller's events hand these to listeners instead of client-node's `ApiException`, whose
 * message is the raw response (`HTTP-Code: 403 Message: Unknown API Status Code! Body: {…}`); that exception is the
 * `cause`.
 */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  /** The HTTP status code. */
  readonly code: number;
  /** The Status reason, when the server sent a Status with one. */
  readonly reason: string | undefined;

  /**
   * @param status - what the server answered; without a message, the message says the status code.
   * @param options - `cause`: the error the status was read from.
   */
  constructor(status: ApiStatus, options?: ErrorOptions) {
    super(
      status.message === undefined || status.message === ''
        ? `the server responded with the status code ${status.code}`
        : status.message,
      options,
    );
    this.code = status.code;
    this.reason = status.reason;
  }
}

/**
 * Reads the Status out of a client-node `ApiException` (its body is the raw response text) or an
 * {@link ApiStatusError}; undefined for any other error.
 */
export function apiStatus(err: unknown): ApiStatus | undefined {
  if (err instanceof ApiStatusError) {
    return { code: err.code, ...(err.reason === undefined ? {} : { reason: err.reason }), message: err.message };
  }
  if (!(err instanceof ApiException)) return undefined;
  const code = err.code;
  const body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as Partial<ApiStatus>;
      return {
        code,
        ...(parsed.reason === undefined ? {} : { reason: parsed.reason }),
        ...(parsed.message === undefined ? {} : { message: parsed.message }),
      };
    } catch {
      return { code, message: body };
    }
  }
  if (typeof body === 'object' && body !== null) {
    const b = body as Partial<ApiStatus>;
    return {
      code,
      ...(b.reason === undefined ? {} : { reason: b.reason }),
      ...(b.message === undefined ? {} : { message: b.message }),
    };
  }
  return { code };
}

/** Whether `err` is a 404 Not Found from the API server. */
export const isNotFound = (err: unknown): boolean => apiStatus(err)?.code === 404;
/** Whether `err` is a 409 (Conflict or AlreadyExists) from the API server: someone else wrote first. */
export const isConflict = (err: unknown): boolean => apiStatus(err)?.code === 409;
export const isAlreadyExists = (err: unknown): boolean => {
  const s = apiStatus(err);
  return s?.code === 409 && s.reason === 'AlreadyExists';
};

/**
 * A one-line description of an error for events, logs, health answers and messages: the server's Status message for
 * API errors (as client-go's errors print; `the server responded with the status code N` when the answer carried
 * none), the `message` of an Error or of an object with one (a watch's `Status`), the value as a string otherwise.
 *
 * @param options - `cause: true` appends the message of the error's `cause`, when that is an Error the text does not
 *   already mention (the network failure behind a failed request: `…: connect ECONNREFUSED 127.0.0.1:6443`).
 */
export function describeError(err: unknown, options?: { cause?: boolean }): string {
  const text = describeOne(err);
  if (options?.cause !== true || !(err instanceof Error) || !(err.cause instanceof Error)) return text;
  const cause = err.cause.message;
  return text.includes(cause) ? text : `${text}: ${cause}`;
}

function describeOne(err: unknown): string {
  const s = apiStatus(err);
  if (s !== undefined)
    return s.message === undefined || s.message === ''
      ? `the server responded with the status code ${s.code}`
      : s.message;
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  return String(err);
}

/**
 * `err` as the controller's events give it to listeners: a client-node `ApiException` becomes an
 * {@link ApiStatusError} (status code, reason and the server's message, with the exception as its `cause`), any other
 * Error is returned as it is, and anything else becomes an Error with its text.
 */
export function toError(err: unknown): Error {
  if (err instanceof ApiException) {
    const status = apiStatus(err);
    if (status !== undefined) return new ApiStatusError(status, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
