import * as k8s from '@kubernetes/client-node';
import type { V1ListMeta, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DECODED_MODELS, modelDecoder } from '../../src/client/models.js';

/** A client-node model's attribute metadata, looked up in its whole namespace (which the library does not do). */
function attributesOf(type: string): readonly { name: string; baseName: string; type: string }[] | undefined {
  const model = (
    k8s as unknown as Record<string, { attributeTypeMap?: { name: string; baseName: string; type: string }[] }>
  )[type];
  return model?.attributeTypeMap;
}

/** `V1Volume` from `Array<V1Volume> | undefined`, `{ [key: string]: V1Foo; }` and the like. */
function innerType(type: string): string {
  for (const suffix of [' | null', ' | undefined'])
    if (type.endsWith(suffix)) return innerType(type.slice(0, -suffix.length));
  if (type.startsWith('Array<')) return innerType(type.slice('Array<'.length, -1));
  if (type.startsWith('{ [key: string]: ')) return innerType(type.slice('{ [key: string]: '.length, -3));
  return type;
}

/** Every model reachable from `roots` that has, itself or below it, a `Date` or a renamed attribute. */
function modelsToConvert(roots: readonly string[]): Set<string> {
  const verdict = new Map<string, boolean>();
  const visit = (type: string): boolean => {
    const t = innerType(type);
    if (t === 'Date') return true;
    const attributes = attributesOf(t);
    if (attributes === undefined) return false;
    const known = verdict.get(t);
    if (known !== undefined) return known;
    verdict.set(t, false); // a cycle back here adds nothing
    let convert = false;
    for (const a of attributes) if (visit(a.type) || a.name !== a.baseName) convert = true;
    verdict.set(t, convert);
    return convert;
  };
  for (const root of roots) visit(root);
  return new Set([...verdict].filter(([, convert]) => convert).map(([name]) => name));
}

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

  it('leaves null and missing fields alone and refuses a model it does not know', () => {
    const claim = modelDecoder<V1PersistentVolumeClaim>('V1PersistentVolumeClaim')({
      metadata: { deletionTimestamp: null },
    });
    expect(claim.metadata?.deletionTimestamp).toBeNull();
    expect(() => modelDecoder('V1NoSuchThing')).toThrow('V1NoSuchThing is not among the models the library decodes');
  });

  it('knows every model below the decoded kinds that has something to convert, as client-node defines them', () => {
    // The decoders see only the models they name; one client-node adds a Date to would be left as a string.
    const needed = modelsToConvert(DECODED_MODELS);
    expect([...needed].filter((name) => !DECODED_MODELS.includes(name))).toEqual([]);
    expect(needed).toContain('V1ObjectMeta');
    expect(needed).toContain('V1PersistentVolumeClaimCondition');
  });
});
