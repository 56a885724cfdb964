import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StatusError } from '../../src/api/status.js';
import { ObjectStore } from '../../src/store/store.js';
import { startPvBinder } from '../../src/sim/binder.js';
import { startStoreKubelet, type KubeletEvent, type KubeletHandle } from '../../src/sim/kubelet/kubelet.js';
import type { Stoppable } from '../../src/sim/queue.js';
import { type Loose, eventually, claim, conditionOf, get, pod, removeTempDirs, tempDir, volume } from './fixtures.js';

let store: ObjectStore;
let root: string;
let kubelet: KubeletHandle;
let others: Stoppable[];
let events: KubeletEvent[];

beforeEach(() => {
  store = new ObjectStore();
  root = tempDir();
  events = [];
  kubelet = startStoreKubelet(store, { nodes: [{ name: 'node-1', root }], onEvent: (e) => events.push(e) });
  others = [];
});
afterEach(async () => {
  await kubelet.stop();
  for (const o of others) await o.stop();
  removeTempDirs();
});

const podOf = (name: string): Loose => get(store, 'pods', 'default', name);
const condition = (name: string, type: string): Loose => conditionOf(podOf(name), type);
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('kubelet', () => {
  it('registers its nodes like a kubelet', () => {
    const node = get(store, 'nodes', undefined, 'node-1');
    expect(node.metadata.labels).toMatchObject({ 'kubernetes.io/hostname': 'node-1', 'kubernetes.io/os': 'linux' });
    expect(node.metadata.labels['kubernetes.io/arch']).toBeTypeOf('string');
    expect(conditionOf(node, 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(node.status.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'node-1' },
    ]);
    expect(node.status.allocatable.pods).toBe('110');
    expect(node.status.nodeInfo.operatingSystem).toBe('linux');
  });

  it('runs mkdir on a hostPath volume: the directory appears under the node root and the pod Succeeds', async () => {
    store.create(
      'pods',
      pod(
        'mk',
        { command: ['mkdir', '-p', '/data/x'], volumeMounts: [{ name: 'd', mountPath: '/data' }] },
        {
          nodeName: 'node-1',
          volumes: [{ name: 'd', hostPath: { path: '/var/lib/stuff', type: 'DirectoryOrCreate' } }],
        },
      ),
    );
    await eventually(() => expect(podOf('mk').status.phase).toBe('Succeeded'));
    expect(statSync(join(root, 'var/lib/stuff/x')).isDirectory()).toBe(true);
    const status = podOf('mk').status;
    expect(status.containerStatuses[0]).toMatchObject({
      name: 'c',
      ready: false,
      restartCount: 0,
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(status).toMatchObject({ hostIP: '127.0.0.1', podIP: '127.0.0.1' });
    expect(status.startTime).toBeTypeOf('string');
    expect(condition('mk', 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    expect(condition('mk', 'Initialized')).toMatchObject({ status: 'True', reason: 'PodCompleted' });
  });

  it('runs a configMap script with sh and VOL_DIR, as the local-path provisioner helper pod does', async () => {
    const script = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\necho "created $VOL_DIR"\n';
    store.create('configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'local-path-config', namespace: 'default' },
      data: { setup: script, teardown: 'rm -rf "$VOL_DIR"' },
    });
    const dir = '/opt/local-path-provisioner/pvc-123_default_data';
    store.create(
      'pods',
      pod(
        'helper-pod-create-pvc-123',
        {
          command: ['sh', '/script/setup'],
          args: ['-p', dir, '-s', '1073741824', '-m', 'Filesystem'],
          env: [
            { name: 'VOL_DIR', value: dir },
            { name: 'VOL_MODE', value: 'Filesystem' },
            { name: 'VOL_SIZE_BYTES', value: '1073741824' },
          ],
          volumeMounts: [
            { name: 'script', mountPath: '/script' },
            { name: 'data', mountPath: '/opt/local-path-provisioner' },
          ],
        },
        {
          nodeName: 'node-1',
          volumes: [
            {
              name: 'script',
              configMap: {
                name: 'local-path-config',
                items: [
                  { key: 'setup', path: 'setup' },
                  { key: 'teardown', path: 'teardown' },
                ],
              },
            },
            { name: 'data', hostPath: { path: '/opt/local-path-provisioner', type: 'DirectoryOrCreate' } },
          ],
        },
      ),
    );
    await eventually(() => expect(podOf('helper-pod-create-pvc-123').status.phase).toBe('Succeeded'));
    const created = join(root, dir);
    expect(statSync(created).isDirectory()).toBe(true);
    expect(kubelet.readLog('default', 'helper-pod-create-pvc-123')).toBe(`created ${created}\n`);
  });

  it('reports a failing command as Failed with its exit code, and keeps its log', async () => {
    store.create(
      'pods',
      pod('fail', { command: ['sh', '-c', 'echo out; echo boom >&2; exit 3'] }, { nodeName: 'node-1' }),
    );
    await eventually(() => expect(podOf('fail').status.phase).toBe('Failed'));
    expect(podOf('fail').status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(condition('fail', 'Ready')).toMatchObject({ status: 'False', reason: 'PodFailed' });
    expect(kubelet.readLog('default', 'fail', 'c')).toBe('out\nboom\n');
    expect(kubelet.readLog('default', 'fail', 'c', { tailLines: 1 })).toBe('boom\n');
    expect(kubelet.readLog('default', 'fail', 'c', { previous: true })).toBeUndefined();
    expect(kubelet.readLog('default', 'nope', 'c')).toBeUndefined();
    expect(() => kubelet.readLog('default', 'fail', 'other')).toThrow(StatusError);
  });

  it('gives a failed container with FallbackToLogsOnError the tail of its log as its terminated message, and others none', async () => {
    const script = 'for i in $(seq 1 100); do echo line $i; done; exit 2';
    store.create(
      'pods',
      pod(
        'tail',
        { command: ['sh', '-c', script], terminationMessagePolicy: 'FallbackToLogsOnError' },
        { nodeName: 'node-1' },
      ),
    );
    store.create('pods', pod('file', { command: ['sh', '-c', script] }, { nodeName: 'node-1' }));
    await eventually(() =>
      expect([podOf('tail').status.phase, podOf('file').status.phase]).toEqual(['Failed', 'Failed']),
    );
    const message = podOf('tail').status.containerStatuses[0].state.terminated.message as string;
    // The kubelet's fallback: the last 80 lines.
    expect(message.split('\n')).toEqual(Array.from({ length: 80 }, (_, i) => `line ${i + 21}`));
    expect(podOf('file').status.containerStatuses[0].state.terminated.message).toBeUndefined();
  });

  it('reports a command that does not exist as StartError', async () => {
    store.create('pods', pod('missing', { command: ['/no/such/binary'] }, { nodeName: 'node-1' }));
    await eventually(() => expect(podOf('missing').status.phase).toBe('Failed'));
    expect(podOf('missing').status.containerStatuses[0].state.terminated).toMatchObject({
      exitCode: 128,
      reason: 'StartError',
    });
  });

  it('restarts a failed container with restartPolicy OnFailure', async () => {
    const cmd = 'if [ -e /work/once ]; then echo second; exit 0; fi; touch /work/once; echo first; exit 1';
    store.create(
      'pods',
      pod(
        'retry',
        { command: ['sh', '-c', cmd], volumeMounts: [{ name: 'w', mountPath: '/work' }] },
        {
          nodeName: 'node-1',
          restartPolicy: 'OnFailure',
          volumes: [{ name: 'w', emptyDir: {} }],
        },
      ),
    );
    await eventually(() => expect(podOf('retry').status.phase).toBe('Succeeded'));
    const cs = podOf('retry').status.containerStatuses[0];
    expect(cs.restartCount).toBe(1);
    expect(cs.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(cs.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(kubelet.readLog('default', 'retry')).toBe('second\n');
    expect(kubelet.readLog('default', 'retry', undefined, { previous: true })).toBe('first\n');
  });

  it('reports a running pod as Running and Ready, and kills it when the pod is deleted', async () => {
    store.create(
      'pods',
      pod(
        'sleeper',
        {
          command: ['sh', '-c', 'echo $$$$ > /run/pid; exec sleep 1000'],
          volumeMounts: [{ name: 'r', mountPath: '/run' }],
        },
        {
          nodeName: 'node-1',
          volumes: [{ name: 'r', hostPath: { path: '/sleeper' } }],
        },
      ),
    );
    await eventually(() => {
      expect(podOf('sleeper').status.phase).toBe('Running');
      expect(condition('sleeper', 'Ready')).toMatchObject({ status: 'True' });
      expect(existsSync(join(root, 'sleeper/pid'))).toBe(true);
    });
    for (const type of ['ContainersReady', 'Initialized', 'PodReadyToStartContainers'])
      expect(condition('sleeper', type)).toMatchObject({ status: 'True' });
    expect(podOf('sleeper').status.containerStatuses[0]).toMatchObject({
      ready: true,
      started: true,
      state: { running: {} },
    });
    let pid = 0;
    await eventually(() => {
      pid = Number(readFileSync(join(root, 'sleeper/pid'), 'utf8'));
      expect(pid).toBeGreaterThan(0);
    });
    expect(alive(pid)).toBe(true);
    store.delete('pods', 'default', 'sleeper');
    await eventually(() => expect(alive(pid)).toBe(false));
  });

  it('runs init containers first and wires PVC, secret, emptyDir and downward API env', async () => {
    others.push(startPvBinder(store));
    const c = store.create('persistentvolumeclaims', claim('data', { storageClassName: '' }));
    store.create(
      'persistentvolumes',
      volume('pv-1', {
        claimRef: { namespace: 'default', name: 'data', uid: c.metadata.uid },
        hostPath: { path: '/srv/pv-1', type: 'DirectoryOrCreate' },
      }),
    );
    store.create('secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'default' },
      data: { token: Buffer.from('s3cret').toString('base64') },
    });
    store.create(
      'pods',
      pod(
        'wired',
        {
          command: [
            'sh',
            '-c',
            'cat /shared/init /etc/creds/token > "$(OUT)/result"; echo " $POD $NODE" >> /vol/result',
          ],
          env: [
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            { name: 'OUT', value: '/vol' },
          ],
          volumeMounts: [
            { name: 'shared', mountPath: '/shared' },
            { name: 'creds', mountPath: '/etc/creds' },
            { name: 'data', mountPath: '/vol' },
          ],
        },
        {
          nodeName: 'node-1',
          initContainers: [
            {
              name: 'init',
              image: 'busybox',
              command: ['sh', '-c', 'printf from-init- > /shared/init'],
              volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
            },
          ],
          volumes: [
            { name: 'shared', emptyDir: {} },
            { name: 'creds', secret: { secretName: 'creds', defaultMode: 0o400 } },
            { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          ],
        },
      ),
    );
    await eventually(() => expect(podOf('wired').status.phase).toBe('Succeeded'));
    expect(readFileSync(join(root, 'srv/pv-1/result'), 'utf8')).toBe('from-init-s3cret wired node-1\n');
    expect(podOf('wired').status.initContainerStatuses[0]).toMatchObject({
      name: 'init',
      ready: true,
      state: { terminated: { exitCode: 0 } },
    });
  });

  it('keeps a pod ContainerCreating until its claim is bound', async () => {
    store.create('persistentvolumeclaims', claim('later', { storageClassName: '' }));
    store.create(
      'pods',
      pod(
        'waiting',
        { command: ['touch', '/vol/done'], volumeMounts: [{ name: 'v', mountPath: '/vol' }] },
        {
          nodeName: 'node-1',
          volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'later' } }],
        },
      ),
    );
    await eventually(() => {
      expect(podOf('waiting').status.containerStatuses[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } });
      expect(events[0]).toMatchObject({ pod: 'waiting', reason: 'FailedMount' });
    });
    expect(podOf('waiting').status.phase).toBe('Pending');
    others.push(startPvBinder(store));
    store.create('persistentvolumes', volume('pv-later', { hostPath: { path: '/later', type: 'DirectoryOrCreate' } }));
    await eventually(() => expect(podOf('waiting').status.phase).toBe('Succeeded'));
    expect(existsSync(join(root, 'later/done'))).toBe(true);
  });

  it("reports a hostPath type check failure once, as FailedMount with the kubelet's message", async () => {
    store.create(
      'pods',
      pod(
        'no-file',
        { command: ['true'], volumeMounts: [{ name: 'f', mountPath: '/f' }] },
        {
          nodeName: 'node-1',
          volumes: [{ name: 'f', hostPath: { path: '/etc/missing.conf', type: 'File' } }],
        },
      ),
    );
    await eventually(() =>
      expect(podOf('no-file').status.containerStatuses[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } }),
    );
    // Changes the kubelet retries volume setup on (a configMap) bring the same failure, not a second Event.
    store.create('configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'poke', namespace: 'default' },
    });
    await eventually(() => expect(events).toHaveLength(1));
    expect(events[0]).toEqual({
      namespace: 'default',
      pod: 'no-file',
      node: 'node-1',
      type: 'Warning',
      reason: 'FailedMount',
      message: 'hostPath type check failed: /etc/missing.conf is not a file',
    });
    expect(podOf('no-file').status.phase).toBe('Pending');
  });

  it('asks for a container name when the pod has several', async () => {
    store.create(
      'pods',
      pod(
        'two',
        { command: ['true'] },
        {
          nodeName: 'node-1',
          containers: [
            { name: 'a', image: 'x', command: ['true'] },
            { name: 'b', image: 'x', command: ['true'] },
          ],
        },
      ),
    );
    await eventually(() => expect(podOf('two').status.phase).toBe('Succeeded'));
    expect(() => kubelet.readLog('default', 'two')).toThrow(
      'a container name must be specified for pod two, choose one of: [a b]',
    );
  });

  it('kills every process on stop', async () => {
    store.create(
      'pods',
      pod(
        'forever',
        { command: ['sh', '-c', 'echo $$$$ > /run/pid; sleep 1000'], volumeMounts: [{ name: 'r', mountPath: '/run' }] },
        {
          nodeName: 'node-1',
          restartPolicy: 'Always',
          volumes: [{ name: 'r', emptyDir: {} }],
        },
      ),
    );
    await eventually(() => expect(podOf('forever').status.phase).toBe('Running'));
    const uid = podOf('forever').metadata.uid as string;
    const pidFile = join(root, 'var/lib/kubelet/pods', uid, 'volumes/kubernetes.io~empty-dir/r/pid');
    let pid = 0;
    await eventually(() => {
      pid = Number(readFileSync(pidFile, 'utf8'));
      expect(pid).toBeGreaterThan(0);
    });
    await kubelet.stop();
    expect(alive(pid)).toBe(false);
    const rv = store.resourceVersion;
    store.delete('pods', 'default', 'forever');
    expect(store.resourceVersion).toBe(rv + 1);
  });
});
