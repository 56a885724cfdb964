import * as k8s from '@kubernetes/client-node';
import type { V1Lease, V1ListMeta, V1PersistentVolumeClaim } from '@kubernetes/client-node';
// client-node's own (de)serializer, which its generated clients use; not exported from its entry point.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
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

  it("decodes a Lease as client-node's ObjectSerializer does: its MicroTimes stay the strings received", () => {
    const json = (): unknown => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'a', namespace: 'default', creationTimestamp: '2026-01-02T03:04:05Z' },
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: '2026-01-02T03:04:05.123456Z',
        renewTime: '2026-01-02T03:04:06.000001Z',
        leaseTransitions: 2,
      },
    });
    const lease = modelDecoder<V1Lease>('V1Lease')(json());
    expect(lease).toEqual(ObjectSerializer.deserialize(json(), 'V1Lease', ''));
    expect(lease.metadata?.creationTimestamp).toEqual(new Date('2026-01-02T03:04:05Z'));
    expect(lease.spec?.renewTime).toBe('2026-01-02T03:04:06.000001Z');
  });
});

/** Every model reachable from `roots`, with what `JSON.stringify` would write differently from client-node. */
function encodingDifferences(roots: readonly string[]): { models: Set<string>; differences: string[] } {
  const models = new Set<string>();
  const differences: string[] = [];
  const visit = (type: string): void => {
    const t = innerType(type);
    const attributes = attributesOf(t);
    if (attributes === undefined || models.has(t)) return;
    models.add(t);
    for (const a of attributes as readonly { name: string; baseName: string; type: string; format?: string }[]) {
      if (a.name !== a.baseName) differences.push(`${t}.${a.name} is sent as ${a.baseName}`);
      if (innerType(a.type) === 'Date' && a.format !== 'date-time')
        differences.push(`${t}.${a.name} has format ${a.format}`);
      visit(a.type);
    }
  };
  for (const root of roots) visit(root);
  return { models, differences };
}

describe("the bodies the library writes, against client-node's ObjectSerializer", () => {
  it('need no conversion: no model below them renames an attribute or writes a Date other than toISOString', () => {
    // What RestClient's JSON.stringify relies on; a client-node that adds either would need an encoder.
    const { models, differences } = encodingDifferences([
      'V1PersistentVolume',
      'V1PersistentVolumeClaim',
      'V1Lease',
      'CoreV1Event',
      'V1DeleteOptions',
    ]);
    expect(differences).toEqual([]);
    expect(models).toContain('V1LeaseSpec');
    expect(models).toContain('V1ManagedFieldsEntry');
  });

  it('are written by JSON.stringify as client-node writes them: Dates in ISO form, MicroTimes with six digits', () => {
    const created = new Date('2026-01-02T03:04:05.000Z');
    const renewed = new k8s.V1MicroTime('2026-01-02T03:04:06.789Z');
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'a', creationTimestamp: created, managedFields: [{ manager: 'm', time: created }] },
      spec: { holderIdentity: 'me', acquireTime: renewed, renewTime: renewed, leaseDurationSeconds: 15 },
    };
    const ours = JSON.stringify(lease);
    const theirs = JSON.stringify(ObjectSerializer.serialize(lease, 'V1Lease', ''));
    expect(JSON.parse(ours)).toEqual(JSON.parse(theirs));
    expect(ours).toContain('"renewTime":"2026-01-02T03:04:06.789000Z"');
    expect(ours).toContain('"creationTimestamp":"2026-01-02T03:04:05.000Z"');
  });
});
