import type { IncomingMessage } from 'node:http';
import { badRequest, StatusError } from '../api/status.js';

/** kube-apiserver's default request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the request body, answering 413 past the limit as the real server does. */
export async function readBody(req: IncomingMessage): Promise<string> {
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
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Renders the start of a body as the apiserver's decode errors do (`summarizeData`): `<empty>`, the first 30 bytes
 * as text when the body starts with `{`, or else as hex; ` ...` marks a cut.
 */
function summarize(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
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

/**
 * Parses an object body for create and update. A body that is not JSON gets the 400 that kube-apiserver sends
 * when it cannot even find apiVersion and kind.
 */
export function parseObjectBody(text: string, kind: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${goJsonError(text)} (${summarize(text)})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const goType = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${goType} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (${summarize(text)})`,
    );
  }
  return value as Record<string, unknown>;
}

/** Parses a patch body; the caller decides what shape it needs. */
export function parsePatchBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`error decoding patch: ${goJsonError(text)}`);
  }
}
