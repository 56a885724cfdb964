import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAIT } from '../../src/vitest.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const cli = resolve(here, '../../dist/cli.js');

async function hasKubectl(): Promise<boolean> {
  try {
    await run('kubectl', ['version', '--client']);
    return true;
  } catch {
    return false;
  }
}

const available = await hasKubectl();

const MANIFEST = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: demo-sc
provisioner: example.com/demo
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: demo-pvc
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: demo-sc
  resources:
    requests:
      storage: 1Mi
---
apiVersion: v1
kind: Pod
metadata:
  name: demo-pod
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: [sh, -c, "echo hi"]
    volumeMounts:
    - name: v
      mountPath: /data
  volumes:
  - name: v
    persistentVolumeClaim:
      claimName: demo-pvc
`;

describe.skipIf(!available)('kubectl against kprov-testkit serve', () => {
  let dir: string;
  let server: ChildProcess;
  let kubeconfig: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: WAIT.timeout });
    return stdout;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kprov-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    server = spawn(
      process.execPath,
      [cli, 'serve', '--kubeconfig-out', kubeconfig, '--node', `node-k=${join(dir, 'node-k')}`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((ok, fail) => {
      let seen = '';
      server.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('kubeconfig:')) ok();
      });
      server.once('exit', (code) => fail(new Error(`kprov-testkit serve exited with ${code}`)));
    });
  });

  afterAll(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((ok) => server.once('exit', ok));
      server.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a kubeconfig that names the server', async () => {
    expect(await readFile(kubeconfig, 'utf8')).toMatch(/server: http:\/\/127\.0\.0\.1:\d+/);
  });

  it('applies, gets and deletes a StorageClass, a PVC and a pod', async () => {
    const file = join(dir, 'manifest.yaml');
    await writeFile(file, MANIFEST);
    const applied = await kubectl('apply', '-f', file);
    expect(applied).toContain('storageclass.storage.k8s.io/demo-sc created');
    expect(applied).toContain('persistentvolumeclaim/demo-pvc created');
    expect(applied).toContain('pod/demo-pod created');
    expect(await kubectl('apply', '-f', file)).toContain('storageclass.storage.k8s.io/demo-sc unchanged');

    const sc = await kubectl('get', 'sc', '-o', 'wide');
    expect(sc).toMatch(/^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE/);
    expect(sc).toMatch(/demo-sc\s+example\.com\/demo\s+Delete\s+WaitForFirstConsumer\s+false/);

    const all = await kubectl('get', 'pv,pvc,sc,pods', '-o', 'wide');
    expect(all).toMatch(/persistentvolumeclaim\/demo-pvc\s+Pending/);
    expect(all).toMatch(/pod\/demo-pod\s+0\/1\s+Pending/);

    const nodes = await kubectl('get', 'nodes');
    expect(nodes).toMatch(/node-k\s+Ready/);

    const pvc = JSON.parse(await kubectl('get', 'pvc', 'demo-pvc', '-o', 'json')) as {
      metadata: { annotations?: Record<string, string> };
    };
    expect(pvc.metadata.annotations?.['volume.kubernetes.io/selected-node']).toBe('node-k');

    const deleted = await kubectl('delete', '-f', file, '--wait=false');
    expect(deleted).toContain('pod "demo-pod" deleted');
    expect(deleted).toContain('persistentvolumeclaim "demo-pvc" deleted');
    expect(deleted).toContain('storageclass.storage.k8s.io "demo-sc" deleted');
    await kubectl('wait', '--for=delete', 'pvc/demo-pvc', 'pod/demo-pod', '--timeout=20s');
    const after = await kubectl('get', 'pvc,sc,pods', '--ignore-not-found');
    expect(after.trim()).toBe('');
  });

  // kubectl stands for Go clients here: its generators build typed objects, which client-go 1.32 sends as
  // application/vnd.kubernetes.protobuf, and on a 415 it does not retry them as JSON (it does so only for CBOR).
  it("creates what kubectl's generators send as protobuf: a namespace, a configmap, a secret and a service account", async () => {
    expect(await kubectl('create', 'namespace', 'pb-ns')).toBe('namespace/pb-ns created\n');
    expect(await kubectl('create', 'configmap', 'pb-cm', '--from-literal=a=b', '--from-literal=empty=')).toBe(
      'configmap/pb-cm created\n',
    );
    expect(await kubectl('create', 'serviceaccount', 'pb-sa')).toBe('serviceaccount/pb-sa created\n');
    expect(
      await kubectl('create', 'secret', 'generic', 'pb-secret', '--from-literal=x=y', '--type=example.com/kind'),
    ).toBe('secret/pb-secret created\n');
    const ns = JSON.parse(await kubectl('get', 'namespace', 'pb-ns', '-o', 'json')) as {
      metadata: { labels: Record<string, string> };
      status: { phase: string };
    };
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'pb-ns' });
    expect(ns.status.phase).toBe('Active');
    const cm = JSON.parse(await kubectl('get', 'configmap', 'pb-cm', '-o', 'json')) as { data: Record<string, string> };
    expect(cm.data).toEqual({ a: 'b', empty: '' });
    const secret = JSON.parse(await kubectl('get', 'secret', 'pb-secret', '-o', 'json')) as {
      data: Record<string, string>;
      type: string;
    };
    expect(secret).toMatchObject({ data: { x: Buffer.from('y').toString('base64') }, type: 'example.com/kind' });
    expect(await kubectl('get', 'serviceaccount', 'pb-sa', '-o', 'name')).toBe('serviceaccount/pb-sa\n');
    await kubectl('delete', 'namespace', 'pb-ns', '--wait=false');
  });

  it('answers a server-side dry run without storing anything', async () => {
    expect(await kubectl('create', 'namespace', 'dry-ns', '--dry-run=server')).toBe(
      'namespace/dry-ns created (server dry run)\n',
    );
    await expect(kubectl('get', 'namespace', 'dry-ns')).rejects.toThrow(/namespaces "dry-ns" not found/);
  });

  it('reports a missing object as kubectl users expect', async () => {
    await expect(kubectl('get', 'pvc', 'nope')).rejects.toThrow(/persistentvolumeclaims "nope" not found/);
  });
});

describe('the kubeconfig file', () => {
  it('loads into client-node and reaches the server', async () => {
    const { KubeConfig, CoreV1Api } = await import('@kubernetes/client-node');
    const { startApiServer } = await import('../../src/testkit.js');
    const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    const dir2 = await mkdtemp(join(tmpdir(), 'kprov-kc-'));
    try {
      const file = await kit.writeKubeconfig(join(dir2, 'kubeconfig'));
      const kc = new KubeConfig();
      kc.loadFromFile(file);
      const ns = await kc.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
      expect(ns.metadata?.name).toBe('default');
    } finally {
      await kit.stop();
      await rm(dir2, { recursive: true, force: true });
    }
  });
});
