/**
 * How the library's own JSON client (`RestClient`) sends its requests: a {@link Transport}, chosen once per client.
 * By default Node.js's own `http`/`https` keep-alive agent; an undici dispatcher when the caller gives one (or the
 * cluster is reached through a proxy, which undici's `ProxyAgent` handles).
 *
 * Why not undici for everything: loading undici (its HTTP parser compiled from WebAssembly, its fetch) took a bare
 * Node.js process from about 45 to 70 MiB of RSS before any request, more than the rest of a provisioner's memory at
 * rest. Node.js's own HTTP client is loaded already (the metrics endpoint is a `node:http` server) and keeps what
 * the controller relies on: keep-alive connections, TLS from the kubeconfig, streaming watches, abort signals.
 */
import type { IncomingHttpHeaders, IncomingMessage, Agent as HttpAgent } from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { connectionOptions, type KubeConfigView, type TlsOptions } from './connection.js';
import { PerContext } from './per-context.js';

/** One request of a {@link Transport}. */
export interface TransportRequest {
  /** `https://host:port` of the server. */
  origin: string;
  /** Path and query. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal | undefined;
  /**
   * How long the request may go without a byte from the server, waiting for the answer or between parts of its body,
   * before it fails with a `TimeoutError` (through an undici dispatcher, a body that stops fails with undici's
   * `BodyTimeoutError`), in ms. Default none (a watch).
   */
  inactivityMs?: number | undefined;
}

/** What a request that went {@link TransportRequest.inactivityMs} without a byte rejects with. */
export function inactivityError(ms: number): DOMException {
  return new DOMException(`The API server sent nothing for ${ms} ms`, 'TimeoutError');
}

/** The answer: status, headers and the body as a stream of bytes. */
export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  body: Readable;
}

/** Sends requests over a connection pool. */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
  /** The pool: an undici dispatcher, or Node.js's `http.Agent`. */
  readonly agent: Dispatcher | HttpAgent;
  /** Closes the pool's connections. */
  close(): Promise<void>;
}

/**
 * How long an idle keep-alive connection is kept, in ms: 30 s. kube-apiserver closes idle connections after 90 s,
 * so this stays well inside that; the server's own `Keep-Alive: timeout=` hint lowers it when shorter.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 30_000;

/** TCP keep-alive probe delay, in ms: 30 s, as client-node and client-go use (shorter than common LB idle timeouts). */
export const TCP_KEEP_ALIVE_INITIAL_DELAY_MS = 30_000;

// Loaded when first needed, with `require` (both are loaded synchronously that way, undici being CommonJS and
// node:http/https built-ins whose ES module import would read every export, the `WebSocket` getter included, which
// loads Node.js's own copy of undici).
const require = createRequire(import.meta.url);

/**
 * `node:http`, loaded with `require`: an ES module import of it reads every export, and its `WebSocket` getter loads
 * Node.js's own copy of undici (about 14 MiB of RSS).
 */
export function httpModule(): typeof import('node:http') {
  return require('node:http') as typeof import('node:http');
}

/**
 * undici, loaded on first use (a caller's dispatcher, a proxy, `sharedAgent`, client-node's generated clients).
 *
 * @throws Error when this Node.js has no WebAssembly (started with `--jitless`), which undici's HTTP parser is.
 */
export function undici(): typeof import('undici') {
  if (!('WebAssembly' in globalThis)) throw new Error(NO_WEBASSEMBLY);
  return require('undici') as typeof import('undici');
}

const NO_WEBASSEMBLY =
  'a proxy (kubeconfig proxy-url), an undici dispatcher or client-node API clients need undici, whose HTTP parser ' +
  "is WebAssembly, and this Node.js process has none: it runs with V8's --jitless (local-static's provisioner and " +
  'local-path in node mode restart themselves with it); start Node.js without --jitless, or set KPROV_V8_FLAGS ' +
  "(for example to '--optimize-for-size --no-turbofan', the runtime's defaults) so that the binary keeps V8's JIT";

