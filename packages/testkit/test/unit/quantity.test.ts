import { describe, expect, it } from 'vitest';
import { canonicalQuantity, QUANTITY_FORMAT_WRONG } from '../../src/api/quantity.js';
import { ObjectStore } from '../../src/store/store.js';
import { StatusError } from '../../src/api/status.js';

describe('resource.Quantity as the apiserver serves it back', () => {
  // Each pair was checked against kube-apiserver 1.32 (a PVC's storage request created and read back).
  it.each([
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1000M', '1G'],
    ['1e3', '1e3'],
    [' 1Gi', '1Gi'],
    ['010Mi', '010Mi'],
    [5, '5'],
    [1.5, '1500m'],
    [2147483648, '2147483648'],
    ['-1Gi', '-1Gi'],
  ] as const)('%j is served as %j', (input, served) => {
    expect(canonicalQuantity(input)).toBe(served);
  });

  it.each([
    ['0Gi', '0'],
    ['0.1', '100m'],
    ['1000', '1k'],
    ['0.0000000001', '1n'],
    ['8388608Ki', '8Gi'],
    ['1.25Ki', '1280'],
    ['12e-3', '12e-3'],
    ['2000e0', '2e3'],
  ] as const)('%j is served as %j, as apimachinery canonicalises it', (input, served) => {
    expect(canonicalQuantity(input)).toBe(served);
  });

  it('refuses what does not parse, with the decoder wording', () => {
    expect(() => canonicalQuantity('1Gx')).toThrow(QUANTITY_FORMAT_WRONG);
    expect(() => canonicalQuantity(true)).toThrow(QUANTITY_FORMAT_WRONG);
    expect(() => canonicalQuantity('1iK')).toThrow("unable to parse quantity's suffix");
  });

  it('decodes the quantities of stored objects, and answers 400 for one that does not parse', () => {
    const store = new ObjectStore();
    const claim = (storage: unknown) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `c-${String(storage).toLowerCase().replace(/\W/g, '')}`, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    expect(store.create('persistentvolumeclaims', claim('1024Mi')).spec).toMatchObject({ resources: { requests: { storage: '1Gi' } } });
    let err: unknown;
    try {
      store.create('persistentvolumeclaims', claim('1Gx'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).status).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: ${QUANTITY_FORMAT_WRONG}`,
    });
  });
});
