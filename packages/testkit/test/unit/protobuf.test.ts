import { describe, expect, it } from 'vitest';
import { parseObjectBody, summarize } from '../../src/server/body.js';
import { decodeProtobufObject } from '../../src/server/protobuf.js';
import { StatusError } from '../../src/api/status.js';

/** Protobuf wire encoding, enough for the tests: length-delimited and varint fields. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
};
const bytesField = (field: number, value: Buffer | string): Buffer => {
  const b = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.from([...varint((field << 3) | 2), ...varint(b.length), ...b]);
};
const boolField = (field: number, value: boolean): Buffer => Buffer.from([...varint(field << 3), value ? 1 : 0]);
const message = (...fields: Buffer[]): Buffer => Buffer.concat(fields);
const entry = (field: number, key: string, value: string | Buffer): Buffer =>
  bytesField(field, message(bytesField(1, key), bytesField(2, value)));
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer =>
  Buffer.concat([
    Buffer.from('k8s\0'),
    bytesField(1, message(bytesField(1, apiVersion), bytesField(2, kind))),
    bytesField(2, raw),
    bytesField(3, ''),
    bytesField(4, ''),
  ]);

function statusOf(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('protobuf request bodies', () => {
  it('decodes a ConfigMap as the JSON a client would have sent, omitempty included', () => {
    // As client-go writes it: empty strings and an empty creationTimestamp written out for the non-pointer fields.
    const metadata = message(
      bytesField(1, 'cm'),
      bytesField(2, ''),
      bytesField(3, ''),
      entry(11, 'app', 'x'),
      bytesField(8, Buffer.alloc(0)),
      bytesField(14, 'example.com/f'),
    );
    const raw = message(
      bytesField(1, metadata),
      entry(2, 'a', 'b'),
      entry(2, 'empty', ''),
      entry(3, 'bin', Buffer.from([0, 1, 2])),
      boolField(4, false),
    );
    expect(decodeProtobufObject(envelope('v1', 'ConfigMap', raw), 'ConfigMap', summarize)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', labels: { app: 'x' }, finalizers: ['example.com/f'] },
      data: { a: 'b', empty: '' },
      binaryData: { bin: 'AAEC' },
      // A pointer in Go: present on the wire means set, even to false.
      immutable: false,
    });
  });

  it('answers 400 for a body without the protobuf magic, as kube-apiserver words it', () => {
    const body = { bytes: Buffer.from('{"metadata":{}}'), mediaType: 'application/vnd.kubernetes.protobuf' };
    expect(statusOf(() => parseObjectBody(body, 'Namespace'))).toEqual({
      code: 400,
      message:
        'the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({"metadata":{}})',
    });
  });

  it('answers 415 for a protobuf body of a kind it does not read, listing what it accepts', () => {
    const body = {
      bytes: envelope('v1', 'PersistentVolumeClaim', Buffer.alloc(0)),
      mediaType: 'application/vnd.kubernetes.protobuf',
    };
    expect(statusOf(() => parseObjectBody(body, 'PersistentVolumeClaim'))).toEqual({
      code: 415,
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    });
  });
});
