/**
 * Running `main()` in-process against a cluster of the running test's tier: upstream's namespace, ConfigMap and
 * StorageClass, a kubeconfig file, and programs whose JSON log lines are captured. Every program gets
 * `--kube-api-qps -1` (no client-side rate limit), so that these tests do not depend on the binary's default limits.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { currentTier } from '@kprov/testkit/vitest';
import {
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  StorageV1Api,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { vi } from 'vitest';
import { main, type MainContext } from '../../src/main.js';
import {
  claim,
  configJson,
  getVolume,
  HELPER_POD_YAML,
  NAMESPACE,
  SERVICE_ACCOUNT,
  SETUP_SCRIPT,
  storageClass,
  TEARDOWN_SCRIPT,
  volumeTestPod,
  waitBound,
  waitSucceeded,
  WAIT,
} from '../provisioner/helpers.js';

/** deploy/local-path-storage.yaml. */
const MANIFEST = fileURLToPath(new URL('../../deploy/local-path-storage.yaml', import.meta.url));

/** Things to undo after the running test, last first, before its cluster stops. */
export interface Cleanups {
  push(cleanup: () => Promise<unknown>): void;
}

/** {@link Cleanups} run after the running test of a `describeTiers` suite. */
export const cleanups: Cleanups = { push: (cleanup) => currentTier().defer(cleanup) };

export interface Kit {
  cluster: Cluster;
  read: ObjectReader;
  core: CoreV1Api;
  kubeconfig: string;
  /** A temporary directory removed after the test. */
  dir: string;
}

/**
 * A cluster of the running test's tier with upstream's namespace, `local-path-config` ConfigMap (unless
 * `withConfigMap` is false), helper pod ServiceAccount and `local-path` StorageClass (unless `withClass` is false),
 * and a kubeconfig file.
 */
export async function startKit(options: { withConfigMap?: boolean; withClass?: boolean } = {}): Promise<Kit> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-main-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const cluster = await currentTier().start({ nodes: [{ name: 'node-1' }], namespaces: [NAMESPACE] });
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: SERVICE_ACCOUNT } } });
  if (options.withConfigMap ?? true) {
    await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'local-path-config', namespace: NAMESPACE },
        data: {
          'config.json': configJson(),
          setup: SETUP_SCRIPT,
          teardown: TEARDOWN_SCRIPT,
          'helperPod.yaml': HELPER_POD_YAML,
        },
      },
    });
  }
  if (options.withClass ?? true)
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });
  return {
    cluster,
    read: new ObjectReader(cluster.kubeConfig),
    core,
    kubeconfig: await cluster.writeKubeconfig(path.join(dir, 'kubeconfig')),
    dir,
  };
}

/** One JSON log line. */
export interface LogEntry {
  msg: string;
  err?: string;
  [key: string]: unknown;
}

export interface Program {
  exited: Promise<number>;
  /** Aborts the program's signal, as SIGTERM would. */
  stop: () => void;
  /** What `onStarted` got, once the controller runs. */
  started: () => Parameters<NonNullable<MainContext['onStarted']>>[0] | undefined;
  /** `main`'s exit code once it returned. */
  exitCode: () => number | undefined;
  entries: () => LogEntry[];
  messages: () => string[];
  /** How many log lines have exactly this message. */
  count: (msg: string) => number;
}

/**
 * `main(['--debug', 'start', '--kubeconfig', ..., '--health-port', '0', '--logging-format', 'json', '--kube-api-qps',
 * '-1', ...extra], env, context)`; stopped and awaited after the test.
 */
