/**
 * `main()` in-process against either tier (upstream's walkthrough, stop, start-up with upstream's RBAC, usage
 * errors), and the built `local-path-provisioner` binary.
 */
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describeTiers } from '@kprov/testkit/vitest';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HELP } from '../../src/cli/options.js';
import { main, type MainContext } from '../../src/main.js';
import { BASE_PATH, claim, NAMESPACE, volumeTestPod, waitBound, waitSucceeded } from '../provisioner/helpers.js';
import { ensureBuilt } from './binary.js';
import { cleanups, serviceAccountKubeconfig, startKit } from './harness.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(pkg, 'dist/cli.js');

/** `main()` running in-process with captured output; `stop()` aborts it as SIGTERM would. */
function run(
  argv: string[],
  context: MainContext = {},
  stops: { push(stop: () => Promise<unknown>): void } = cleanups,
): { exited: Promise<number>; stop: () => void; stdout: () => string; stderr: () => string } {
  const abort = new AbortController();
  let stdout = '';
  let stderr = '';
  const exited = main(
    argv,
    {},
    {
      stdout: { write: (l: string) => (stdout += l) },
      stderr: { write: (l: string) => (stderr += l) },
      signal: abort.signal,
      handleSignals: false,
      ...context,
    },
  );
  stops.push(async () => {
    abort.abort();
    await exited;
  });
  return { exited, stop: () => abort.abort(), stdout: () => stdout, stderr: () => stderr };
}

/** Programs of the usage tests, which run on no cluster; those of a tier's test stop with its clean-up. */
const plain: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of plain.splice(0).reverse()) await stop();
});

function messages(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
}

describeTiers('main', () => {
  it('provisions the walkthrough from the ConfigMap and exits 0 when stopped', async () => {
    const k = await startKit();
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

    let started = false;
    const program = run(
      [
        '--debug',
        'start',
        '--kubeconfig',
        k.kubeconfig,
        '--health-port',
        '0',
        '--logging-format',
        'json',
        '--worker-threads',
        '2',
      ],
      {
        onStarted: () => (started = true),
      },
    );
    const pvName = await waitBound(k);
    await waitSucceeded(k);
    expect(started).toBe(true);
    const dir = k.cluster.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
    expect(await readFile(path.join(dir, 'test'), 'utf8')).toBe('local-path-test\n');
    // Leader election is on by default, with the Lease in --namespace.
    expect(await k.read.leases(NAMESPACE)).toHaveLength(1);

    program.stop();
    expect(await program.exited).toBe(0);
    const logged = messages(program.stdout());
    expect(logged).toContain('Provisioner started');
    expect(logged.at(-1)).toBe('Provisioner stopped');
    expect(program.stderr()).toBe('');
  });

  it("runs without leader election, saying what to do, when the Lease is forbidden (upstream's RBAC)", async () => {
    const k = await startKit();
    // On the testkit a refused Lease read stands in for the missing permission; the real tier runs as the
    // ServiceAccount with upstream's RBAC (the shipped manifest's, without its Lease rule).
    const kubeconfig =
      k.cluster.testkit === undefined ? await serviceAccountKubeconfig(k, { withoutLeases: true }) : k.kubeconfig;
    k.cluster.testkit?.faults.add({ resource: 'leases', verb: 'get', action: { type: 'error', code: 403 } });
    await k.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await k.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

    const program = run(['start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json']);
    await waitBound(k);
    // No Lease was created: the controller runs without leader election.
    expect(await k.read.leases(NAMESPACE)).toHaveLength(0);
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

  it("exits 1 with upstream's message when the ConfigMap is missing", async () => {
    const { kubeconfig } = await startKit({ withConfigMap: false });
    const program = run(['start', '--kubeconfig', kubeconfig, '--health-port', '0', '--logging-format', 'json']);
    expect(await program.exited).toBe(1);
    expect(messages(program.stdout()).at(-1)).toMatch(
      /^Error starting daemon: invalid empty flag config and it also does not exist at ConfigMap local-path-storage\/local-path-config with err: /,
    );
  });
});

describe('main usage', () => {
  it("exits 1 with upstream's message for an invalid flag value", async () => {
    const program = run(['start', '--worker-threads', '0'], {}, plain);
    expect(await program.exited).toBe(1);
    expect(program.stderr()).toBe('Error starting daemon: invalid zero or negative integer flag worker-threads\n');
    expect(program.stdout()).toBe('');
  });

  it("exits 2 with upstream's prefix for an unknown flag", async () => {
    const program = run(['start', '--no-such-flag'], {}, plain);
    expect(await program.exited).toBe(2);
    expect(program.stderr()).toBe(
      'Usage error, please check your command: flag provided but not defined: -no-such-flag\n',
    );
  });

  it('prints the help and the version with exit code 0', async () => {
    const help = run(['--help'], {}, plain);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toBe(HELP);
    const version = run(['--version'], { version: 'v1.2.3' }, plain);
    expect(await version.exited).toBe(0);
    expect(version.stdout()).toBe('local-path-provisioner version v1.2.3\n');
  });
});

describe('local-path-provisioner binary', () => {
  beforeAll(ensureBuilt, 120_000);

  it('prints the help with exit code 0', async () => {
    const child = spawn(process.execPath, [bin, '--help'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: HELP, stderr: '' });
    expect((await readFile(bin, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(await readFile(path.join(pkg, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--version'], {
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(stdout).toBe(`local-path-provisioner version ${version}\n`);
  });
});
