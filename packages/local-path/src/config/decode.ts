/**
 * Decoding `config.json` text into a {@link RawConfig} with the rules of Go's `encoding/json`: keys matched
 * case-insensitively, unknown keys ignored (but listed in `unknownKeys`, for a warning), later duplicate keys win, `null` leaves strings and numbers unchanged
 * and empties arrays and maps, integers must be written as integers, and a value of the wrong type is an error.
 *
 * @packageDocumentation
 */
import { ConfigError } from './errors.js';
import { CONFIG_KEYS, matchKey, type RawConfig, type RawNodePathMap, type RawStorageClassConfig } from './schema.js';

/** A JSON number with its source text, so that `1.0` and `1e2` can be refused for an integer as Go does. */
class JsonNumber {
  constructor(
    readonly value: number,
    readonly source: string,
  ) {}
}

type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };

/** Where a value sits, to name it in type errors as Go does (`ConfigData.nodePathMap.paths`). */
interface Context {
  readonly struct: string;
  readonly fields: readonly string[];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function kindOf(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof JsonNumber) return 'number';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

function typeError(value: JsonValue, ctx: Context, goType: string, wanted: string): ConfigError {
  const shown = value instanceof JsonNumber && /[.eE]/.test(value.source) ? `number ${value.source}` : kindOf(value);
  const where = ctx.fields.join('.');
  return new ConfigError(
    'wrong-type',
    `json: cannot unmarshal ${shown} into Go struct field ${ctx.struct}.${where} of type ${goType}`,
    `"${where}" must be ${wanted}`,
  );
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

function decodeString(value: JsonValue, previous: string, ctx: Context): string {
  if (value === null) return previous;
  if (typeof value !== 'string') throw typeError(value, ctx, 'string', 'a string');
  return value;
}

function decodeInt(value: JsonValue, previous: number, ctx: Context): number {
  if (value === null) return previous;
  if (!(value instanceof JsonNumber)) throw typeError(value, ctx, 'int', 'an integer');
  if (!/^-?\d+$/.test(value.source)) throw typeError(value, ctx, 'int', 'an integer');
  const big = BigInt(value.source);
  if (big < INT64_MIN || big > INT64_MAX) {
    throw new ConfigError(
      'wrong-type',
      `json: cannot unmarshal number ${value.source} into Go struct field ${ctx.struct}.${ctx.fields.join('.')} of type int`,
      `"${ctx.fields.join('.')}" must fit in a 64-bit integer`,
    );
  }
  return Number(big);
}

function decodeArray<T>(value: JsonValue, ctx: Context, goType: string, item: (v: JsonValue) => T): T[] {
  if (value === null) return [];
  if (!Array.isArray(value)) throw typeError(value, ctx, goType, 'an array');
  return value.map(item);
}

/** Unknown keys seen while decoding, as `where.key`. */
type Unknown = string[];

function decodeNodePathMap(value: JsonValue, ctx: Context, unknown: Unknown, where: string): RawNodePathMap | null {
  if (value === null) return null;
  if (!isObject(value))
    throw typeError(value, ctx, 'main.NodePathMapData', 'an array of {"node": ..., "paths": [...]} objects');
  const entry: RawNodePathMap = { node: '', paths: [] };
  const inner = { struct: 'NodePathMapData', fields: ctx.fields };
  for (const [key, v] of Object.entries(value)) {
    const field = matchKey(key, [CONFIG_KEYS.node, CONFIG_KEYS.paths]);
    if (field === undefined) unknown.push(`${where}.${key}`);
    if (field === 'node') entry.node = decodeString(v, entry.node, { ...inner, fields: [...ctx.fields, 'node'] });
    if (field === 'paths') {
      const c = { ...inner, fields: [...ctx.fields, 'paths'] };
      const decoded = decodeArray(v, c, '[]string', (p) => decodePathEntry(p, c, unknown, where));
      entry.paths = decoded.map((d) => d.path);
      if (decoded.some((d) => d.capacity !== undefined)) entry.capacities = decoded.map((d) => d.capacity);
      else delete entry.capacities;
    }
  }
  return entry;
}

/**
 * One entry of `paths`: upstream's string, or (ours) an object `{"path": "/data", "capacity": "100Gi" | "auto"}`
 * declaring the path's capacity.
 */
function decodePathEntry(
  value: JsonValue,
  ctx: Context,
  unknown: Unknown,
  where: string,
): { path: string; capacity: string | undefined } {
  if (!isObject(value)) return { path: decodeString(value, '', ctx), capacity: undefined };
  const out: { path: string; capacity: string | undefined } = { path: '', capacity: undefined };
  const inner = { struct: 'NodePathData', fields: ctx.fields };
  for (const [key, v] of Object.entries(value)) {
    const field = matchKey(key, [CONFIG_KEYS.path, CONFIG_KEYS.capacity]);
    if (field === undefined) unknown.push(`${where}.paths.${key}`);
    else if (field === 'path') out.path = decodeString(v, out.path, { ...inner, fields: [...ctx.fields, 'path'] });
    else out.capacity = decodeString(v, out.capacity ?? '', { ...inner, fields: [...ctx.fields, 'capacity'] });
  }
  return out;
}

function decodeNodePathMaps(
  value: JsonValue,
  ctx: Context,
  unknown: Unknown,
  where: string,
): (RawNodePathMap | null)[] {
  let index = 0;
  return decodeArray(value, ctx, '[]*main.NodePathMapData', (v) =>
    decodeNodePathMap(v, ctx, unknown, `${where}[${index++}]`),
  );
}

function decodeClassConfig(value: JsonValue, ctx: Context, unknown: Unknown, where: string): RawStorageClassConfig {
  const out: RawStorageClassConfig = { nodePathMap: [], sharedFileSystemPath: '' };
  if (value === null) return out;
  if (!isObject(value)) throw typeError(value, ctx, 'main.StorageClassConfigData', 'an object');
  const inner = { struct: 'StorageClassConfigData', fields: ctx.fields };
  for (const [key, v] of Object.entries(value)) {
    const field = matchKey(key, [
      CONFIG_KEYS.nodePathMap,
      CONFIG_KEYS.sharedFileSystemPath,
      CONFIG_KEYS.minSize,
      CONFIG_KEYS.maxSize,
    ]);
    if (field === undefined) {
      unknown.push(`${where}.${key}`);
      continue;
    }
    const c = { ...inner, fields: [...ctx.fields, field] };
    if (field === 'nodePathMap') out.nodePathMap = decodeNodePathMaps(v, c, unknown, `${where}.nodePathMap`);
    else if (field === 'minSize' || field === 'maxSize') out[field] = decodeString(v, out[field] ?? '', c);
    else out.sharedFileSystemPath = decodeString(v, out.sharedFileSystemPath, c);
  }
  return out;
}

const TOP_FIELDS = [
  CONFIG_KEYS.cmdTimeoutSeconds,
  CONFIG_KEYS.sharedFileSystemPath,
  CONFIG_KEYS.nodePathMap,
  CONFIG_KEYS.setupCommand,
  CONFIG_KEYS.teardownCommand,
  CONFIG_KEYS.storageClassConfigs,
  CONFIG_KEYS.minSize,
  CONFIG_KEYS.maxSize,
] as const;

function decodeTop(value: JsonValue): RawConfig {
  const out: RawConfig = {
    nodePathMap: [],
    sharedFileSystemPath: '',
    storageClassConfigs: null,
    cmdTimeoutSeconds: 0,
    setupCommand: '',
    teardownCommand: '',
    unknownKeys: [],
  };
  const unknown = out.unknownKeys!;
  if (value === null) return out;
  if (!isObject(value)) {
    throw new ConfigError(
      'wrong-type',
      `json: cannot unmarshal ${kindOf(value)} into Go value of type main.ConfigData`,
      'the config must be a JSON object such as {"nodePathMap": [...]}',
    );
  }
  for (const [key, v] of Object.entries(value)) {
    const field = matchKey(key, TOP_FIELDS);
    if (field === undefined) {
      unknown.push(key);
      continue;
    }
    const ctx = { struct: 'ConfigData', fields: [field] };
    switch (field) {
      case 'cmdTimeoutSeconds':
        out.cmdTimeoutSeconds = decodeInt(v, out.cmdTimeoutSeconds, ctx);
        break;
      case 'nodePathMap':
        out.nodePathMap = decodeNodePathMaps(v, ctx, unknown, 'nodePathMap');
        break;
      case 'storageClassConfigs':
        out.storageClassConfigs = decodeClassMap(v, out.storageClassConfigs, ctx, unknown);
        break;
      case 'minSize':
      case 'maxSize':
        out[field] = decodeString(v, out[field] ?? '', ctx);
        break;
      case 'setupCommand':
      case 'teardownCommand':
      case 'sharedFileSystemPath':
        out[field] = decodeString(v, out[field], ctx);
    }
  }
  return out;
}

/** Go decodes a repeated (for example differently cased) map key into the same map, so entries add up. */
function decodeClassMap(
  value: JsonValue,
  previous: Map<string, RawStorageClassConfig> | null,
  ctx: Context,
  unknown: Unknown,
): Map<string, RawStorageClassConfig> | null {
  if (value === null) return null;
  if (!isObject(value))
    throw typeError(value, ctx, 'map[string]main.StorageClassConfigData', 'an object of class name → config');
  const map = previous ?? new Map<string, RawStorageClassConfig>();
  for (const [name, v] of Object.entries(value))
    map.set(name, decodeClassConfig(v, ctx, unknown, `storageClassConfigs.${name}`));
  return map;
}

/** The reviver's third argument (JSON.parse source text access, Node 21+). */
interface ReviverContext {
  source?: string;
}

function parseJson(text: string): JsonValue {
  return JSON.parse(text, function (_key: string, value: unknown, context?: ReviverContext): unknown {
    if (typeof value === 'number') return new JsonNumber(value, context?.source ?? String(value));
    return value;
  }) as JsonValue;
}

/**
 * Decodes `config.json` text as upstream's `loadConfigFile` does, without checking paths (see `canonicalizeConfig`).
 *
 * @param text - the JSON text.
 * @param configFile - how upstream names the config in `fail to load config file <configFile>: ...`: the file path,
 *   or (the default, as upstream does for a config given inline) the text itself.
 * @throws {@link ConfigError} `invalid-json` or `wrong-type`, its upstream message wrapped in
 *   `fail to load config file <configFile>: <err>`.
 */
export function decodeConfig(text: string, configFile: string = text): RawConfig {
  const prefix = `fail to load config file ${configFile}`;
  let json: JsonValue;
  try {
    json = parseJson(text);
  } catch (err) {
    const reason =
      text.trim() === '' ? 'unexpected end of JSON input' : err instanceof Error ? err.message : String(err);
    throw new ConfigError(
      'invalid-json',
      `${prefix}: ${reason}`,
      'the config must be valid JSON; check quotes, commas and brackets',
      {
        cause: err,
      },
    );
  }
  try {
    return decodeTop(json);
  } catch (err) {
    if (err instanceof ConfigError) throw err.wrap(prefix);
    throw err;
  }
}
