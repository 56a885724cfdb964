/** The built `kprov-hostpath` binary, spawned: help, exit codes, shutdown on SIGTERM. */
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { HELP } from '../src/options.js';
import { claim, hostpathClaim, startKit, storageClass } from './helpers.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(pkg, 'dist/cli.js');

/** Builds the package when dist/cli.js is missing or older than a source file or the library it bundles. */
beforeAll(async () => {
  const built = statSync(bin, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const src = path.join(pkg, 'src');
  const lib = path.join(pkg, '../provisioner-lib/dist');
  const newest = Math.max(
    ...readdirSync(src).map((f) => statSync(path.join(src, f)).mtimeMs),
    ...readdirSync(lib).map((f) => statSync(path.join(lib, f)).mtimeMs),
  );
  if (newest > built) await promisify(execFile)('pnpm', ['--filter', '@kprov/hostpath-example', 'build'], { cwd: pkg });
}, 120_000);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function runBin(
  args: string[],
  env: Record<string, string>,
): {
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  kill: (signal: NodeJS.Signals) => void;
  stdout: () => string;
} {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { exited, kill: (signal) => child.kill(signal), stdout: () => stdout };
}

describe('kprov-hostpath binary', () => {
  it('starts with a node shebang', () => {
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('prints the help with exit code 0', async () => {
    expect(await runBin(['--help'], {}).exited).toEqual({ code: 0, stdout: HELP, stderr: '' });
  });

  it('exits 1 without NODE_NAME, saying to set it', async () => {
    const { code, stderr } = await runBin([], {}).exited;
    expect(code).toBe(1);
    expect(stderr).toContain('set the NODE_NAME environment variable');
  });

  it('provisions, and exits 0 on SIGTERM', async () => {
    const { kit, root, kubeconfig, stop } = await startKit();
    cleanups.push(stop);
    await kit.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: storageClass() });
    await kit.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespacedPersistentVolumeClaim({ namespace: 'default', body: hostpathClaim() });
    const program = runBin(
      ['--kubeconfig', kubeconfig, '--leader-election-namespace', 'default', '--logging-format', 'json'],
      {
        NODE_NAME: 'node-1',
        HOST_ROOT: root,
      },
    );
    await vi.waitFor(() => expect(claim(kit, 'hostpath-claim')?.status?.phase).toBe('Bound'), WAIT);
    program.kill('SIGTERM');
    const { code, stdout } = await program.exited;
    expect(code).toBe(0);
    const messages = stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toContain('Started provisioner controller');
    expect(messages).toContain('Received signal, shutting down');
    expect(messages.at(-1)).toBe('Stopped');
  });
});
