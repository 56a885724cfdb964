/**
 * Upstream e2e scenarios that need the real program: `main()` in-process against the testkit, reloading the
 * ConfigMap's `config.json` while running, and two replicas with leader election.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { CoreV1Api, StorageV1Api, type V1Lease } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/main.js';
import {
  BASE_PATH,
  claim,
  configJson,
  eventsFor,
  getVolume,
  HELPER_POD_YAML,
  NAMESPACE,
  SETUP_SCRIPT,
  storageClass,
  TEARDOWN_SCRIPT,
  volumeTestPod,
  waitBound,
  waitSucceeded,
  WAIT,
} from '../provisioner/helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startKit(): Promise<{ kit: Testkit; core: CoreV1Api; kubeconfig: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-e2e-'));
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
  return { kit, core, kubeconfig: await kit.writeKubeconfig(path.join(dir, 'kubeconfig')) };
}

interface Program {
  exited: Promise<number>;
  stop: () => void;
  started: () => boolean;
  messages: () => string[];
}

/** `main()` in-process with JSON logs captured; `stop()` aborts it as SIGTERM would. */
function run(kubeconfig: string, extra: string[] = []): Program {
  const abort = new AbortController();
  let stdout = '';
  let started = false;
  const exited = main(['--debug', 'start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json', ...extra], {}, {
    stdout: { write: (l: string) => (stdout += l) },
    stderr: { write: (l: string) => (stdout += l) },
    signal: abort.signal,
    handleSignals: false,
    onStarted: () => (started = true),
  });
  cleanups.push(async () => {
    abort.abort();
    await exited;
  });
  return {
    exited,
    stop: () => abort.abort(),
    started: () => started,
    messages: () =>
      stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
  };
}

/** Creates claim `name` and a pod using it, waits for both, and returns the PV's path. */
async function provisionOne(kit: Testkit, core: CoreV1Api, name: string): Promise<{ pvName: string; nodePath: string }> {
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name) });
  await core.createNamespacedPod({ namespace: 'default', body: volumeTestPod(name, `pod-${name}`) });
  const pvName = await waitBound(kit, name);
  await waitSucceeded(kit, `pod-${name}`);
  return { pvName, nodePath: getVolume(kit, pvName)!.spec!.hostPath!.path };
}

async function setConfigJson(core: CoreV1Api, text: string): Promise<void> {
  const cm = await core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
  cm.data = { ...cm.data, 'config.json': text };
  await core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
}

describe('main() end to end', () => {
  it('reloads config.json while running, and keeps the last good config with an InvalidConfig Warning on a bad update', async () => {
    const { kit, core, kubeconfig } = await startKit();
    const program = run(kubeconfig, ['--leader-election=false']);
    const root = kit.nodes[0]!.root;

    const first = await provisionOne(kit, core, 'pvc-1');
    expect(first.nodePath).toBe(`${BASE_PATH}/${first.pvName}_default_pvc-1`);
    expect(readFileSync(path.join(root, first.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');

    // A new base path: the next claim lands there.
    const newBase = '/var/local-path-new';
    const applied = program.messages().filter((m) => m === 'Applied config').length;
    await setConfigJson(core, JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [newBase] }] }));
    await vi.waitFor(() => expect(program.messages().filter((m) => m === 'Applied config').length).toBe(applied + 1), WAIT);
    const second = await provisionOne(kit, core, 'pvc-2');
    expect(second.nodePath).toBe(`${newBase}/${second.pvName}_default_pvc-2`);
    expect(readFileSync(path.join(root, second.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');

    // A bad update: refused with a Warning Event on the ConfigMap; the config in force stays.
    await setConfigJson(core, '{"nodePathMap": [');
    await vi.waitFor(() => {
      const events = eventsFor(kit, 'ConfigMap', 'local-path-config', 'InvalidConfig');
      expect(events).toHaveLength(1);
      expect(events[0]!.type).toBe('Warning');
    }, WAIT);
    const third = await provisionOne(kit, core, 'pvc-3');
    expect(third.nodePath).toBe(`${newBase}/${third.pvName}_default_pvc-3`);
    expect(existsSync(path.join(root, third.nodePath, 'test'))).toBe(true);

    program.stop();
    expect(await program.exited).toBe(0);
  });

  it('with two replicas electing a leader, exactly one provisions', async () => {
    const { kit, core, kubeconfig } = await startKit();
    const a = run(kubeconfig);
    await vi.waitFor(() => expect(a.started()).toBe(true), WAIT);
    const b = run(kubeconfig);
    // b is running and sees a's Lease, but does not start its workers.
    await vi.waitFor(() => expect(b.messages()).toContain('Provisioner started'), WAIT);

    const { pvName, nodePath } = await provisionOne(kit, core, 'pvc-1');
    expect(readFileSync(path.join(kit.nodes[0]!.root, nodePath, 'test'), 'utf8')).toBe('local-path-test\n');
    const leases = kit.store.list('coordination.k8s.io/leases', NAMESPACE) as unknown as V1Lease[];
    expect(leases).toHaveLength(1);
    expect(kit.store.list('persistentvolumes')).toHaveLength(1);
    expect(b.started()).toBe(false);
    const creating = (p: Program): string[] => p.messages().filter((m) => m.startsWith(`Creating volume ${pvName}`));
    expect(creating(a)).toHaveLength(1);
    expect(creating(b)).toEqual([]);
  });
});
