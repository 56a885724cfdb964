import { QUANTITY_FORMAT_WRONG } from '@kprov/quantity';
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/api/status.js';
import { ObjectStore } from '../../src/store/store.js';

describe('quantities in stored objects', () => {
  it('decodes the quantities of stored objects, and answers 400 for one that does not parse', () => {
    const store = new ObjectStore();
    const claim = (storage: unknown) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `c-${String(storage).toLowerCase().replace(/\W/g, '')}`, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    expect(store.create('persistentvolumeclaims', claim('1024Mi')).spec).toMatchObject({
      resources: { requests: { storage: '1Gi' } },
    });
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
