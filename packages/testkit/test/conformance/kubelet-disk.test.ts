import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '../../src/testkit.js';
import { WAIT } from '../../src/vitest.js';

let kit: Testkit;
let core: CoreV1Api;
let root: string;

beforeAll(async () => {
  kit = await startApiServer({ nodes: [{ name: 'node-a' }] });
  core = kit.kubeConfig.makeApiClient(CoreV1Api);
  root = kit.nodes[0]?.root ?? '';
});
afterAll(() => kit.stop());

const read = (name: string): Promise<V1Pod> => core.readNamespacedPod({ name, namespace: 'default' });

async function phaseOf(name: string, phase: string): Promise<V1Pod> {
  return vi.waitFor(async () => {
    const p = await read(name);
    expect(p.status?.phase).toBe(phase);
    return p;
  }, WAIT);
}

describe('the kubelet on disk, through the API', () => {
  it('keeps a pod whose hostPath volume fails its type check Pending in ContainerCreating, its container never started', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'no-dir' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'busybox',
              command: ['touch', '/h/ran'],
              volumeMounts: [{ name: 'h', mountPath: '/h' }],
            },
          ],
          volumes: [{ name: 'h', hostPath: { path: '/not/there', type: 'Directory' } }],
        },
      },
    });
    const pod = await vi.waitFor(async () => {
      const p = await read('no-dir');
      expect(p.status?.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: 'ContainerCreating' } });
      return p;
    }, WAIT);
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status).toBe('False');
    expect(pod.status?.podIP).toBeUndefined();
    expect(existsSync(join(root, 'not/there'))).toBe(false);
  });

  it('writes the last of two configMap items that name the same file, as if written one after the other', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'twice' }, data: { first: 'one', second: 'two' } },
    });
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'twice' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'busybox',
              command: ['cat', '/cfg/same', '/cfg/sub/other'],
              volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
            },
          ],
          volumes: [
            {
              name: 'cfg',
              configMap: {
                name: 'twice',
                items: [
                  { key: 'first', path: 'same' },
                  { key: 'first', path: 'sub/other', mode: 0o600 },
                  { key: 'second', path: 'same' },
                ],
              },
            },
          ],
        },
      },
    });
    await phaseOf('twice', 'Succeeded');
    expect(await core.readNamespacedPodLog({ name: 'twice', namespace: 'default' })).toBe('twoone');
  });

  it("removes a deleted pod's directory with what its containers wrote there, without following links out of it", async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'scribbler' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'busybox',
              command: [
                'sh',
                '-c',
                'echo kept > /keep/file && mkdir -p /scratch/a/b && echo x > /scratch/a/b/c && ln -s /keep /scratch/a/link',
              ],
              volumeMounts: [
                { name: 'scratch', mountPath: '/scratch' },
                { name: 'keep', mountPath: '/keep' },
              ],
            },
          ],
          volumes: [
            { name: 'scratch', emptyDir: {} },
            { name: 'keep', hostPath: { path: '/srv/keep', type: 'DirectoryOrCreate' } },
          ],
        },
      },
    });
    const pod = await phaseOf('scribbler', 'Succeeded');
    const dir = join(root, 'var/lib/kubelet/pods', pod.metadata?.uid ?? '');
    expect(readFileSync(join(dir, 'volumes/kubernetes.io~empty-dir/scratch/a/b/c'), 'utf8')).toBe('x\n');
    await core.deleteNamespacedPod({ name: 'scribbler', namespace: 'default' });
    await vi.waitFor(() => expect(existsSync(dir)).toBe(false), WAIT);
    expect(readFileSync(join(root, 'srv/keep/file'), 'utf8')).toBe('kept\n');
  });
});
