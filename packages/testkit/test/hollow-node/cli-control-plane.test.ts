/**
 * `kprov-testkit control-plane --node ... --crd ...` as a child process (the built `dist/cli.js`): a real control
 * plane with a kubelet and CRDs, each step of its start printed with its time, the administrator's kubeconfig where
 * asked, and everything gone after SIGTERM.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, stopProcess } from '../../src/process/node-process.js';
import { fileOnNode, hostPathPod, waitForPhase } from './helpers.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli.js');
const CRDS = path.resolve(import.meta.dirname, '../control-plane/fixtures/crds');

describe.skipIf(!process.env.KUBEBUILDER_ASSETS)('kprov-testkit control-plane', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kprov-control-plane-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a control plane with a kubelet until SIGTERM, then removes its data', async () => {
    const kubeconfig = path.join(dir, 'kubeconfig');
    let output = '';
    const child = await startNodeProcess(
      'kprov-testkit control-plane',
      [CLI, 'control-plane', '--kubeconfig-out', kubeconfig, '--node', 'cp-node', '--crd', CRDS],
      'kubeconfig:',
      {
        cwd: dir,
        timeoutMs: 120_000,
        onSpawn: (c) => c.stdout?.on('data', (d: Buffer) => (output += d.toString())),
      },
    );
    const dataDir = /data and logs in (\S+)\)/.exec(output)?.[1] ?? '';
    try {
      expect(output).toContain(`kprov-testkit: node cp-node with root ${path.join(dir, 'nodes', 'cp-node')}`);
      expect(existsSync(dataDir)).toBe(true);
      const steps = [...output.matchAll(/^kprov-testkit: (.+) \(\d+\.\d s\)$/gm)].map((m) => m[1]);
      expect(steps).toEqual([
        'credentials made',
        'etcd ready',
        'kube-apiserver ready',
        'namespace default created',
        'kube-controller-manager ready (ServiceAccount default, ConfigMap kube-root-ca.crt)',
        'kube-scheduler ready',
        '3 CustomResourceDefinitions Established',
      ]);
      expect(output).toMatch(
        /^kprov-testkit: control plane ready in \d+\.\d s at https:\/\/127\.0\.0\.1:\d+ \(etcd, kube-apiserver, kube-controller-manager, kube-scheduler;/m,
      );
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const node = await kc.makeApiClient(CoreV1Api).readNode({ name: 'cp-node' });
      expect(node.spec?.taints ?? []).toEqual([]);
      await kc
        .makeApiClient(CoreV1Api)
        .createNamespacedPod({ namespace: 'default', body: hostPathPod('cli-pod', 'echo ok > /data/ok') });
      await waitForPhase(kc, 'cli-pod', 'Succeeded');
      // The CRDs of --crd are served.
      const gadgets = (await kc
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: 'example.kprov.io', version: 'v1alpha1', plural: 'gadgets' })) as {
        items?: unknown[];
      };
      expect(gadgets.items).toEqual([]);
      expect(await fileOnNode(path.join(dir, 'nodes', 'cp-node'), 'var/kprov-test/ok')).toBe('ok\n');
    } finally {
      await stopProcess(child);
    }
    expect(child.exitCode).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
  }, 150_000);
});
