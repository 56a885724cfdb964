/**
 * The health server of rancher/local-path-provisioner (v0.0.37): `/health` for liveness, `/ready` for API
 * reachability, on `--health-port` (default 8080) on every address. Failing to listen is logged, not fatal, as
 * upstream.
 *
 * `startHttpEndpoint` of `@kprov/provisioner-lib` serves controller-runtime's `/healthz` and `/readyz` with their
 * own bodies, status codes and method rules, so it cannot answer as upstream does; this is a small `node:http`
 * server instead (the library endpoint remains the one behind `--http-endpoint`).
 *
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  describeError,
  makeCoreV1Calls,
  makeStorageV1Calls,
  silentLogger,
  withSignal,
  type Logger,
} from '@kprov/provisioner-lib';

/** One readiness check: a list call with `limit=1`; rejects when the API cannot serve it. */
export type ReadinessCheck = (signal: AbortSignal) => Promise<unknown>;

/** The checks `/ready` runs, in upstream's order, by the resource name its error message uses. */
export function readinessChecks(kubeConfig: KubeConfig, namespace: string): [name: string, check: ReadinessCheck][] {
  const core = makeCoreV1Calls(kubeConfig);
  const storage = makeStorageV1Calls(kubeConfig);
  return [
    ['configmaps', (signal) => core.listNamespacedConfigMap({ namespace, limit: 1 }, withSignal(signal))],
    ['pods', (signal) => core.listNamespacedPod({ namespace, limit: 1 }, withSignal(signal))],
    [
      'persistentvolumeclaims',
      (signal) => core.listNamespacedPersistentVolumeClaim({ namespace, limit: 1 }, withSignal(signal)),
    ],
    ['persistentvolumes', (signal) => core.listPersistentVolume({ limit: 1 }, withSignal(signal))],
    ['storageclasses', (signal) => storage.listStorageClass({ limit: 1 }, withSignal(signal))],
  ];
}

/** Options of {@link startHealthServer}. */
export interface HealthServerOptions {
  /** `--health-port`; 0 picks a free port (see {@link HealthServer.port}). */
  port: number;
  /** Address to listen on. Default: every address, as Go's `:<port>`. */
  host?: string;
  /** How `/ready` reaches the API server. */
  kubeConfig: KubeConfig;
  /** `--namespace`: the namespaced list calls look there. */
  namespace: string;
  /** Receives the start, listen failure and readiness failure messages. Default: discarded. */
  logger?: Logger;
  /** Replaces the checks of {@link readinessChecks} (tests, embedding). */
  checks?: readonly [name: string, check: ReadinessCheck][];
}

/** A listening health server. */
export interface HealthServer {
  /** `http://127.0.0.1:<port>` when listening on every address. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': TEXT });
  res.end(body);
}

async function ready(
  checks: readonly [string, ReadinessCheck][],
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
): Promise<void> {
  // The checks stop when the prober hangs up, as the Go handler's request context is cancelled then.
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  for (const [name, check] of checks) {
    try {
      await check(gone.signal);
    } catch (err) {
      const message = `readiness check ${name} failed: ${describeError(err, { cause: true })}`;
      logger.warn({}, message);
      send(res, 503, message);
      return;
    }
  }
  send(res, 200, 'Ready');
}

function health(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
    send(res, 200, 'OK');
    return;
  }
  send(res, 405, 'Method not allowed');
}

/**
 * Starts the health server: `GET|HEAD|OPTIONS /health` answers 200 `OK` (405 `Method not allowed` for other
 * methods); `/ready`, whatever the method, lists ConfigMaps, Pods and PVCs in the namespace, then PVs and
 * StorageClasses, one item each, and answers 200 `Ready`, or 503 `readiness check <resource> failed: <error>` at
 * the first failure. Other paths answer 404.
 *
 * Resolves with the server, or with `undefined` after logging `Failed to start health server: <err>` when it
 * cannot listen (the port is taken or invalid), since upstream carries on without it.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer | undefined> {
  const logger = options.logger ?? silentLogger;
  const checks = options.checks ?? readinessChecks(options.kubeConfig, options.namespace);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/health') health(req, res);
    else if (path === '/ready') {
      ready(checks, req, res, logger).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, describeError(err, { cause: true }));
        else res.destroy();
      });
    } else send(res, 404, '404 page not found\n');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      const listening = (): void => {
        server.off('error', reject);
        resolve();
      };
      // listen() throws at once for an invalid port; that is a failure to start too.
      if (options.host === undefined) server.listen(options.port, listening);
      else server.listen(options.port, options.host, listening);
    });
  } catch (err) {
    logger.error({}, `Failed to start health server: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
  const { port } = server.address() as AddressInfo;
  logger.info({}, `Health server started on ${options.host === undefined ? '' : options.host}:${port}`);
  const host = options.host;
  let urlHost = '127.0.0.1';
  if (host !== undefined && host !== '0.0.0.0' && host !== '::') urlHost = host.includes(':') ? `[${host}]` : host;
  else if (host === '::') urlHost = '[::1]';
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}
