/** Plain HTTP(S) requests for readiness probes, before any client can be trusted to work. */
import http from 'node:http';
import https from 'node:https';

/** TLS material of a probe: the CA to trust (none: trust anything) and a client certificate. */
export interface ProbeTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** The status code and body of a request; rejects on a connection error or after `timeoutMs`. */
export function request(
  url: string,
  options: { method?: string; body?: string; tls?: ProbeTls; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(
      u,
      {
        method: options.method ?? 'GET',
        timeout: options.timeoutMs ?? 5000,
        agent: false,
        ...(u.protocol === 'https:' ? { ...options.tls, rejectUnauthorized: options.tls?.ca !== undefined } : {}),
        headers: options.body === undefined ? {} : { 'Content-Type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${options.timeoutMs ?? 5000} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Whether `url` answers 200. */
export async function answers200(url: string, tls?: ProbeTls): Promise<boolean> {
  return (await request(url, tls === undefined ? {} : { tls })).status === 200;
}
