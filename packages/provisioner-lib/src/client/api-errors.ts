import { ApiException } from '@kubernetes/client-node';

/** The `Status` of a failed API call, when the server sent one. */
export interface ApiStatus {
  code: number;
  reason?: string;
  message?: string;
}

/** Reads the Status out of a client-node `ApiException` (its body is the raw response text). */
export function apiStatus(err: unknown): ApiStatus | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const code = err.code;
  const body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as Partial<ApiStatus>;
      return { code, ...(parsed.reason === undefined ? {} : { reason: parsed.reason }), ...(parsed.message === undefined ? {} : { message: parsed.message }) };
    } catch {
      return { code, message: body };
    }
  }
  if (typeof body === 'object' && body !== null) {
    const b = body as Partial<ApiStatus>;
    return { code, ...(b.reason === undefined ? {} : { reason: b.reason }), ...(b.message === undefined ? {} : { message: b.message }) };
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
 * A one-line description of an error for events and logs: the server's Status message for API errors (as
 * client-go's errors print), the message otherwise.
 */
export function describeError(err: unknown): string {
  const s = apiStatus(err);
  if (s !== undefined) return s.message ?? `the server responded with the status code ${s.code}`;
  return err instanceof Error ? err.message : String(err);
}
