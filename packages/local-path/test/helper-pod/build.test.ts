import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { buildHelperPod, HelperPodError, type HelperPodInputs } from '../../src/executor/helper-pod/build.js';
import { loadHelperPodTemplate } from '../../src/executor/helper-pod/template.js';
import { DEFAULT_TEMPLATE } from './fixtures.js';
import { guardedCommand, PATH_GUARD_SCRIPT } from '../../src/volume/path-guard.js';

const template = loadHelperPodTemplate(DEFAULT_TEMPLATE, false);
const PV = 'pvc-0d1c7f7e-1111-2222-3333-444455556666';

const base: HelperPodInputs = {
  action: 'create',
  template,
  namespace: 'local-path-storage',
  serviceAccountName: 'local-path-provisioner-service-account',
  configMapName: 'local-path-config',
  pvName: PV,
  path: `/opt/local-path-provisioner/${PV}_default_local-path-pvc`,
  node: 'node-1',
  shared: false,
  sizeBytes: 134217728,
  volumeMode: 'Filesystem',
  user: '1000',
  group: '2000',
  perm: '0750',
};

describe('buildHelperPod — create, field by field (reference 3.6)', () => {
  const pod = buildHelperPod(base);
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  const volDir = `/opt/local-path-provisioner/${PV}_default_local-path-pvc`;

  it('metadata.name is <template name>-<action>-<pv>', () =>
    expect(pod.metadata?.name).toBe(`helper-pod-create-${PV}`));
  it('metadata.namespace is the provisioner namespace', () =>
    expect(pod.metadata?.namespace).toBe('local-path-storage'));
  it('spec.nodeName is the target node', () => expect(spec.nodeName).toBe('node-1'));
  it('spec.serviceAccountName is --service-account-name', () =>
    expect(spec.serviceAccountName).toBe('local-path-provisioner-service-account'));
  it('spec.restartPolicy is Never', () => expect(spec.restartPolicy).toBe('Never'));
  it('spec.tolerations are the template list', () =>
    expect(spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    ]));
  it('spec.priorityClassName comes from the template', () =>
    expect(spec.priorityClassName).toBe('system-node-critical'));
  it('volume data is a DirectoryOrCreate hostPath of the parent dir', () =>
    expect(spec.volumes?.[0]).toEqual({
      name: 'data',
      hostPath: { path: '/opt/local-path-provisioner', type: 'DirectoryOrCreate' },
    }));
  it('volume script is the ConfigMap with setup and teardown', () =>
    expect(spec.volumes?.[1]).toEqual({
      name: 'script',
      configMap: {
        name: 'local-path-config',
        items: [
          { key: 'setup', path: 'setup' },
          { key: 'teardown', path: 'teardown' },
        ],
      },
    }));
  it('there are exactly those two volumes', () => expect(spec.volumes).toHaveLength(2));
  it('mounts script at /script and data at the parent dir', () =>
    expect(c.volumeMounts).toEqual([
      { name: 'script', mountPath: '/script' },
      { name: 'data', mountPath: '/opt/local-path-provisioner' },
    ]));
  it('command is /bin/sh /script/setup behind the path guard', () =>
    expect(c.command).toEqual([
      '/bin/sh',
      '-c',
      PATH_GUARD_SCRIPT,
      'local-path-guard',
      'create',
      '/bin/sh',
      '/script/setup',
    ]));
  it('args are -p -s -m -a', () =>
    expect(c.args).toEqual(['-p', volDir, '-s', '134217728', '-m', 'Filesystem', '-a', 'create']));
  it('env has VOL_DIR, VOL_MODE, VOL_SIZE_BYTES, VOL_USER, VOL_GROUP, VOL_PERM, then VOL_BASE (the mounted directory)', () =>
    expect(c.env).toEqual([
      { name: 'VOL_DIR', value: volDir },
      { name: 'VOL_MODE', value: 'Filesystem' },
      { name: 'VOL_SIZE_BYTES', value: '134217728' },
      { name: 'VOL_USER', value: '1000' },
      { name: 'VOL_GROUP', value: '2000' },
      { name: 'VOL_PERM', value: '0750' },
      { name: 'VOL_BASE', value: '/opt/local-path-provisioner' },
    ]));
  it("does not mount the service account token (upstream gives helper pods the provisioner's own)", () =>
    expect(spec.automountServiceAccountToken).toBe(false));
  it('keeps image and pull policy from the template', () => {
    expect(c.name).toBe('helper-pod');
    expect(c.image).toBe('docker.io/library/busybox');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
  });
  it('does not modify the template', () => {
    expect(template).toEqual(loadHelperPodTemplate(DEFAULT_TEMPLATE, false));
  });
});

