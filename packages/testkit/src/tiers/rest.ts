/**
 * Plain REST requests with a client-node `KubeConfig`'s credentials, for paths the generated clients make awkward
 * (any resource by path, merge patches, deletions with a grace period of 0).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

/** The answer to a {@link rest} request. */
export interface RestResponse {
  status: number;
  body: string;
}

/** Body and media types of a {@link rest} request. */
export interface RestOptions {
  /** Sent as is when a string, else as JSON. Default none. */
  body?: unknown;
  /** Default `application/json`. */
  contentType?: string;
  /** Default `application/json`. */
  accept?: string;
}

/** Sends one request to the current cluster of `kc`. */
export async function rest(kc: KubeConfig, method: string, path: string, request: RestOptions = {}): Promise<RestResponse> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(path, server);
  const options: RequestOptions = { method, headers: { Accept: request.accept ?? 'application/json' }, agent: false };
  await kc.applyToHTTPSOptions(options);
  const { body } = request;
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  if (text !== undefined) options.headers = { ...options.headers, 'Content-Type': request.contentType ?? 'application/json' };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, options, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** Like {@link rest}, and throws unless the status is 2xx (or one of `ok`); returns the parsed body. */
export async function restJson<T>(kc: KubeConfig, method: string, path: string, body?: unknown, ok: readonly number[] = []): Promise<T | undefined> {
  const res = await rest(kc, method, path, { body, contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' });
  if ((res.status < 200 || res.status > 299) && !ok.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 500)}`);
  return res.body === '' ? undefined : (JSON.parse(res.body) as T);
}
