/** Shared test helpers: a testkit with one node, `main()` run in-process, Events of an object. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApiServer, type Testkit } from '@kprov/testkit';
import type { CoreV1Event, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { HttpEndpoint, ProvisionController } from '@kprov/provisioner-lib';
import { settle as settleController } from '@kprov/provisioner-lib/testing';
import { WAIT } from '@kprov/testkit/vitest';
import { main } from '../src/main.js';

/** A temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A testkit with node `node-1` (temporary root) and binder, scheduler and kubelet on, plus a kubeconfig file. */
export async function startKit(): Promise<{
  kit: Testkit;
  root: string;
  kubeconfig: string;
  stop: () => Promise<void>;
}> {
  const files = await tempDir('kprov-hostpath-kubeconfig-');
  const kit = await startApiServer({ nodes: [{ name: 'node-1' }] });
  const kubeconfig = await kit.writeKubeconfig(path.join(files.dir, 'kubeconfig'));
  const root = kit.nodes[0]!.root;
  return {
    kit,
    root,
    kubeconfig,
    stop: async () => {
      await kit.stop();
      await files.cleanup();
    },
  };
}

/** `main()` running in-process; `stop()` aborts it as SIGTERM would and resolves with its exit code. */
export interface RunningMain {
  /** Resolves once the controller's workers have started; rejects if main() returns first. */
  started: Promise<{ controller: ProvisionController; endpoint: HttpEndpoint | undefined }>;
  /** Resolves with the exit code whenever main returns. */
  exited: Promise<number>;
  /** Log and error output so far. */
  output(): string;
  stop(): Promise<number>;
}

export function runMain(argv: string[], env: Record<string, string | undefined>): RunningMain {
  const abort = new AbortController();
  const lines: string[] = [];
  type Started = { controller: ProvisionController; endpoint: HttpEndpoint | undefined };
  let resolveStarted: (s: Started) => void = () => undefined;
  let rejectStarted: (err: Error) => void = () => undefined;
  const started = new Promise<Started>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });
  // A test that expects main() to fail never awaits the start.
  started.catch(() => undefined);
  const exited = main(argv, env, {
    signal: abort.signal,
    handleSignals: false,
    stdout: { write: (s: string) => lines.push(s) },
    stderr: { write: (s: string) => lines.push(s) },
    onStarted: resolveStarted,
  });
  // A main() that returns first fails the wait for its start at once, with what it said.
  void exited.then((code) =>
    rejectStarted(new Error(`main() exited with ${code} before it started: ${lines.join('').slice(-500)}`)),
  );
  return {
    started,
    exited,
    output: () => lines.join(''),
    stop: async () => {
      abort.abort();
      return exited;
    },
  };
}

/** core/v1 Events about an object, from the store. */
export function eventsFor(kit: Testkit, kind: string, name: string, reason?: string): CoreV1Event[] {
  return (kit.store.list('events') as unknown as CoreV1Event[]).filter(
    (e) =>
      e.involvedObject.kind === kind && e.involvedObject.name === name && (reason === undefined || e.reason === reason),
  );
}

export function volumes(kit: Testkit): V1PersistentVolume[] {
  return kit.store.list('persistentvolumes') as unknown as V1PersistentVolume[];
}

export function claim(kit: Testkit, name: string): V1PersistentVolumeClaim | undefined {
  return kit.store.get('persistentvolumeclaims', 'default', name) as unknown as V1PersistentVolumeClaim | undefined;
}

/** The guide's StorageClass, optionally with parameters. */
export function storageClass(name = 'example-hostpath', parameters?: Record<string, string>): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'example.com/hostpath',
    ...(parameters === undefined ? {} : { parameters }),
  };
}

/** The guide's claim: ReadWriteMany, 1Mi. */
export function hostpathClaim(name = 'hostpath-claim', className = 'example-hostpath'): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { storageClassName: className, accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Mi' } } },
  };
}

/** The library's `settle`, for the tests' WAIT at most. */
export function settle(controller: ProvisionController): Promise<void> {
  return settleController(controller, { timeoutMs: WAIT.timeout });
}
