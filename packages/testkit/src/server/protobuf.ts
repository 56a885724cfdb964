/**
 * Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), for the kinds Go clients
 * send that way: kubectl's generators (`kubectl create namespace`, `configmap`, `secret`, `serviceaccount`) build
 * typed objects and client-go sends them as protobuf, and client-go 1.32 does not retry a protobuf body as JSON when
 * the server answers 415 (it does so only for CBOR). A body is the magic `k8s\0` followed by a `runtime.Unknown`
 * (type meta, then the object's own protobuf bytes); the object is turned into the JSON the same client would have
 * sent, Go's `omitempty` included, and from there it goes the way a JSON body goes.
 */
import { badRequest, type StatusError } from '../api/status.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** How one field is decoded. */
type FieldType = 'string' | 'bytes' | 'bool' | 'int64' | 'time' | { message: Schema } | { map: 'string' | 'bytes' };

interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
}

type Schema = Readonly<Record<number, Field>>;

const OWNER_REFERENCE: Schema = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};

/** `metav1.ObjectMeta`, without `managedFields` (which the server sets itself). */
const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  4: { name: 'selfLink', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int64' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int64' },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: { name: 'ownerReferences', type: { message: OWNER_REFERENCE }, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};

const OBJECT_REFERENCE: Schema = {
  1: { name: 'kind', type: 'string' },
  2: { name: 'namespace', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'fieldPath', type: 'string' },
};

const meta: Field = { name: 'metadata', type: { message: OBJECT_META } };

/** The kinds (core/v1) whose protobuf bodies are read, with their `generated.proto` field numbers. */
const KINDS: Readonly<Record<string, Schema>> = {
  Namespace: {
    1: meta,
    2: { name: 'spec', type: { message: { 1: { name: 'finalizers', type: 'string', repeated: true } } } },
    3: {
      name: 'status',
      type: {
        message: {
          1: { name: 'phase', type: 'string' },
          2: {
            name: 'conditions',
            repeated: true,
            type: {
              message: {
                1: { name: 'type', type: 'string' },
                2: { name: 'status', type: 'string' },
                4: { name: 'lastTransitionTime', type: 'time' },
                5: { name: 'reason', type: 'string' },
                6: { name: 'message', type: 'string' },
              },
            },
          },
        },
      },
    },
  },
  ConfigMap: {
    1: meta,
    2: { name: 'data', type: { map: 'string' } },
    3: { name: 'binaryData', type: { map: 'bytes' } },
    4: { name: 'immutable', type: 'bool' },
  },
  Secret: {
    1: meta,
    2: { name: 'data', type: { map: 'bytes' } },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: { map: 'string' } },
    5: { name: 'immutable', type: 'bool' },
  },
  ServiceAccount: {
    1: meta,
    2: { name: 'secrets', type: { message: OBJECT_REFERENCE }, repeated: true },
    3: { name: 'imagePullSecrets', type: { message: { 1: { name: 'name', type: 'string' } } }, repeated: true },
    4: { name: 'automountServiceAccountToken', type: 'bool' },
  },
};

/** Whether protobuf bodies of this kind are read. */
export function readsProtobuf(kind: string): boolean {
  return Object.hasOwn(KINDS, kind);
}

class Truncated extends Error {}

/** A protobuf wire-format reader over one message. */
class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw new Truncated('unexpected EOF');
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      if (shift > 63n) throw new Error('proto: integer overflow');
    }
  }

  bytes(): Buffer {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Truncated('unexpected EOF');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`proto: illegal wireType ${wireType}`);
    if (this.pos > this.buf.length) throw new Truncated('unexpected EOF');
  }
}

