/**
 * `main()` in-process against the testkit (upstream's walkthrough, stop, start-up and usage errors), and the built
 * `local-path-provisioner` binary.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HELP } from '../../src/cli/options.js';
import { main, type MainContext } from '../../src/main.js';
import {
  BASE_PATH,
  claim,
  configJson,
  HELPER_POD_YAML,
  NAMESPACE,
  SETUP_SCRIPT,
  storageClass,
  TEARDOWN_SCRIPT,
  volumeTestPod,
  waitBound,
  waitSucceeded,
} from '../provisioner/helpers.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(pkg, 'dist/cli.js');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A testkit with the namespace, optionally upstream's ConfigMap, and a kubeconfig file for `--kubeconfig`. */
async function startKit(withConfigMap = true): Promise<{ kit: Testkit; kubeconfig: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-main-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const kit = await startApiServer({ nodes: [{ name: 'node-1' }], storage: { namespaces: ['default', 'kube-system', NAMESPACE] } });
  cleanups.push(() => kit.stop());
  if (withConfigMap) {
    await kit.kubeConfig.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'local-path-config', namespace: NAMESPACE },
        data: { 'config.json': configJson(), setup: SETUP_SCRIPT, teardown: TEARDOWN_SCRIPT, 'helperPod.yaml': HELPER_POD_YAML },
      },
    });
  }
  return { kit, kubeconfig: await kit.writeKubeconfig(path.join(dir, 'kubeconfig')) };
}

/** `main()` running in-process with captured output; `stop()` aborts it as SIGTERM would. */
function run(argv: string[], context: MainContext = {}): { exited: Promise<number>; stop: () => void; stdout: () => string; stderr: () => string } {
  const abort = new AbortController();
  let stdout = '';
  let stderr = '';
  const exited = main(argv, {}, {
    stdout: { write: (l: string) => (stdout += l) },
    stderr: { write: (l: string) => (stderr += l) },
    signal: abort.signal,
    handleSignals: false,
    ...context,
  });
  cleanups.push(async () => {
    abort.abort();
    await exited;
  });
  return { exited, stop: () => abort.abort(), stdout: () => stdout, stderr: () => stderr };
}

function messages(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
}

describe('main', () => {
  it('provisions the walkthrough from the ConfigMap and exits 0 when stopped', async () => {
    const { kit, kubeconfig } = await startKit();
    await kit.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

    let started = false;
    const program = run(['--debug', 'start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json', '--worker-threads', '2'], {
      onStarted: () => (started = true),
    });
    const pvName = await waitBound(kit);
    await waitSucceeded(kit);
    expect(started).toBe(true);
    const dir = path.join(kit.nodes[0]!.root, `${BASE_PATH}/${pvName}_default_local-path-pvc`);
    expect(await readFile(path.join(dir, 'test'), 'utf8')).toBe('local-path-test\n');
    // Leader election is on by default, with the Lease in --namespace.
    expect(kit.store.list('coordination.k8s.io/leases', NAMESPACE)).toHaveLength(1);

    program.stop();
    expect(await program.exited).toBe(0);
    const logged = messages(program.stdout());
    expect(logged).toContain('Provisioner started');
    expect(logged.at(-1)).toBe('Provisioner stopped');
    expect(program.stderr()).toBe('');
  });

  it('runs without leader election, saying what to do, when the Lease is forbidden (upstream\'s RBAC)', async () => {
    const { kit, kubeconfig } = await startKit();
    kit.faults.add({ resource: 'leases', verb: 'get', action: { type: 'error', code: 403 } });
    await kit.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });
    const core = kit.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

    const program = run(['start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json']);
    await waitBound(kit);
    // No Lease was created: the controller runs without leader election.
    expect(kit.store.list('coordination.k8s.io/leases', NAMESPACE)).toHaveLength(0);
    program.stop();
    expect(await program.exited).toBe(0);
    const entries = program
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    const error = entries.find((e) => e.msg.includes('coordination.k8s.io leases'));
    // Error level: klog's JSON gives errors no "v".
    expect(error).toBeDefined();
    expect(error).not.toHaveProperty('v');
    expect(error?.msg).toContain('deploy/local-path-storage.yaml');
    expect(error?.msg).toContain('--leader-election=false');
    expect(entries.some((e) => e.msg.includes('do not run more than one replica'))).toBe(true);
  });

  it('exits 1 with upstream\'s message when the ConfigMap is missing', async () => {
    const { kubeconfig } = await startKit(false);
    const program = run(['start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json']);
    expect(await program.exited).toBe(1);
    expect(messages(program.stdout()).at(-1)).toMatch(
      /^Error starting daemon: invalid empty flag config and it also does not exist at ConfigMap local-path-storage\/local-path-config with err: /,
    );
  });

  it('exits 1 with upstream\'s message for an invalid flag value', async () => {
    const program = run(['start', '--worker-threads', '0']);
    expect(await program.exited).toBe(1);
    expect(program.stderr()).toBe('Error starting daemon: invalid zero or negative integer flag worker-threads\n');
    expect(program.stdout()).toBe('');
  });

  it('exits 2 with upstream\'s prefix for an unknown flag', async () => {
    const program = run(['start', '--no-such-flag']);
    expect(await program.exited).toBe(2);
    expect(program.stderr()).toBe('Usage error, please check your command: flag provided but not defined: -no-such-flag\n');
  });

  it('prints the help and the version with exit code 0', async () => {
    const help = run(['--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toBe(HELP);
    const version = run(['--version'], { version: 'v1.2.3' });
    expect(await version.exited).toBe(0);
    expect(version.stdout()).toBe('local-path-provisioner version v1.2.3\n');
  });
});

describe('local-path-provisioner binary', () => {
  /** Builds the package when dist/cli.js is missing or older than a source file. */
  beforeAll(async () => {
    const built = statSync(bin, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    const src = path.join(pkg, 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const newest = Math.max(...files.map((f) => statSync(path.join(src, f)).mtimeMs));
    if (newest > built) await promisify(execFile)('pnpm', ['--filter', '@kprov/local-path', 'build'], { cwd: pkg });
  }, 120_000);

  it('prints the help with exit code 0', async () => {
    const child = spawn(process.execPath, [bin, '--help'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: HELP, stderr: '' });
    expect((await readFile(bin, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
