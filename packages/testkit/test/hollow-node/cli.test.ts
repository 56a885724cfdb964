/**
 * `kprov-testkit kubelet` as a user runs it: a child process (the built `dist/cli.js`) pointed at a kubeconfig,
 * registering its node and running pods until SIGTERM; and its usage errors.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startNodeProcess, stopProcess } from '../../src/process/node-process.js';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { fileOnNode, hostPathPod, waitForPhase } from './helpers.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli.js');

let kit: Testkit;
let dir: string;
beforeAll(async () => {
  kit = await startApiServer({ kubelet: false, nodes: [] });
  dir = await mkdtemp(path.join(tmpdir(), 'kprov-kubelet-cli-'));
});
afterAll(async () => {
  await kit?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('kprov-testkit kubelet', () => {
  it('registers its node, runs its pods and stops on SIGTERM', async () => {
    const kubeconfig = await kit.writeKubeconfig(path.join(dir, 'kubeconfig'));
    const root = path.join(dir, 'nodes', 'cli-1');
    const child = await startNodeProcess(
      'kprov-testkit kubelet',
      [CLI, 'kubelet', '--kubeconfig', kubeconfig, '--node', `cli-1=${root}`],
      'kubelet ready',
    );
    try {
      const core = kit.kubeConfig.makeApiClient(CoreV1Api);
      const node = await core.readNode({ name: 'cli-1' });
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      await core.createNamespacedPod({
        namespace: 'default',
        body: hostPathPod('from-cli', 'echo ran > /data/cli.txt'),
      });
      await waitForPhase(kit.kubeConfig, 'from-cli', 'Succeeded');
      expect(await fileOnNode(root, 'var/kprov-test/cli.txt')).toBe('ran\n');
    } finally {
      await stopProcess(child);
    }
    expect(child.exitCode).toBe(0);
    // A given root is the user's: it stays.
    expect(existsSync(root)).toBe(true);
  });

  it('says what is missing', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await runCli(['kubelet', '--node', 'x'])).toBe(1);
      expect(await runCli(['kubelet', '--kubeconfig', path.join(dir, 'kubeconfig')])).toBe(1);
      expect(await runCli(['kubelet', '--kubeconfig', path.join(dir, 'kubeconfig'), '--node', 'Bad_Name'])).toBe(1);
      expect(stderr.mock.calls.map((c) => String(c[0]))).toEqual([
        'kprov-testkit: kubelet needs --kubeconfig FILE\n',
        'kprov-testkit: kubelet needs at least one --node NAME[=ROOTDIR]\n',
        'kprov-testkit: --node "Bad_Name": the node name must be a lowercase RFC 1123 subdomain, like node-1\n',
      ]);
    } finally {
      stderr.mockRestore();
    }
  });
});
