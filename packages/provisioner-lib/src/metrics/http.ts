import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpModule } from '../client/transport.js';
import type { AddressInfo } from 'node:net';
import { describeError } from '../client/api-errors.js';

/** A health or readiness check: resolves (or returns) when healthy, throws or rejects with the reason otherwise. */
export type HealthCheck = () => Promise<void> | void;

/** The rendered metrics of a registry, for example from `renderRegistry` in `@kprov/provisioner-lib/prometheus`. */
export interface RenderedMetrics {
  contentType: string;
  body: string;
}

/** Options of {@link startHttpEndpoint}. */
export interface HttpEndpointOptions {
  /** Port to listen on; 0 picks a free one (see the returned `url`). */
  port: number;
  /** Address to listen on. Default `0.0.0.0`. */
  host?: string;
  /** Path of the metrics. Default `/metrics`. */
  metricsPath?: string;
  /** Renders the metrics; without it the metrics path answers 404. */
  renderMetrics?: () => Promise<RenderedMetrics>;
  /** Liveness checks by name, served at `/healthz` and `/healthz/<name>`. None: `/healthz` reports `ping` ok. */
  healthChecks?: Record<string, HealthCheck>;
  /** Readiness checks by name, served at `/readyz` and `/readyz/<name>`. None: `/readyz` reports `ping` ok. */
  readyChecks?: Record<string, HealthCheck>;
  /**
   * Path of the readiness checks instead of `/readyz` (e.g. `/ready`, where a binary's upstream served them); the
   * answers are the same. Default `/readyz`.
   */
  readyPath?: string;
  /**
   * Leader-election health, as the CSI sidecars serve it at `/healthz/leader-election`: an Error when this
   * process's lease renewal is overdue, else `undefined`. Also part of `/healthz` under the name `leader-election`.
   */
  leaderCheck?: () => Error | undefined;
}

/** A running endpoint. */
export interface HttpEndpoint {
  /** `http://<host>:<port>`, with `127.0.0.1` (or `[::1]`) when listening on every address. */
  url: string;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

interface CheckResult {
  name: string;
  excluded: boolean;
  error?: string;
}

const TEXT = 'text/plain; charset=utf-8';

async function runCheck(check: HealthCheck): Promise<string | undefined> {
  try {
    await check();
    return undefined;
  } catch (err) {
    return describeError(err);
  }
}

function send(res: ServerResponse, status: number, body: string, contentType = TEXT): void {
  res.writeHead(status, { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

/**
 * controller-runtime's healthz handler: all checks at `base`, one check at `base/<name>`. The aggregate answers
 * `ok`, or with `?verbose` one line per check (`[+]name ok`, `[+]name excluded: ok`) and `<kind> check passed`; on
 * any failure it answers 500, always verbosely, with `[-]name failed: <reason>` and `<kind> check failed`.
 * `?exclude=name` (repeatable) skips a check.
 */
async function serveChecks(
  kind: string,
  checks: ReadonlyMap<string, HealthCheck>,
  sub: string,
  url: URL,
  res: ServerResponse,
): Promise<void> {
  if (sub !== '') {
    const check = checks.get(sub);
    if (check === undefined) {
      send(res, 404, '404 page not found\n');
      return;
    }
    const error = await runCheck(check);
    if (error === undefined) send(res, 200, 'ok');
    else send(res, 500, `internal server error: ${error}\n`);
    return;
  }
  const excluded = new Set(url.searchParams.getAll('exclude'));
  const names = checks.size === 0 ? ['ping'] : [...checks.keys()].sort();
  const results = await Promise.all(
    names.map(async (name): Promise<CheckResult> => {
      const check = checks.get(name);
      if (excluded.has(name)) return { name, excluded: true };
      const error = check === undefined ? undefined : await runCheck(check);
      return error === undefined ? { name, excluded: false } : { name, excluded: false, error };
    }),
  );
  const lines = results
    .map((r) => {
      if (r.excluded) return `[+]${r.name} excluded: ok\n`;
      return r.error === undefined ? `[+]${r.name} ok\n` : `[-]${r.name} failed: ${r.error}\n`;
    })
    .join('');
  if (results.some((r) => r.error !== undefined)) {
    send(res, 500, `${lines}${kind} check failed\n`);
    return;
  }
  if (!url.searchParams.has('verbose')) send(res, 200, 'ok');
  else send(res, 200, `${lines}${kind} check passed\n`);
}

/**
 * Starts one HTTP listener with the metrics (default `/metrics`), `/healthz`, `/readyz` and
 * `/healthz/leader-election`, the layout the CSI sidecars and controller-runtime use. Only GET and HEAD are
 * served (405 otherwise); unknown paths answer 404.
 */
export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
  const host = options.host ?? '0.0.0.0';
  const metricsPath = options.metricsPath ?? '/metrics';
  const readyPath = options.readyPath ?? '/readyz';
  const health = new Map(Object.entries(options.healthChecks ?? {}));
  const ready = new Map(Object.entries(options.readyChecks ?? {}));
  const leaderCheck = options.leaderCheck;
  if (leaderCheck !== undefined) {
    health.set('leader-election', () => {
      const err = leaderCheck();
      if (err !== undefined) throw err;
    });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, 'method not allowed\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === metricsPath && options.renderMetrics !== undefined) {
      const { contentType, body } = await options.renderMetrics();
      send(res, 200, body, contentType);
      return;
    }
    for (const [base, checks] of [
      ['/healthz', health],
      [readyPath, ready],
    ] as const) {
      if (path === base || path.startsWith(`${base}/`)) {
        await serveChecks(base.slice(base.lastIndexOf('/') + 1), checks, path.slice(base.length + 1), url, res);
        return;
      }
    }
    send(res, 404, '404 page not found\n');
  };

  const server = httpModule().createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, `internal server error: ${describeError(err)}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let urlHost = host;
  if (host === '0.0.0.0') urlHost = '127.0.0.1';
  else if (host === '::') urlHost = '[::1]';
  else if (host.includes(':')) urlHost = `[${host}]`;
  return {
    url: `http://${urlHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}
