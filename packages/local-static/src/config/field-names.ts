/**
 * The config's keys as upstream reads them. Upstream decodes the ConfigMap with sigs.k8s.io/yaml, which turns the YAML
 * into JSON through a Go map and hands it to encoding/json: so a struct field is matched by its exact name, else
 * case-insensitively (Go's folding: ASCII case, and `K` KELVIN SIGN for `k`, `ſ` LONG S for `s`), at every level (the
 * top-level keys, a class's fields, selector terms, tolerations); and when several spellings of one field are
 * present, they are decoded one after the other in the byte order of the spellings (the Go map's keys are sorted
 * when it becomes JSON), each into what the one before left: a later scalar wins, a `null` changes nothing (and
 * empties a list or map), maps are merged, and list elements are decoded into the elements already there.
 * {@link canonicalKeys} does the same and spells every key as the config's own names, so that the rest reads one
 * spelling; and, as sigs.k8s.io/yaml does for a field of Go type string, it turns a number or a boolean there into its
 * text ({@link goString}), so that `tier: 1` is the label `"1"`.
 *
 * @module
 */
import { goString } from './go-string.js';

/**
 * A Go type of upstream's config, as far as decoding JSON into it goes: a `string` (a number or a boolean read into it
 * becomes its text), another `scalar` (a bool, an int, a duration: read as it is, for the config's checks), or a
 * struct, map or slice of them.
 */
export type GoType =
  | { kind: 'string' }
  | { kind: 'scalar' }
  | { kind: 'struct'; fields: Readonly<Record<string, GoType>> }
  | { kind: 'map'; elem: GoType }
  | { kind: 'slice'; elem: GoType };

const string: GoType = { kind: 'string' };
const scalar: GoType = { kind: 'scalar' };
/** A `metav1.Duration`: it decodes itself from JSON, so sigs.k8s.io/yaml leaves a number there as it is. */
const duration: GoType = scalar;
const strings: GoType = { kind: 'slice', elem: string };

/** `v1.NodeSelectorRequirement`. */
const REQUIREMENT: GoType = { kind: 'struct', fields: { key: string, operator: string, values: strings } };

/** `v1.NodeSelectorTerm`. */
const TERM: GoType = {
  kind: 'struct',
  fields: {
    matchExpressions: { kind: 'slice', elem: REQUIREMENT },
    matchFields: { kind: 'slice', elem: REQUIREMENT },
  },
};

/** `v1.Toleration`. */
const TOLERATION: GoType = {
  kind: 'struct',
  fields: { key: string, operator: string, value: string, effect: string, tolerationSeconds: scalar },
};

/** Upstream's `MountConfig`, plus kprov's `cleanupTimeout`. */
export const CLASS_TYPE: GoType = {
  kind: 'struct',
  fields: {
    hostDir: string,
    mountDir: string,
    blockCleanerCommand: strings,
    volumeMode: string,
    accessMode: string,
    fsType: string,
    namePattern: string,
    selector: { kind: 'slice', elem: TERM },
    cleanupTimeout: duration,
  },
};

/** Upstream's `ProvisionerConfiguration`: the ConfigMap's keys. */
export const CONFIG_TYPE: GoType = {
  kind: 'struct',
  fields: {
    storageClassMap: { kind: 'map', elem: CLASS_TYPE },
    nodeLabelsForPV: strings,
    useAlphaAPI: scalar,
    useJobForCleaning: scalar,
    jobTolerations: { kind: 'slice', elem: TOLERATION },
    minResyncPeriod: duration,
    useNodeNameOnly: scalar,
    labelsForPV: { kind: 'map', elem: string },
    setPVOwnerRef: scalar,
    removeNodeNotReadyTaint: scalar,
    provisionerNotReadyNodeTaintKey: string,
  },
};

/**
 * One character as Go's case folding compares it with an ASCII letter: `bytes.EqualFold` takes an ASCII letter as
 * equal to its other case, and, outside ASCII, only to U+212A KELVIN SIGN (`k`) and U+017F LATIN SMALL LETTER LONG S
 * (`s`), the two non-ASCII characters whose simple folding reaches ASCII. Hand-written: this is all of Go's folding
 * that an ASCII name can meet, and no library reproduces encoding/json's field matching.
 */
function fold(char: string): string {
  if (char === '\u212a') return 'k';
  if (char === '\u017f') return 's';
  return char.length === 1 ? char.toLowerCase() : char;
}

/** Whether encoding/json matches the JSON key `key` with the field named `name` (ASCII) when not exactly equal. */
export function foldsTo(key: string, name: string): boolean {
  const a = [...key];
  if (a.length !== name.length) return false;
  return a.every((char, i) => char === name[i] || fold(char) === fold(name[i]!));
}

