/**
 * The HTTP status code carried by an error from client-node, if any: `code` of a generated client's
 * `ApiException`, `statusCode` of a `Watch` error (non-200 response), or `code` of a `Status` object (a watch
 * `ERROR` event). Node's system errors (`code: 'ECONNRESET'`) have a string code and give `undefined`.
 */
export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; statusCode?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  if (typeof e.code === 'number') return e.code;
  return undefined;
}

/**
 * Whether `error` is an inactivity `TimeoutError`: client-node's `Watch` reports one after 30 s without data, a
 * `RestClient` watch after its `watchInactivityMs` (when set).
 */
export function isWatchTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}
