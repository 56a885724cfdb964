/**
 * Running `main()` in-process against the testkit: a kit with upstream's namespace, ConfigMap and StorageClass, a
 * kubeconfig file, and programs whose JSON log lines are captured. Every program gets `--kube-api-qps -1` (no
 * client-side rate limit), so that these tests do not depend on the binary's default limits.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { vi } from 'vitest';
import { main, type MainContext } from '../../src/main.js';
import { claim, configJson, getVolume, HELPER_POD_YAML, NAMESPACE, SETUP_SCRIPT, storageClass, TEARDOWN_SCRIPT, volumeTestPod, waitBound, waitSucceeded, WAIT } from '../provisioner/helpers.js';

/** Things to undo after each test, last first; the test file runs them in `afterEach`. */
export type Cleanups = (() => Promise<unknown>)[];

export interface Kit {
  kit: Testkit;
  core: CoreV1Api;
  kubeconfig: string;
  /** A temporary directory removed after the test. */
  dir: string;
}

/** A testkit with upstream's `local-path-config` ConfigMap and `local-path` StorageClass, and a kubeconfig file. */
export async function startKit(cleanups: Cleanups): Promise<Kit> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-main-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const kit = await startApiServer({ nodes: [{ name: 'node-1' }], storage: { namespaces: ['default', 'kube-system', NAMESPACE] } });
  cleanups.push(() => kit.stop());
  const core = kit.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedConfigMap({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'local-path-config', namespace: NAMESPACE },
      data: { 'config.json': configJson(), setup: SETUP_SCRIPT, teardown: TEARDOWN_SCRIPT, 'helperPod.yaml': HELPER_POD_YAML },
    },
  });
  await kit.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });
  return { kit, core, kubeconfig: await kit.writeKubeconfig(path.join(dir, 'kubeconfig')), dir };
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
  entries: () => LogEntry[];
  messages: () => string[];
  /** How many log lines have exactly this message. */
  count: (msg: string) => number;
}

/**
 * `main(['--debug', 'start', '--kubeconfig', ..., '--health-port', '0', '--logging-format', 'json', '--kube-api-qps',
 * '-1', ...extra], env, context)`; stopped and awaited after the test.
 */
export function runMain(cleanups: Cleanups, kubeconfig: string, extra: string[] = [], env: Record<string, string> = {}, context: MainContext = {}): Program {
  const abort = new AbortController();
  let output = '';
  let started: ReturnType<Program['started']>;
  const argv = ['--debug', 'start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json', '--kube-api-qps', '-1', ...extra];
  const exited = main(argv, env, {
    stdout: { write: (l: string) => (output += l) },
    stderr: { write: (l: string) => (output += l) },
    signal: abort.signal,
    handleSignals: false,
    onStarted: (s) => (started = s),
    ...context,
  });
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
    entries,
    messages: () => entries().map((e) => e.msg),
    count: (msg) => entries().filter((e) => e.msg === msg).length,
  };
}

/** Waits until the program's controller has started its workers. */
export async function waitStarted(program: Program): Promise<NonNullable<ReturnType<Program['started']>>> {
  return vi.waitFor(() => {
    const started = program.started();
    if (started === undefined) throw new Error('not started yet');
    return started;
  }, WAIT);
}

/** Creates claim `name` and a pod using it, waits for both, and returns the PV name and its path on the node. */
export async function provisionOne(k: Kit, name: string): Promise<{ pvName: string; nodePath: string }> {
  await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name) });
  await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
  const pvName = await waitBound(k.kit, name);
  await waitSucceeded(k.kit, `pod-${name}`);
  return { pvName, nodePath: getVolume(k.kit, pvName)!.spec!.hostPath!.path };
}
