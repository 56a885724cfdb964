/**
 * The two servers the fidelity table is replayed against, behind one interface: the testkit, and a real control plane
 * (etcd, kube-apiserver, kube-controller-manager, kube-scheduler from KUBEBUILDER_ASSETS). Requests are plain HTTP(S)
 * with exactly the method, path, headers and body a case gives, so that what is compared is what the server answers,
 * not what a client library makes of it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';
import { startApiServer, type Testkit, type TestkitOptions } from '../../src/testkit.js';
import { WAIT } from '../../src/vitest.js';

export type TargetName = 'testkit' | 'real';

/** An HTTP answer: status, content type and the body as text. */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
  /** The `Warning` headers' texts, in order. */
  warnings: string[];
}

/** What a request may carry besides method and path. */
export interface RequestInit {
  contentType?: string;
  accept?: string;
  body?: string | Buffer;
}

/** A watch in progress: the events so far (parsed lines) and how to end it. */
export interface OpenWatch {
  readonly events: { type: string; object: Record<string, unknown> }[];
  /** For each event, when it arrived (`performance.now()`, ms). */
  readonly times: number[];
  /**
   * Resolves when the response's headers arrived: both servers send them once the watch is registered, so what
   * changes after is in its events. (Also resolves if the request fails or is stopped first.)
   */
  readonly opened: Promise<void>;
  /** Resolves when the server ends the stream (or it is stopped). */
  readonly ended: Promise<void>;
  stop(): void;
}

/** The output of a kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One server under test. */
export interface Target {
  readonly name: TargetName;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  request(method: string, path: string, init?: RequestInit): Promise<Answer>;
  watch(path: string): OpenWatch;
  /** Makes every resourceVersion before now too old for a list with `resourceVersionMatch=Exact` (etcd compaction). */
  compact(): Promise<void>;
  /** Makes every resourceVersion before now too old to watch from (the watch cache starts over). */
  forgetWatchHistory(): Promise<void>;
  kubectl(args: readonly string[], stdin?: string): Promise<KubectlResult>;
  stop(): Promise<void>;
}

interface Tls {
  ca?: string;
  cert?: string;
  key?: string;
}

function send(base: string, tls: Tls, method: string, path: string, init: RequestInit = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const headers: Record<string, string> = {};
    if (init.contentType !== undefined) headers['Content-Type'] = init.contentType;
    if (init.accept !== undefined) headers.Accept = init.accept;
    // Node sends a DELETE body without framing unless told its length.
    if (init.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(init.body));
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(
      url,
      { method, headers, agent: false, ...(url.protocol === 'https:' ? tls : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
            warnings: res.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1]?.toLowerCase() === 'warning'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

function openWatch(base: string, tls: Tls, path: string): OpenWatch {
  const events: OpenWatch['events'] = [];
  const times: number[] = [];
  let stopped = false;
  let request: http.ClientRequest | undefined;
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const ended = new Promise<void>((resolve) => {
    const url = new URL(path, base);
    const lib = url.protocol === 'https:' ? https : http;
    request = lib.request(url, { agent: false, ...(url.protocol === 'https:' ? tls : {}) }, (res) => {
      open();
      let partial = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        const now = performance.now();
        partial += d;
        for (let i = partial.indexOf('\n'); i >= 0; i = partial.indexOf('\n')) {
          const line = partial.slice(0, i);
          partial = partial.slice(i + 1);
          if (line.trim() === '') continue;
          events.push(JSON.parse(line) as OpenWatch['events'][number]);
          times.push(now);
        }
      });
      res.on('end', () => resolve());
      res.on('close', () => resolve());
    });
    request.on('error', () => resolve());
    request.end();
  });
  void ended.then(open);
  return {
    events,
    times,
    opened,
    ended,
    stop() {
      if (stopped) return;
      stopped = true;
      request?.destroy();
    },
  };
}

function kubectl(kubeconfig: string, args: readonly string[], stdin?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      { timeout: WAIT.timeout },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin);
  });
}

/** Whether kubectl can be run. */
export async function hasKubectl(): Promise<boolean> {
  return new Promise((resolve) => execFile('kubectl', ['version', '--client'], (err) => resolve(err === null)));
}

/**
 * The testkit with what the real tier runs: the PV binder (kube-controller-manager), the scheduler (kube-scheduler)
 * and a kubelet, but no nodes, since the real tier has none either.
 */
export async function testkitTarget(options: TestkitOptions = {}): Promise<Target> {
  const kit: Testkit = await startApiServer({ nodes: [], ...options });
  const dir = await mkdtemp(join(tmpdir(), 'kprov-fidelity-'));
  const kubeconfigPath = await kit.writeKubeconfig(join(dir, 'kubeconfig'));
  return {
    name: 'testkit',
    kubeconfigPath,
    kubeConfig: kit.kubeConfig,
    request: (method, path, init) => send(kit.url, {}, method, path, init),
    watch: (path) => openWatch(kit.url, {}, path),
    async compact() {
      kit.store.compact();
    },
    async forgetWatchHistory() {
      kit.store.compact();
    },
    kubectl: (args, stdin) => kubectl(kubeconfigPath, args, stdin),
    async stop() {
      await kit.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A real control plane as a cluster runs it: watch cache on, the default sync periods. */
export async function realTarget(): Promise<Target> {
  const cp: ControlPlane = await startControlPlane();
  const user = cp.kubeConfig.getCurrentUser();
  const b64 = (s: string | undefined): string | undefined =>
    s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');
  const tls: Tls = { ca: cp.caCert };
  const cert = b64(user?.certData);
  const key = b64(user?.keyData);
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = key;
  return {
    name: 'real',
    kubeconfigPath: cp.kubeconfigPath,
    kubeConfig: cp.kubeConfig,
    request: (method, path, init) => send(cp.url, tls, method, path, init),
    watch: (path) => openWatch(cp.url, tls, path),
    async compact() {
      await cp.compact();
    },
    async forgetWatchHistory() {
      // The watch cache of a fresh kube-apiserver begins at the revision it listed at start.
      await cp.stopApiServer();
      await cp.startApiServer();
    },
    kubectl: (args, stdin) => kubectl(cp.kubeconfigPath, args, stdin),
    stop: () => cp.stop(),
  };
}
