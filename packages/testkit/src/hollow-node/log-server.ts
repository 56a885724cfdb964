/**
 * The kubelet's log endpoint, which kube-apiserver calls for `pods/log` (`kubectl logs`): `GET
 * /containerLogs/{namespace}/{pod}/{container}` over HTTPS on the address and port the Node reports
 * (`status.addresses`, `status.daemonEndpoints.kubeletEndpoint.Port`). It serves a self-signed certificate:
 * kube-apiserver does not check the kubelet's certificate unless given `--kubelet-certificate-authority`, and sends
 * no credentials unless given `--kubelet-client-certificate`, so none are asked for.
 *
 * Query parameters as the kubelet reads them: `tailLines`, `previous`, `follow` (the output so far, then what the
 * container writes until it ends or the client goes), `limitBytes`. `timestamps`, `sinceSeconds` and `sinceTime`
 * are accepted and ignored (the output is kept without times). Errors are the kubelet's: 404 `pod "p" does not
 * exist`, 404 `container "c" not found in pod "p"`, 400 for a container without output yet or without a previous
 * instance; kube-apiserver passes a 400's text on and turns a 404 into its own NotFound.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CertificateAuthority } from '../control-plane/pki.js';
import { tail, type LogLookup } from '../sim/kubelet/logs.js';

/** Finds the output a request means; see `KubeletLoop.findLog`. */
export type LogFinder = (namespace: string, pod: string, container: string, previous: boolean) => LogLookup;

/** A running log endpoint. */
export interface LogServer {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** Stops listening and ends open (following) responses. */
  close(): Promise<void>;
}

const PATH = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/;

function fail(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(message);
}

/** A non-negative whole number query parameter; `undefined` when absent, `null` when malformed. */
function count(q: URLSearchParams, name: string): number | undefined | null {
  const v = q.get(name);
  if (v === null) return undefined;
  return /^\d+$/.test(v) ? Number(v) : null;
}

function handle(find: LogFinder, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET') return fail(res, 405, 'Method Not Allowed');
  const url = new URL(req.url ?? '/', 'https://kubelet');
  const m = PATH.exec(url.pathname);
  if (m === null) return fail(res, 404, '404 page not found');
  const [namespace, pod, container] = [m[1], m[2], m[3]].map((s) => decodeURIComponent(s ?? '')) as [
    string,
    string,
    string,
  ];
  const q = url.searchParams;
  const tailLines = count(q, 'tailLines');
  const limitBytes = count(q, 'limitBytes');
  if (tailLines === null || limitBytes === null || limitBytes === 0)
    return fail(res, 422, '{"message": "Invalid request."}');
  const found = find(namespace, pod, container, q.get('previous') === 'true');
  if ('code' in found) return fail(res, found.code, found.message);
  const { buffer } = found;
  let left = limitBytes ?? Infinity;
  /** Writes up to the byte limit; false once it is reached. */
  const write = (chunk: Buffer): boolean => {
    const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
    left -= part.length;
    if (part.length > 0) res.write(part);
    return left > 0;
  };
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
  const more = write(Buffer.from(tail(buffer.text(), tailLines), 'utf8'));
  if (!more || q.get('follow') !== 'true' || buffer.ended) {
    res.end();
    return;
  }
  const stop = buffer.follow((chunk) => {
    if (chunk === null || !write(chunk)) {
      stop();
      res.end();
    }
  });
  res.on('close', stop);
}

/** Starts the log endpoint on 127.0.0.1 (a free port unless `port` is given), with a fresh self-signed certificate for `names`. */
export async function startLogServer(find: LogFinder, names: readonly string[], port = 0): Promise<LogServer> {
  const ca = await CertificateAuthority.create('kprov-kubelet-ca');
  const serving = await ca.serving('kprov-kubelet', ['localhost', ...names], ['127.0.0.1']);
  const server: Server = createServer(
    { cert: `${serving.cert.trimEnd()}\n${ca.cert.trimEnd()}\n`, key: serving.key },
    (req, res) => handle(find, req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
