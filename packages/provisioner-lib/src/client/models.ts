// Each model by its own module: client-node's entry point loads all of them, and every generated API.
import { CoreV1Event } from '@kubernetes/client-node/dist/gen/models/CoreV1Event.js';
import { V1Lease } from '@kubernetes/client-node/dist/gen/models/V1Lease.js';
import { V1ListMeta } from '@kubernetes/client-node/dist/gen/models/V1ListMeta.js';
import { V1ManagedFieldsEntry } from '@kubernetes/client-node/dist/gen/models/V1ManagedFieldsEntry.js';
import { V1ObjectMeta } from '@kubernetes/client-node/dist/gen/models/V1ObjectMeta.js';
import { V1PersistentVolume } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolume.js';
import { V1PersistentVolumeClaim } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeClaim.js';
import { V1PersistentVolumeClaimCondition } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeClaimCondition.js';
import { V1PersistentVolumeClaimStatus } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeClaimStatus.js';
import { V1PersistentVolumeStatus } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeStatus.js';
import { V1StorageClass } from '@kubernetes/client-node/dist/gen/models/V1StorageClass.js';

/** What client-node's generated models say about one attribute (`static attributeTypeMap`). */
interface AttributeType {
  name: string;
  baseName: string;
  type: string;
}

/** In-place conversion of one JSON value; `undefined` where nothing needs converting. */
type Convert = (value: unknown) => unknown;

const NULLABLE = ' | null';
const OPTIONAL = ' | undefined';
const ARRAY = 'Array<';
const MAP = '{ [key: string]: ';

/**
 * The models the decoders walk, by client-node's type name: the kinds the library decodes, and every model reached
 * from them that has (itself or below it) a `Date` or a renamed attribute. Any other model name reached from them
 * has nothing to convert and is kept as parsed: `V1LeaseSpec`, for one, whose `acquireTime` and `renewTime` are
 * `V1MicroTime`s, which client-node's `ObjectSerializer` leaves as the strings received (the type is not in its type
 * map), and so does the decoder. Named one by one rather than looked up in client-node's whole namespace, so that a
 * bundled binary keeps only the client-node code it calls (the namespace would keep every generated API: about 2 MB
 * of the bundle, and RSS). `test/client/models.test.ts` walks all of client-node's models from these roots and fails
 * when one is missing here.
 */
const MODELS: Readonly<Record<string, { readonly attributeTypeMap: readonly AttributeType[] }>> = {
  CoreV1Event,
  V1Lease,
  V1ListMeta,
  V1ManagedFieldsEntry,
  V1ObjectMeta,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1PersistentVolumeClaimCondition,
  V1PersistentVolumeClaimStatus,
  V1PersistentVolumeStatus,
  V1StorageClass,
};

/** The type names {@link modelDecoder} knows. */
export const DECODED_MODELS: readonly string[] = Object.keys(MODELS);

const compiled = new Map<string, Convert | null>();

function modelAttributes(type: string): readonly AttributeType[] | undefined {
  return Object.hasOwn(MODELS, type) ? MODELS[type]?.attributeTypeMap : undefined;
}

const toDate: Convert = (value) => (value === null || value === undefined ? value : new Date(value as string));

/**
 * The conversion of a value of `type` (a client-node type string such as `V1ObjectMeta`, `Array<V1Volume>` or
 * `Date`), or null when values of that type are kept as they are: primitives, free-form objects and models none of
 * whose attributes (recursively) is a `Date` or renamed.
 */
function converter(type: string): Convert | null {
  if (type.endsWith(NULLABLE)) return converter(type.slice(0, -NULLABLE.length));
  if (type.endsWith(OPTIONAL)) return converter(type.slice(0, -OPTIONAL.length));
  if (type === 'Date') return toDate;
  if (type.startsWith(ARRAY)) {
    const item = converter(type.slice(ARRAY.length, -1));
    if (item === null) return null;
    return (value) => {
      if (!Array.isArray(value)) return value;
      const list = value as unknown[];
      for (let i = 0; i < list.length; i++) list[i] = item(list[i]);
      return list;
    };
  }
  if (type.startsWith(MAP)) {
    const item = converter(type.slice(MAP.length, -3));
    if (item === null) return null;
    return (value) => {
      if (typeof value !== 'object' || value === null) return value;
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = item(record[key]);
      return value;
    };
  }
  const cached = compiled.get(type);
  if (cached !== undefined) return cached;
  const attributes = modelAttributes(type);
  if (attributes === undefined) return null;
  // A cycle in the models (JSONSchemaProps) goes through here again: start as "nothing to convert" and let the
  // recursion use a forwarding function once this model turns out to need one.
  let self: Convert | null = null;
  compiled.set(type, (value) => (self === null ? value : self(value)));
  const steps: { name: string; baseName: string; convert: Convert | null }[] = [];
  for (const a of attributes) {
    const convert = converter(a.type);
    if (convert !== null || a.name !== a.baseName) steps.push({ name: a.name, baseName: a.baseName, convert });
  }
  if (steps.length > 0) {
    self = (value) => {
      if (typeof value !== 'object' || value === null) return value;
      const o = value as Record<string, unknown>;
      for (const step of steps) {
        const raw = o[step.baseName];
        if (raw === undefined) continue;
        if (step.name !== step.baseName) delete o[step.baseName];
        o[step.name] = step.convert === null ? raw : step.convert(raw);
      }
      return value;
    };
  }
  compiled.set(type, self);
  return self;
}

/**
 * Turns a freshly parsed JSON object of client-node model `type` (e.g. `V1PersistentVolumeClaim`) into the shape
 * client-node's `ObjectSerializer.deserialize` gives it, in place: `date-time` fields become `Date`s and attributes
 * whose JSON name is not a JavaScript name are renamed (`continue` → `_continue`). Every other value is kept as
 * parsed: no copy, no class instances (the objects are plain, their fields and types those of the model), and
 * fields the model does not know are kept rather than dropped.
 *
 * The conversion is compiled once per type from the model's `attributeTypeMap`; types with nothing to convert cost
 * nothing per object.
 */
export function modelDecoder<T>(type: string): (json: unknown) => T {
  const convert = converter(type);
  if (modelAttributes(type) === undefined)
    throw new Error(
      `modelDecoder: ${type} is not among the models the library decodes (${DECODED_MODELS.join(', ')}); add it to MODELS in client/models.ts`,
    );
  return convert === null ? (json) => json as T : (json) => convert(json) as T;
}

/** A list's `metadata` as client-node's `V1ListMeta` (its continue token as `_continue`), in place. */
export const decodeListMeta = modelDecoder<V1ListMeta>('V1ListMeta');