/** Go's RFC 3339 rendering of a `metav1.Time` (whole seconds, UTC). */
function timeOf(buf: Buffer): string | undefined {
  let seconds = 0n;
  const r = new Reader(buf);
  while (!r.done) {
    const key = Number(r.varint());
    if (key >>> 3 === 1 && (key & 7) === 0) seconds = BigInt.asIntN(64, r.varint());
    else r.skip(key & 7);
  }
  if (seconds === 0n) return undefined;
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function mapEntry(buf: Buffer, valueType: 'string' | 'bytes'): [string, string] {
  let key = '';
  let value = '';
  const r = new Reader(buf);
  while (!r.done) {
    const tag = Number(r.varint());
    const field = tag >>> 3;
    if ((tag & 7) !== 2) {
      r.skip(tag & 7);
      continue;
    }
    const b = r.bytes();
    if (field === 1) key = b.toString('utf8');
    else if (field === 2) value = valueType === 'bytes' ? b.toString('base64') : b.toString('utf8');
  }
  return [key, value];
}

/**
 * A message as the JSON Go would write for it: empty strings, zero numbers and zero times are left out (`omitempty`),
 * while a bool present on the wire is kept (the optional ones are pointers: present means set, even to false).
 */
function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (!r.done) {
    const tag = Number(r.varint());
    const field = schema[tag >>> 3];
    const wireType = tag & 7;
    if (field === undefined) {
      r.skip(wireType);
      continue;
    }
    const { name, type } = field;
    let value: unknown;
    if (type === 'bool' || type === 'int64') {
      if (wireType !== 0) throw new Error(`proto: wrong wireType = ${wireType} for field ${name}`);
      const n = BigInt.asIntN(64, r.varint());
      value = type === 'bool' ? n !== 0n : Number(n);
      if (type === 'int64' && value === 0 && name === 'generation') value = undefined;
    } else {
      if (wireType !== 2) throw new Error(`proto: wrong wireType = ${wireType} for field ${name}`);
      const b = r.bytes();
      if (type === 'string') value = b.toString('utf8');
      else if (type === 'bytes') value = b.toString('base64');
      else if (type === 'time') value = timeOf(b);
      else if ('map' in type) {
        const [k, v] = mapEntry(b, type.map);
        const m = (out[name] ?? {}) as Record<string, string>;
        m[k] = v;
        out[name] = m;
        continue;
      } else value = decodeMessage(b, type.message);
    }
    if (field.repeated === true) {
      (out[name] = (out[name] ?? []) as unknown[]).push(value);
    } else if (value !== undefined && value !== '') {
      out[name] = value;
    }
  }
  return out;
}

function unrecognized(kind: string, bytes: Buffer, detail: string, summary: (b: Buffer) => string): StatusError {
  return badRequest(`the object provided is unrecognized (must be of type ${kind}): ${detail} (${summary(bytes)})`);
}

/**
 * Decodes a protobuf request body of `kind` into the JSON object the client meant, with `apiVersion` and `kind` from
 * the envelope. Throws 400 BadRequest, worded as kube-apiserver words it, for a body that is not one.
 */
export function decodeProtobufObject(
  bytes: Buffer,
  kind: string,
  summary: (b: Buffer) => string,
): Record<string, unknown> {
  const schema = KINDS[kind];
  if (schema === undefined) throw new Error(`no protobuf schema for ${kind}`);
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw unrecognized(
      kind,
      bytes,
      `provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`,
      summary,
    );
  }
  try {
    const envelope = decodeMessage(bytes.subarray(MAGIC.length), {
      1: {
        name: 'typeMeta',
        type: { message: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } },
      },
      2: { name: 'raw', type: 'bytes' },
      3: { name: 'contentEncoding', type: 'string' },
    });
    const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
    const raw = Buffer.from(typeof envelope.raw === 'string' ? envelope.raw : '', 'base64');
    if (typeof envelope.contentEncoding === 'string')
      throw new Error(`unsupported content encoding ${envelope.contentEncoding}`);
    return {
      ...(typeMeta.apiVersion === undefined ? {} : { apiVersion: typeMeta.apiVersion }),
      ...(typeMeta.kind === undefined ? {} : { kind: typeMeta.kind }),
      ...decodeMessage(raw, schema),
    };
  } catch (e) {
    throw unrecognized(kind, bytes, e instanceof Error ? e.message : String(e), summary);
  }
}