/** The field of `fields` that encoding/json decodes the key `key` into: the exact name first, else a folded match. */
export function fieldFor(key: string, fields: Readonly<Record<string, GoType>>): string | undefined {
  if (Object.hasOwn(fields, key)) return key;
  return Object.keys(fields).find((name) => foldsTo(key, name));
}

/** Go's order of map keys once the map becomes JSON: by the bytes of their UTF-8. */
function goOrder(keys: string[]): string[] {
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` with its YAML ints (bigints) as numbers, as JSON has them: a value that is not decoded any further (a
 * scalar, or a value of the wrong shape, for the config's checks) reaches the rest as plain JSON.
 */
function jsonNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(jsonNumbers);
  if (isRecord(value) && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonNumbers(v)]));
  return value;
}

/** A Go zero value for a map or list element decoded from nothing. */
function zeroOf(type: GoType): unknown {
  if (type.kind === 'struct') return {};
  if (type.kind === 'string') return '';
  return undefined;
}

/** What {@link canonicalKeys} noticed: keys spelled otherwise than the config's names, and fields set twice. */
export interface KeyNotice {
  /** Where, as `storageClassMap.fast.selector[0]` (empty at the top). */
  at: string;
  /** The config's name of the field. */
  field: string;
  /** The spellings used, in the order they apply (the last one wins). */
  spellings: string[];
}

function where(at: string, key: string): string {
  const part = /^[A-Za-z_][\w-]*$/.test(key) ? key : JSON.stringify(key);
  return at === '' ? part : `${at}.${part}`;
}

/**
 * Decodes `value` into `target` as encoding/json decodes JSON into a Go value of type `type` (see the module comment);
 * returns the result, `undefined` for a nil map or list. A value of the wrong shape is returned as it is (its ints as
 * numbers), for the config's checks to report.
 */
function decodeInto(target: unknown, value: unknown, type: GoType, at: string, notices: KeyNotice[]): unknown {
  if (value === null || value === undefined) return type.kind === 'map' || type.kind === 'slice' ? undefined : target;
  switch (type.kind) {
    case 'string':
      return jsonNumbers(goString(value));
    case 'scalar':
      return jsonNumbers(value);
    case 'slice': {
      if (!Array.isArray(value)) return jsonNumbers(value);
      const old = Array.isArray(target) ? target : [];
      return value.map((v: unknown, i) =>
        decodeInto(i < old.length ? old[i] : zeroOf(type.elem), v, type.elem, `${at}[${i}]`, notices),
      );
    }
    case 'map': {
      if (!isRecord(value)) return jsonNumbers(value);
      // The keys of one map are distinct, so their order does not matter: the document's is kept.
      const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
      for (const [key, v] of Object.entries(value))
        out[key] = decodeInto(zeroOf(type.elem), v, type.elem, where(at, key), notices);
      return out;
    }
    case 'struct': {
      if (!isRecord(value)) return jsonNumbers(value);
      const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
      const spellings = new Map<string, string[]>();
      for (const key of goOrder(Object.keys(value))) {
        const field = fieldFor(key, type.fields);
        if (field === undefined) continue; // Unknown keys are ignored, as upstream's non-strict decoding does.
        spellings.set(field, [...(spellings.get(field) ?? []), key]);
        const next = decodeInto(out[field], value[key], type.fields[field]!, where(at, field), notices);
        if (next === undefined) delete out[field];
        else out[field] = next;
      }
      for (const [field, used] of spellings)
        if (used.length > 1 || used[0] !== field) notices.push({ at, field, spellings: used });
      return out;
    }
  }
}

/**
 * The config's keys (each ConfigMap key's parsed YAML) with every field spelled as the config names it, decoded as
 * upstream decodes them (see the module comment); `notices` lists the keys spelled otherwise and the fields set by
 * several spellings. Unknown keys are left out.
 */
export function canonicalKeys(keys: Readonly<Record<string, unknown>>): {
  keys: Record<string, unknown>;
  notices: KeyNotice[];
} {
  const notices: KeyNotice[] = [];
  const decoded = decodeInto({}, keys, CONFIG_TYPE, '', notices);
  return { keys: isRecord(decoded) ? decoded : {}, notices };
}

/** The warning of a notice, naming the field as the config spells it. */
export function noticeMessage(notice: KeyNotice): string {
  const field = where(notice.at, notice.field);
  const quoted = notice.spellings.map((s) => JSON.stringify(s));
  if (notice.spellings.length === 1)
    return `config key ${where(notice.at, notice.spellings[0]!)} is read as ${field}: spell it ${JSON.stringify(notice.field)}`;
  return `config key ${field} is set ${notice.spellings.length} times, as ${quoted.join(', ')}: they apply in that order (the byte order of the spellings, as upstream applies them), so ${quoted.at(-1)!} wins; keep one, spelled ${JSON.stringify(notice.field)}`;
}
