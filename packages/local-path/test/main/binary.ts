/**
 * The built `local-path-provisioner` binary as a child process that a test can `kill -9`, and a gate between it and
 * the API server that holds a chosen request, so that the kill lands at a known step of an operation.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { cleanups, type Kit, type LogEntry } from './harness.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(pkg, 'dist/cli.js');

/** The newest modification time of the files below `dir` whose names end with `suffix` (0 when there are none). */
function newestBelow(dir: string, suffix: string): number {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith(suffix));
  return Math.max(0, ...files.map((f) => statSync(path.join(dir, f)).mtimeMs));
}

/**
 * Builds the package when dist/cli.js is missing or older than a source file, or than the built workspace libraries
 * the binary bundles (binaryBundle, @kprov/provisioner-lib/bundle).
 */
export async function ensureBuilt(): Promise<void> {
  const built = statSync(bin, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = Math.max(
    newestBelow(path.join(pkg, 'src'), '.ts'),
    newestBelow(path.join(pkg, '../provisioner-lib/dist'), '.js'),
    newestBelow(path.join(pkg, '../quantity/dist'), '.js'),
  );
  if (newest > built) await promisify(execFile)('pnpm', ['--filter', '@kprov/local-path', 'build'], { cwd: pkg });
}

/** A plain-HTTP front of the cluster's API server that forwards every request, except those it is told to hold. */
export interface Gate {
  /** A kubeconfig file that reaches the API server through the gate. */
  kubeconfig: string;
  /** Holds (never answers nor forwards) the first request for which `match` is true; resolves when it arrives. */
  hold(match: (method: string, url: string) => boolean): Promise<string>;
}

/** Starts a {@link Gate} in front of the kit's cluster, closed after the test. */
export async function startGate(k: Kit): Promise<Gate> {
  const admin = k.cluster.kubeConfig;
  const target = new URL(admin.getCurrentCluster()!.server);
  const tls: https.RequestOptions = {};
  await admin.applyToHTTPSOptions(tls);
  const holds: { match: (method: string, url: string) => boolean; resolve: (what: string) => void }[] = [];
  const held: ServerResponse[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const hold = holds.findIndex((h) => h.match(method, url));
    if (hold >= 0) {
      const [h] = holds.splice(hold, 1);
      held.push(res);
      h!.resolve(`${method} ${url}`);
      return;
    }
    const headers = { ...req.headers, ...(tls.headers as Record<string, string> | undefined), host: target.host };
    const options: https.RequestOptions = {
      ...tls,
      method,
      path: url,
      headers,
      hostname: target.hostname,
      port: target.port,
    };
    const upstream = (target.protocol === 'https:' ? https : http).request(options, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  const server = http.createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'gate', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'gate' }],
    contexts: [{ name: 'gate', cluster: 'gate', user: 'gate' }],
    currentContext: 'gate',
  });
  const file = path.join(k.dir, `gate-${(server.address() as AddressInfo).port}.kubeconfig`);
  await writeFile(file, kc.exportConfig(), { mode: 0o600 });
  return {
    kubeconfig: file,
    hold: (match) => new Promise((resolve) => holds.push({ match, resolve })),
  };
}

/** A running binary. */
export interface Child {
  process: ChildProcess;
  exited: Promise<number | null>;
  /** Its JSON log lines so far. */
  entries: () => LogEntry[];
  /** Everything it wrote so far, stdout and stderr. */
  output: () => string;
  messages: () => string[];
}

/**
 * `node ...nodeFlags dist/cli.js --debug start --kubeconfig <kubeconfig> --health-port 0 --logging-format json
 * --leader-election=false --kube-api-qps -1 ...extra` with `PATH` and `env`; killed (SIGKILL) after the test if still
 * running.
 */
export function spawnProvisioner(
  kubeconfig: string,
  extra: string[] = [],
  nodeFlags: string[] = [],
  env: Record<string, string> = {},
): Child {
  const argv = [
    '--debug',
    'start',
    '--kubeconfig',
    kubeconfig,
    '--health-port',
    '0',
    '--logging-format',
    'json',
    '--leader-election=false',
    '--kube-api-qps',
    '-1',
    ...extra,
  ];
  const child = spawn(process.execPath, [...nodeFlags, bin, ...argv], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const entries = (): LogEntry[] =>
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogEntry);
  return { process: child, exited, entries, output: () => output, messages: () => entries().map((e) => e.msg) };
}