describe('buildHelperPod — delete', () => {
  const pod = buildHelperPod({ ...base, action: 'delete', sizeBytes: 5n, volumeMode: 'Block' });
  const c = pod.spec!.containers[0]!;
  it('is named for delete and runs teardown', () => {
    expect(pod.metadata?.name).toBe(`helper-pod-delete-${PV}`);
    expect(c.command).toEqual(guardedCommand('delete', ['/bin/sh', '/script/teardown']));
    expect(c.args?.slice(2)).toEqual(['-s', '5', '-m', 'Block', '-a', 'delete']);
  });
  it('has empty VOL_USER, VOL_GROUP, VOL_PERM', () => {
    expect(c.env?.slice(3, 6)).toEqual([
      { name: 'VOL_USER', value: '' },
      { name: 'VOL_GROUP', value: '' },
      { name: 'VOL_PERM', value: '' },
    ]);
  });
});

describe('buildHelperPod — variations', () => {
  it('always has VOL_USER/GROUP/PERM, empty when unset', () => {
    const env = buildHelperPod({ ...base, user: undefined, group: undefined, perm: undefined }).spec!.containers[0]!
      .env!;
    expect(env.map((e) => [e.name, e.value]).slice(3, 6)).toEqual([
      ['VOL_USER', ''],
      ['VOL_GROUP', ''],
      ['VOL_PERM', ''],
    ]);
  });

  it('uses setupCommand and drops setup from the script volume', () => {
    const pod = buildHelperPod({ ...base, setupCommand: '/usr/local/bin/setup' });
    expect(pod.spec!.containers[0]!.command).toEqual(['/usr/local/bin/setup']);
    expect(pod.spec!.volumes?.[1]?.configMap?.items).toEqual([{ key: 'teardown', path: 'teardown' }]);
  });

  it('has no script volume or mount when both commands are overridden', () => {
    const pod = buildHelperPod({ ...base, action: 'delete', setupCommand: 's', teardownCommand: 't' });
    expect(pod.spec!.containers[0]!.command).toEqual(['t']);
    expect(pod.spec!.volumes?.map((v) => v.name)).toEqual(['data']);
    expect(pod.spec!.containers[0]!.volumeMounts?.map((m) => m.name)).toEqual(['data']);
  });

  it('adds the disk-pressure toleration only when the template has no list', () => {
    const bare = loadHelperPodTemplate(
      'metadata: {name: h}\nspec:\n  containers:\n  - name: helper-pod\n    image: b\n',
      false,
    );
    expect(buildHelperPod({ ...base, template: bare }).spec!.tolerations).toEqual([
      { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    const empty = loadHelperPodTemplate(
      'metadata: {name: h}\nspec:\n  tolerations: []\n  containers:\n  - name: helper-pod\n    image: b\n',
      false,
    );
    expect(buildHelperPod({ ...base, template: empty }).spec!.tolerations).toEqual([]);
  });

  it('overwrites the template namespace and truncates the name to 128 characters', () => {
    const t: V1Pod = { ...template, metadata: { name: 'x'.repeat(120), namespace: 'elsewhere' } };
    const pod = buildHelperPod({ ...base, template: t });
    expect(pod.metadata?.namespace).toBe('local-path-storage');
    expect(pod.metadata?.name).toBe(`${'x'.repeat(120)}-create-${PV}`.slice(0, 128));
    expect(pod.metadata?.name).toHaveLength(128);
  });

  it('keeps a template nodeName (unsafe mode) and leaves nodeName unset in shared mode without a node', () => {
    const t: V1Pod = { ...template, spec: { ...template.spec!, nodeName: 'pinned' } };
    expect(buildHelperPod({ ...base, template: t }).spec!.nodeName).toBe('pinned');
    expect(buildHelperPod({ ...base, shared: true, node: '' }).spec!.nodeName).toBeUndefined();
  });

  it('mounts only the immediate parent of a multi-level folder', () => {
    const pod = buildHelperPod({ ...base, path: '/opt/lpp/ns/name' });
    expect(pod.spec!.volumes?.[0]?.hostPath?.path).toBe('/opt/lpp/ns');
    expect(pod.spec!.containers[0]!.env?.[0]).toEqual({ name: 'VOL_DIR', value: '/opt/lpp/ns/name' });
  });

  it('mounts the base path instead when given, so that no component below it is resolved by the kubelet', () => {
    const pod = buildHelperPod({ ...base, path: '/opt/lpp/ns/name/sub', basePath: '/opt/lpp/' });
    expect(pod.spec!.volumes?.[0]).toEqual({ name: 'data', hostPath: { path: '/opt/lpp', type: 'DirectoryOrCreate' } });
    expect(pod.spec!.containers[0]!.volumeMounts).toContainEqual({ name: 'data', mountPath: '/opt/lpp' });
    const env = Object.fromEntries(pod.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ VOL_DIR: '/opt/lpp/ns/name/sub', VOL_BASE: '/opt/lpp' });
    expect(() => buildHelperPod({ ...base, path: '/opt/lpp', basePath: '/opt/lpp' })).toThrow(
      'is not inside the base path',
    );
    expect(() => buildHelperPod({ ...base, path: '/opt/other/x', basePath: '/opt/lpp' })).toThrow(
      'is not inside the base path',
    );
  });

  it("adds labels and annotations to the template's, and keeps automountServiceAccountToken when the template sets it", () => {
    const t: V1Pod = {
      ...template,
      metadata: { ...template.metadata, labels: { app: 'x' } },
      spec: { ...template.spec!, automountServiceAccountToken: true },
    };
    const pod = buildHelperPod({ ...base, template: t, labels: { op: 'create' }, annotations: { note: 'n' } });
    expect(pod.metadata?.labels).toEqual({ app: 'x', op: 'create' });
    expect(pod.metadata?.annotations).toEqual({ note: 'n' });
    expect(pod.spec!.automountServiceAccountToken).toBe(true);
  });

  it('cleans the path', () => {
    const pod = buildHelperPod({ ...base, path: '/opt//lpp/./x/' });
    expect(pod.spec!.containers[0]!.env?.[0]?.value).toBe('/opt/lpp/x');
  });

  it('keeps a template data mount (unsafe mode) and computes VOL_DIR from it', () => {
    const t = loadHelperPodTemplate(
      'metadata: {name: h}\nspec:\n  containers:\n  - name: helper-pod\n    image: b\n    volumeMounts:\n    - name: data\n      mountPath: /mnt/data/\n',
      true,
    );
    const pod = buildHelperPod({ ...base, template: t, path: '/opt/lpp/vol' });
    const c = pod.spec!.containers[0]!;
    expect(c.volumeMounts).toEqual([
      { name: 'data', mountPath: '/mnt/data/' },
      { name: 'script', mountPath: '/script' },
    ]);
    expect(c.env?.[0]).toEqual({ name: 'VOL_DIR', value: '/mnt/data/vol' });
    expect(pod.spec!.volumes?.[0]?.hostPath?.path).toBe('/opt/lpp');
  });

  it.each([
    [{ pvName: '' }, 'invalid empty name or path or node'],
    [{ path: '' }, 'invalid empty name or path or node'],
    [{ node: '' }, 'invalid empty name or path or node'],
    [{ path: 'relative/dir' }, 'volume path relative/dir is not absolute'],
    [{ path: '/x' }, 'invalid path create for /x: cannot find parent dir or volume dir or parent dir is relative'],
    [{ path: '/' }, 'invalid path create for /: cannot find parent dir or volume dir or parent dir is relative'],
  ])('rejects %j', (override, message) => {
    const inputs = { ...base, ...override };
    expect(() => buildHelperPod(inputs)).toThrow(HelperPodError);
    expect(() => buildHelperPod(inputs)).toThrow(`failed to create volume ${inputs.pvName}: ${message}`);
  });

  it('accepts an empty node in shared mode', () => {
    expect(() => buildHelperPod({ ...base, shared: true, node: '' })).not.toThrow();
  });
});
