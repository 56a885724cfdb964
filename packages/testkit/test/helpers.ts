import { ApiException, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Status } from '../src/api/status.js';
import type { Testkit } from '../src/testkit.js';

/** The Status body of a failed client-node call; fails the test when the call succeeds. */
export async function apiError(call: Promise<unknown>): Promise<Status> {
  try {
    await call;
  } catch (e) {
    if (e instanceof ApiException) {
      const body = typeof e.body === 'string' ? (JSON.parse(e.body) as Status) : (e.body as Status);
      if (body.code !== e.code)
        throw new Error(`Status code ${body.code} differs from HTTP code ${e.code}`, { cause: e });
      return body;
    }
    throw e;
  }
  throw new Error('expected the call to fail');
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: <T = Record<string, unknown>>() => T;
}

/** A plain HTTP request to the testkit, for what client-node does not expose (content types, raw bodies). */
export async function raw(
  kit: Testkit,
  method: string,
  path: string,
  init: { body?: string; contentType?: string; accept?: string } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (init.contentType !== undefined) headers['Content-Type'] = init.contentType;
  if (init.accept !== undefined) headers.Accept = init.accept;
  const res = await fetch(`${kit.url}${path}`, {
    method,
    headers,
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
}

export interface WatchEvent {
  type: string;
  object: {
    metadata?: { name?: string; resourceVersion?: string };
    code?: number;
    reason?: string;
    [k: string]: unknown;
  };
}

/** A running client-node watch that records its events. */
export interface RecordedWatch {
  events: WatchEvent[];
  /** Resolves with the done callback's error (or null) when the stream ends. */
  done: Promise<unknown>;
  abort(): void;
}

/** Starts a client-node `Watch` and records every event. */
export async function recordWatch(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean> = {},
): Promise<RecordedWatch> {
  const events: WatchEvent[] = [];
  let finish: (e: unknown) => void = () => undefined;
  const done = new Promise<unknown>((resolve) => {
    finish = resolve;
  });
  const controller = await new Watch(kc).watch(
    path,
    query,
    (type, object) => {
      events.push({ type, object: object as WatchEvent['object'] });
    },
    (err) => finish(err),
  );
  return { events, done, abort: () => controller.abort() };
}

/** Names of the objects in a list of events, in order, with their types: `ADDED a`. */
export function describeEvents(events: readonly WatchEvent[]): string[] {
  return events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`);
}
