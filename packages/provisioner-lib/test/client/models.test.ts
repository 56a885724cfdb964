import type { V1ListMeta, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { modelDecoder } from '../../src/client/models.js';

describe('modelDecoder', () => {
  it('turns date-time fields into Dates in place, nested ones included, and keeps everything else as parsed', () => {
    const json = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'a',
        creationTimestamp: '2026-01-02T03:04:05Z',
        labels: { x: 'y' },
        managedFields: [{ time: '2026-01-02T03:04:06Z', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: { conditions: [{ type: 'Resizing', status: 'True', lastTransitionTime: '2026-01-02T03:04:07Z' }] },
      unknownField: { kept: true },
    };
    const claim = modelDecoder<V1PersistentVolumeClaim & { unknownField?: unknown }>('V1PersistentVolumeClaim')(json);
    expect(claim).toBe(json);
    expect(claim.metadata?.creationTimestamp).toEqual(new Date('2026-01-02T03:04:05Z'));
    expect(claim.metadata?.managedFields?.[0]?.time).toEqual(new Date('2026-01-02T03:04:06Z'));
    expect(claim.metadata?.managedFields?.[0]?.fieldsV1).toEqual({ 'f:spec': {} });
    expect(claim.status?.conditions?.[0]?.lastTransitionTime).toEqual(new Date('2026-01-02T03:04:07Z'));
    expect(claim.spec?.resources?.requests?.storage).toBe('1Gi');
    expect(claim.unknownField).toEqual({ kept: true });
  });

  it('renames attributes whose JSON name is not a JavaScript name, as client-node does', () => {
    const meta = modelDecoder<V1ListMeta>('V1ListMeta')({ resourceVersion: '5', continue: 'token' });
    expect(meta).toEqual({ resourceVersion: '5', _continue: 'token' });
  });

  it('leaves null and missing fields alone and refuses a model client-node does not have', () => {
    const claim = modelDecoder<V1PersistentVolumeClaim>('V1PersistentVolumeClaim')({
      metadata: { deletionTimestamp: null },
    });
    expect(claim.metadata?.deletionTimestamp).toBeNull();
    expect(() => modelDecoder('V1NoSuchThing')).toThrow('client-node has no model named V1NoSuchThing');
  });
});
