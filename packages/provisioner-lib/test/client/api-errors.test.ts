import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ApiStatusError, apiStatus, describeError, isNotFound, toError } from '../../src/client/api-errors.js';

const forbidden = new ApiException(
  403,
  'Unknown API Status Code!',
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message:
      'persistentvolumes is forbidden: User "jane" cannot create resource "persistentvolumes" in API group "" at the cluster scope',
    reason: 'Forbidden',
    code: 403,
  }),
  {},
);

describe('toError', () => {
  it("turns client-node's ApiException into an ApiStatusError with the Status's code, reason and message", () => {
    expect(forbidden.message).toMatch(/^HTTP-Code: 403\nMessage: Unknown API Status Code!\nBody: /);
    const err = toError(forbidden);
    expect(err).toBeInstanceOf(ApiStatusError);
    expect(err).toMatchObject({
      name: 'ApiStatusError',
      code: 403,
      reason: 'Forbidden',
      message:
        'persistentvolumes is forbidden: User "jane" cannot create resource "persistentvolumes" in API group "" at the cluster scope',
    });
    expect(err.cause).toBe(forbidden);
    expect(describeError(err)).toBe(describeError(forbidden));
    expect(apiStatus(err)).toEqual(apiStatus(forbidden));
  });

  it('keeps what the server said when the body is not a Status, and says the code when it said nothing', () => {
    expect(toError(new ApiException(502, 'Bad Gateway', 'upstream connect error', {}))).toMatchObject({
      code: 502,
      reason: undefined,
      message: 'upstream connect error',
    });
    expect(toError(new ApiException(503, 'Service Unavailable', '', {}))).toMatchObject({
      code: 503,
      message: 'the server responded with the status code 503',
    });
    expect(
      isNotFound(
        toError(new ApiException(404, 'Not Found', '{"kind":"Status","reason":"NotFound","message":"gone"}', {})),
      ),
    ).toBe(true);
  });

  it('passes other errors through and wraps values that are not errors', () => {
    const plain = new TypeError('fetch failed');
    expect(toError(plain)).toBe(plain);
    const wrapped = toError('disk full');
    expect(wrapped).toBeInstanceOf(Error);
    expect(wrapped.message).toBe('disk full');
  });
});

describe('describeError', () => {
  it("says the server's Status message, or the status code when the answer carried none", () => {
    expect(describeError(forbidden)).toMatch(/^persistentvolumes is forbidden: /);
    expect(describeError(new ApiException(503, 'Service Unavailable', '', {}))).toBe(
      'the server responded with the status code 503',
    );
  });

  it("says an Error's message, the message of a watch's Status object, and other values as text", () => {
    expect(describeError(new Error('disk full'))).toBe('disk full');
    expect(describeError({ kind: 'Status', code: 410, message: 'too old resource version: 1 (2)' })).toBe(
      'too old resource version: 1 (2)',
    );
    expect(describeError('plain text')).toBe('plain text');
    expect(describeError(42)).toBe('42');
  });

  it('appends the cause when asked and the text does not already say it', () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6443');
    const failed = new TypeError('fetch failed', { cause: refused });
    expect(describeError(failed)).toBe('fetch failed');
    expect(describeError(failed, { cause: true })).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:6443');
    expect(
      describeError(new Error('request failed: connect ECONNREFUSED 127.0.0.1:6443', { cause: refused }), {
        cause: true,
      }),
    ).toBe('request failed: connect ECONNREFUSED 127.0.0.1:6443');
    expect(describeError(new Error('no cause'), { cause: true })).toBe('no cause');
  });
});
