import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as it went over the wire to the proxy. */
export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  /** Query parameters, sorted by name (the order clients write them in does not matter to the server). */
  query: [string, string][];
  /** The Content-Type header, when the request had a body. */
  contentType: string | undefined;
  /** The body text, `''` when there was none. */
  body: string;
}

/** An HTTP proxy in front of a plain-HTTP API server that records every request it passes on. */
export interface RecordingProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /** The requests so far, oldest first. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Starts a recording proxy to `target` (`http://host:port`). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', target);
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: [...url.searchParams].sort(([a], [b]) => a.localeCompare(b)),
        contentType: body.length === 0 ? undefined : req.headers['content-type'],
        body: body.toString('utf8'),
      });
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A recorded request with its body parsed, for comparing what two clients sent. */
export function sent(r: RecordedRequest): Omit<RecordedRequest, 'body'> & { body: unknown } {
  return { ...r, body: r.body === '' ? undefined : (JSON.parse(r.body) as unknown) };
}

/** What `call` rejected with, for comparing how two clients fail; rejects when the call succeeded. */
export async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err,
  );
}