export function runMain(
  kubeconfig: string,
  extra: string[] = [],
  env: Record<string, string> = {},
  context: MainContext = {},
): Program {
  const abort = new AbortController();
  let output = '';
  let started: ReturnType<Program['started']>;
  const argv = [
    '--debug',
    'start',
    '--kubeconfig',
    kubeconfig,
    '--health-port',
    '0',
    '--logging-format',
    'json',
    '--kube-api-qps',
    '-1',
    ...extra,
  ];
  let exitCode: number | undefined;
  const exited = main(argv, env, {
    stdout: { write: (l: string) => (output += l) },
    stderr: { write: (l: string) => (output += l) },
    signal: abort.signal,
    handleSignals: false,
    onStarted: (s) => (started = s),
    ...context,
  }).then((code) => (exitCode = code));
  cleanups.push(async () => {
    abort.abort();
    await exited;
  });
  const entries = (): LogEntry[] =>
    output
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogEntry);
  return {
    exited,
    stop: () => abort.abort(),
    started: () => started,
    exitCode: () => exitCode,
    entries,
    messages: () => entries().map((e) => e.msg),
    count: (msg) => entries().filter((e) => e.msg === msg).length,
  };
}

/** Waits until the program's controller has started its workers; fails at once if the program exits first. */
export async function waitStarted(program: Program): Promise<NonNullable<ReturnType<Program['started']>>> {
  let ended: Error | undefined;
  const started = await vi.waitFor(() => {
    const started = program.started();
    if (started !== undefined) return started;
    const code = program.exitCode();
    if (code === undefined) throw new Error('not started yet');
    ended = new Error(`main() exited with ${code} before it started: ${program.messages().slice(-5).join(' | ')}`);
    return undefined;
  }, WAIT);
  if (started === undefined) throw ended ?? new Error('main() ended before it started');
  return started;
}

/** Creates claim `name` and a pod using it, waits for both, and returns the PV name and its path on the node. */
export async function provisionOne(k: Kit, name: string): Promise<{ pvName: string; nodePath: string }> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name) });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
  const pvName = await waitBound(k, name);
  await waitSucceeded(k, `pod-${name}`);
  return { pvName, nodePath: (await getVolume(k, pvName))!.spec!.hostPath!.path };
}

/** Replaces `config.json` of the ConfigMap `local-path-config` with `config`, as `kubectl edit` would. */
export async function setConfigJson(k: Kit, config: unknown): Promise<void> {
  await k.core.patchNamespacedConfigMap(
    { name: 'local-path-config', namespace: NAMESPACE, body: { data: { 'config.json': JSON.stringify(config) } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/**
 * The RBAC objects of deploy/local-path-storage.yaml (ServiceAccount, Roles, bindings), created on the cluster;
 * `withoutLeases` drops the Lease rule, as upstream's manifest has none; `rules` rewrites each role's rules. Returns a kubeconfig file that
 * authenticates as that ServiceAccount (real tier only: the testkit has no authorization).
 */
export async function serviceAccountKubeconfig(
  k: Kit,
  options: {
    withoutLeases?: boolean;
    rules?: (rules: { resources?: string[]; verbs?: string[] }[]) => { resources?: string[]; verbs?: string[] }[];
  } = {},
): Promise<string> {
  const cp = k.cluster.controlPlane;
  if (cp === undefined) throw new Error('serviceAccountKubeconfig: only the real tier authorizes requests');
  const docs = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map(
    (d) => d.toJS() as KubernetesObject & { rules?: { resources?: string[]; verbs?: string[] }[] },
  );
  const api = KubernetesObjectApi.makeApiClient(k.cluster.kubeConfig);
  for (const doc of docs) {
    if (!['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].includes(doc.kind ?? '')) continue;
    if (options.withoutLeases === true && doc.rules !== undefined)
      doc.rules = doc.rules.filter((r) => !(r.resources ?? []).includes('leases'));
    if (options.rules !== undefined && doc.rules !== undefined) doc.rules = options.rules(doc.rules);
    await api.create(doc);
  }
  const kc = await cp.serviceAccountKubeConfig(NAMESPACE, SERVICE_ACCOUNT);
  const file = path.join(k.dir, 'service-account.kubeconfig');
  await writeFile(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}