/** A {@link Transport} over an undici dispatcher (`dispatcher.request`). */
export function undiciTransport(dispatcher: Dispatcher, owned = false): Transport {
  return {
    agent: dispatcher,
    request: async ({ origin, path, method, headers, body, signal, inactivityMs }) => {
      const response = await dispatcher
        .request({
          origin,
          path,
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          ...(signal === undefined ? {} : { signal }),
          // undici's own limits, in place of its 300 s defaults; 0 for none (a watch).
          headersTimeout: inactivityMs ?? 0,
          bodyTimeout: inactivityMs ?? 0,
        })
        .catch((err: unknown) => {
          // Its error for no answer in time is the TimeoutError of the Node.js transport (a body that stops is
          // undici's own BodyTimeoutError, raised by the body stream).
          const code = (err as { code?: unknown } | null)?.code;
          throw code === 'UND_ERR_HEADERS_TIMEOUT' && inactivityMs !== undefined ? inactivityError(inactivityMs) : err;
        });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body };
    },
    close: async () => {
      if (owned) await dispatcher.close();
    },
  };
}

/** What an aborted request rejects with: the signal's reason (an `AbortError` unless the abort gave another). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError');
}

/**
 * A Node.js keep-alive agent for a server over TLS (`secure`) or plain HTTP. Over TLS its connections share one
 * secure context made from the kubeconfig's CA, certificate and key: given those themselves, Node.js makes a context
 * for each connection, parsing them and building a certificate store again, and a burst opens dozens of connections.
 */
function nodeAgent(secure: boolean, tls: TlsOptions): HttpAgent {
  const http = require(secure ? 'node:https' : 'node:http') as typeof import('node:https');
  const { ca, cert, key, ...connect } = tls;
  const context = secure
    ? { secureContext: secureContextOf({ ...(ca && { ca }), ...(cert && { cert }), ...(key && { key }) }) }
    : {};
  return new http.Agent({
    keepAlive: true,
    // Also the TCP keep-alive delay of its connections: a server that went away under a quiet watch is found by
    // the probes that follow (Node.js's libuv sends them a second apart).
    keepAliveMsecs: TCP_KEEP_ALIVE_INITIAL_DELAY_MS,
    // Idle sockets in the pool are closed after this (a socket in use is left alone).
    timeout: KEEP_ALIVE_TIMEOUT_MS,
    scheduling: 'lifo',
    ...connect,
    ...context,
  });
}

/**
 * One TLS context of the kubeconfig's CA, client certificate and key.
 *
 * @throws Error naming the kubeconfig's fields to check, when OpenSSL cannot read them: such a kubeconfig can make
 *   no request at all (client-go's client fails to be made from it too).
 */
function secureContextOf(material: Pick<TlsOptions, 'ca' | 'cert' | 'key'>): import('node:tls').SecureContext {
  try {
    return (require('node:tls') as typeof import('node:tls')).createSecureContext(material);
  } catch (err) {
    throw new Error(
      `the kubeconfig's TLS material is not usable (${err instanceof Error ? err.message : String(err)}): check ` +
        "the cluster's certificate-authority(-data) and the user's client-certificate(-data) and client-key(-data)",
      { cause: err },
    );
  }
}

