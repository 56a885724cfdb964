import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, StatusError, unsupportedMediaType } from '../api/status.js';
import { decodeProtobufObject, readsProtobuf } from './protobuf.js';

/** kube-apiserver's default request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** A request body: its bytes and the media type of its `Content-Type` (lower case, without parameters; `''` when none). */
export interface RequestBody {
  bytes: Buffer;
  mediaType: string;
}

/** The media type of a `Content-Type` header: lower case, without parameters; `''` when there is none. */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** Reads the request body, answering 413 past the limit as the real server does. */
export async function readBody(req: IncomingMessage): Promise<RequestBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) {
      throw new StatusError(413, 'RequestEntityTooLarge', `the request is too large`);
    }
    chunks.push(b);
  }
  return { bytes: Buffer.concat(chunks), mediaType: mediaTypeOf(req.headers['content-type']) };
}

/**
 * Renders the start of a body as the apiserver's decode errors do (`summarizeData`): `<empty>`, the first 30 bytes
 * as text when the body starts with `{`, or else as hex; ` ...` marks a cut.
 */
export function summarize(bytes: Buffer): string {
  if (bytes.length === 0) return '<empty>';
  const max = 30;
  const head = bytes.subarray(0, max);
  const shown = bytes[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return bytes.length > max ? `${shown} ...` : shown;
}

/** Go's encoding/json wording for the first syntax error in `text`. */
function goJsonError(text: string): string {
  if (text.trim() === '') return 'unexpected end of JSON input';
  try {
    JSON.parse(text);
    return '';
  } catch (e) {
    const m = /position (\d+)/.exec(String(e));
    const at = m === null ? -1 : Number(m[1]);
    const ch = at >= 0 ? text[at] : undefined;
    if (ch === undefined) return 'unexpected end of JSON input';
    return `invalid character '${ch}' looking for beginning of value`;
  }
}

function notAnObject(kind: string, value: unknown, bytes: Buffer): StatusError {
  const goType = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  return badRequest(
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${goType} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (${summarize(bytes)})`,
  );
}

/**
 * Parses a JSON object body. A body that is not JSON gets the 400 that kube-apiserver sends when it cannot even find
 * apiVersion and kind.
 */
function parseJsonObject(bytes: Buffer, kind: string): Record<string, unknown> {
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${goJsonError(text)} (${summarize(bytes)})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject(kind, value, bytes);
  return value as Record<string, unknown>;
}

/** Parses a YAML object body, as the apiserver does: YAML 1.1 (go-yaml), converted to JSON. */
function parseYamlObject(bytes: Buffer, kind: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(bytes.toString('utf8'), { version: '1.1' });
  } catch (e) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): error converting YAML to JSON: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject(kind, value, bytes);
  return value as Record<string, unknown>;
}

/** Media types an object body may come in, in kube-apiserver's order; protobuf for the kinds {@link readsProtobuf} names. */
export function objectMediaTypes(kind: string): string[] {
  return ['application/json', 'application/yaml', ...(readsProtobuf(kind) ? [PROTOBUF] : [])];
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/**
 * Decodes an object body (create, update, binding, delete options) by its media type, as kube-apiserver's input
 * negotiation does: none is JSON; JSON and YAML are read, and protobuf for the kinds Go clients send that way; anything
 * else gets 415 UnsupportedMediaType with the list of what is accepted (as a server without protobuf for a kind, such
 * as one serving a custom resource, answers).
 */
export function parseObjectBody(body: RequestBody, kind: string): Record<string, unknown> {
  switch (body.mediaType) {
    case '':
    case 'application/json':
      return parseJsonObject(body.bytes, kind);
    case 'application/yaml':
      return parseYamlObject(body.bytes, kind);
    case PROTOBUF:
      if (readsProtobuf(kind)) return decodeProtobufObject(body.bytes, kind, summarize);
      throw unsupportedMediaType(objectMediaTypes(kind));
    default:
      throw unsupportedMediaType(objectMediaTypes(kind));
  }
}

/** Parses a patch body; the caller decides what shape it needs. */
export function parsePatchBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`error decoding patch: ${goJsonError(text)}`);
  }
}
