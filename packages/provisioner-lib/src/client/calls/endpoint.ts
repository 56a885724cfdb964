import type { ConfigurationOptions } from '@kubernetes/client-node';
import { DECODED_MODELS, decodeListMeta, modelDecoder } from '../models.js';
import { checkRequired, JSON_PATCH_TYPES, type Query, type RestClient, type RestRequest } from '../rest.js';

/** How the answer of an {@link Endpoint} is read. */
type Answer =
  /** One object of the model. */
  | 'object'
  /** A list of the model: `items` (never missing) and its `metadata` with client-node's `_continue`. */
  | 'list'
  /** The answer's text as it came (a pod's log). */
  | 'text';

/** One call of a generated client-node API class, as the library sends it over a {@link RestClient}. */
export interface Endpoint {
  readonly method: RestRequest['method'];
  /** The path with its parameters in braces, e.g. `/api/v1/namespaces/{namespace}/pods/{name}`. */
  readonly path: string;
  /** client-node's model name of the object (of a list's items), e.g. `V1Pod`. */
  readonly model: string;
  readonly answer: Answer;
  /** Whether the call takes a `body` (required by client-node for creates, replaces and patches). */
  readonly body: 'none' | 'required' | 'optional';
}

const PARAMETER = /\{(\w+)\}/g;

/** The maker of {@link Endpoint}s of one kind of call, from their path and model. */
const endpoint =
  (method: RestRequest['method'], answer: Answer, body: Endpoint['body']) =>
  (path: string, model: string): Endpoint => ({ method, path, model, answer, body });

/** A read (GET) of one object. */
export const read = endpoint('GET', 'object', 'none');
/** A list (GET of a collection). */
export const list = endpoint('GET', 'list', 'none');
/** A create (POST to a collection). */
export const create = endpoint('POST', 'object', 'required');
/** A replace (PUT of one object). */
export const replace = endpoint('PUT', 'object', 'required');
/** A patch of one object: a JSON patch unless the per-call options set another of `JSON_PATCH_TYPES`. */
export const patch = endpoint('PATCH', 'object', 'required');
/** A delete of one object; its `DeleteOptions` body is optional. */
export const remove = endpoint('DELETE', 'object', 'optional');
/** A GET whose answer is text, e.g. a pod's log. */
export const readText = (path: string): Endpoint => endpoint('GET', 'text', 'none')(path, 'string');

/** The decoder of `model` if the library decodes it (dates to `Date`s), else the parsed JSON as it is. */
function decoderOf(model: string): (json: unknown) => unknown {
  return DECODED_MODELS.includes(model) ? modelDecoder(model) : (json) => json;
}

/**
 * The call of `endpoint` with the signature of client-node's generated method `api.name`: `(param, options?)`. It
 * checks the path's parameters and a required body as client-node does (`RequiredError`), puts the path's
 * parameters in the path (escaped), sends every other field of `param` but `body` as a query parameter (client-node's
 * `_continue` as `continue`; `undefined` ones left out) and `body` as JSON, and applies the per-call options as
 * `RestClient.json` does.
 */
export function endpointCall(
  rest: RestClient,
  api: string,
  name: string,
  endpoint: Endpoint,
): (param?: object, options?: ConfigurationOptions) => Promise<unknown> {
  const inPath = [...endpoint.path.matchAll(PARAMETER)].map((m) => m[1] as string);
  const required = endpoint.body === 'required' ? [...inPath, 'body'] : inPath;
  const decode = decoderOf(endpoint.model);
  return async (param = {}, options) => {
    checkRequired([api, name], param, required);
    const values = param as Record<string, unknown>;
    const path = endpoint.path.replace(PARAMETER, (_, key: string) => encodeURIComponent(String(values[key])));
    const query: Record<string, Query[string]> = {};
    for (const [key, value] of Object.entries(values))
      if (key !== 'body' && !inPath.includes(key))
        query[key === '_continue' ? 'continue' : key] = value as Query[string];
    const request: RestRequest = {
      method: endpoint.method,
      path,
      query,
      ...(endpoint.body === 'none' || values.body === undefined ? {} : { body: values.body }),
      ...(endpoint.method === 'PATCH' ? { contentType: JSON_PATCH_TYPES[0] } : {}),
      options,
    };
    if (endpoint.answer === 'text') return await rest.text(request);
    const json = await rest.json<Record<string, unknown>>(request);
    if (endpoint.answer === 'object') return decode(json);
    const items = Array.isArray(json.items) ? (json.items as unknown[]) : [];
    for (let i = 0; i < items.length; i++) items[i] = decode(items[i]);
    return { ...json, items, metadata: decodeListMeta(json.metadata ?? {}) };
  };
}

/**
 * The calls of `table` with client-node's signatures, each sent by `rest` (see {@link endpointCall}). The caller
 * names the API class's type `A` whose methods these are; the table's keys are checked against it.
 */
export function endpointCalls<A, K extends keyof A & string>(
  rest: RestClient,
  api: string,
  table: Readonly<Record<K, Endpoint>>,
): Pick<A, K> {
  const calls: Record<string, unknown> = {};
  for (const [name, endpoint] of Object.entries<Endpoint>(table)) calls[name] = endpointCall(rest, api, name, endpoint);
  return calls as Pick<A, K>;
}