/** A {@link Transport} over a Node.js `http` or `https` agent (the agent's `protocol` says which). */
function nodeTransport(agent: HttpAgent): Transport {
  const http = require(
    (agent as HttpAgent & { protocol?: string }).protocol === 'https:' ? 'node:https' : 'node:http',
  ) as typeof import('node:https');
  return {
    agent,
    request: ({ origin, path, method, headers, body, signal, inactivityMs }) =>
      new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
          reject(abortReason(signal));
          return;
        }
        const url = new URL(origin);
        const req = http.request({
          agent,
          protocol: url.protocol,
          hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
          port: url.port,
          path,
          method,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        });
        // The socket's own idle timer while it serves this request (its agent's idle limit applies again after).
        if (inactivityMs !== undefined && inactivityMs > 0)
          req.setTimeout(inactivityMs, () => req.destroy(inactivityError(inactivityMs)));
        let response: IncomingMessage | undefined;
        const onAbort = (): void => {
          if (signal === undefined) return;
          // Once the whole answer has arrived its socket may be back in the agent's pool, where nothing listens for
          // its errors (a destroy with the abort's reason was an uncaught exception): then nothing is destroyed.
          // Before, the request is destroyed with its socket, as for an answer not yet there (a response's own
          // destroy left a watch's connection to close later, after the watch had reported its end).
          if (response === undefined || !response.complete) req.destroy(abortReason(signal));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        // A destroyed request can report more than one error (the abort, then its socket's): all are taken here,
        // the first settles the request (later ones reach the response's own listeners, if any).
        req.on('error', (err) => {
          signal?.removeEventListener('abort', onAbort);
          const error = signal?.aborted === true ? abortReason(signal) : err;
          // An aborted request settles once its connection is closed, as undici's does.
          const socket = req.socket;
          if (socket === null || socket.closed) reject(error);
          else socket.once('close', () => afterClose(() => reject(error)));
        });
        req.once('response', (res) => {
          response = res;
          // Once the answer is here, an abort ends its body (a watch), as undici's does.
          res.once('close', () => signal?.removeEventListener('abort', onAbort));
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
        });
        req.end(body);
      }),
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * A new {@link Transport} for the current context of `kc`, shared with nothing: Node.js's keep-alive agent with the
 * kubeconfig's TLS, or an undici `ProxyAgent` for a cluster with a `proxy-url`.
 *
 * @throws Error for a SOCKS proxy, and for plain HTTP without `skipTLSVerify` (as client-node).
 */
export function newTransport(kc: KubeConfigView): Transport {
  const options = connectionOptions(kc);
  switch (options.type) {
    case 'socks':
      throw new Error('SOCKS proxies are not supported by the library client; use client-node directly');
    case 'proxy': {
      const { ProxyAgent } = undici();
      const proxy = new ProxyAgent({
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        uri: options.uri,
        requestTls: options.tls,
        connect: { keepAlive: true, keepAliveInitialDelay: TCP_KEEP_ALIVE_INITIAL_DELAY_MS },
      });
      return undiciTransport(proxy, true);
    }
    case 'direct':
      return nodeTransport(nodeAgent(options.secure, options.tls));
  }
}

/** A {@link Transport} over a caller's pool: an undici dispatcher, or a Node.js `http`/`https` agent. */
export function transportOver(agent: Dispatcher | HttpAgent): Transport {
  return 'dispatch' in agent ? undiciTransport(agent) : nodeTransport(agent);
}

const shared = new PerContext<Transport>(newTransport);

/**
 * The keep-alive {@link Transport} shared by the library's clients made from `kc`, for its current context (one per
 * KubeConfig and context; see {@link newTransport}).
 */
export function sharedTransport(kc: KubeConfigView): Transport {
  return shared.get(kc);
}

/** Closes the connections of every {@link sharedTransport} of `kc`; the next request of its clients opens new ones. */
export async function closeSharedTransports(kc: KubeConfigView): Promise<void> {
  await Promise.all(shared.take(kc).map((transport) => transport.close()));
}

/**
 * Calls `fn` once the event loop has polled twice more after a connection closed: by then a server in the same
 * process (the testkit's) has read the close and dropped the connection, so that a stop that waits for its watches'
 * ends leaves none open on such a server either. Two `setImmediate` turns, no time.
 */
export function afterClose(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** Reads a whole body as text. */
export async function bodyText(body: Readable): Promise<string> {
  const withText = body as Readable & { text?: () => Promise<string> };
  if (typeof withText.text === 'function') return withText.text();
  // The bytes first, decoded once: a list of 10,000 objects is one answer of many megabytes, and a string built
  // chunk by chunk is a rope that JSON.parse flattens into a second copy.
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
