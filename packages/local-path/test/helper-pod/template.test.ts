import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE } from './fixtures.js';
import {
  loadHelperPodTemplate,
  HelperPodTemplateError,
  FLAG_ALLOW_UNSAFE_HELPER_POD_TEMPLATE,
} from '../../src/executor/helper-pod/template.js';

function pod(spec: string, container = ''): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
${spec}
  containers:
  - name: helper-pod
    image: busybox
${container}`;
}

describe('loadHelperPodTemplate', () => {
  it('accepts the default template', () => {
    const p = loadHelperPodTemplate(DEFAULT_TEMPLATE, false);
    expect(p.metadata?.name).toBe('helper-pod');
    expect(p.spec?.priorityClassName).toBe('system-node-critical');
    expect(p.spec?.containers[0]?.image).toBe('docker.io/library/busybox');
    expect(p.spec?.tolerations).toEqual([
      { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('reports YAML errors with upstream message', () => {
    const yaml = 'spec: [unclosed';
    expect(() => loadHelperPodTemplate(yaml, false)).toThrow(
      `invalid YAMLToJSON the helper pod with helperPodYaml: ${yaml}`,
    );
  });

  it.each(['- a list', 'spec: 3', 'spec:\n  containers: nope', 'spec:\n  containers:\n  - name: x\n    env: 1'])(
    'reports shape errors (%j)',
    (yaml) => {
      expect(() => loadHelperPodTemplate(yaml, true)).toThrow('invalid unmarshal the helper pod with helperPodJson: ');
    },
  );

  it.each(['', 'kind: Pod', 'spec:\n  containers: []'])('requires a container even in unsafe mode (%j)', (yaml) => {
    expect(() => loadHelperPodTemplate(yaml, true)).toThrow('helper pod template does not specify any container');
  });

  const rejected: [string, string, string][] = [
    ['privileged', pod('', '    securityContext:\n      privileged: true'), 'set privileged: true'],
    ['custom volumes', pod('  volumes:\n  - name: root\n    hostPath:\n      path: /'), 'define custom volumes'],
    ['initContainers', pod('  initContainers:\n  - name: init\n    image: busybox'), 'define initContainers'],
    ['hostNetwork', pod('  hostNetwork: true'), 'enable host namespaces'],
    ['hostPID', pod('  hostPID: true'), 'enable host namespaces'],
    ['hostIPC', pod('  hostIPC: true'), 'enable host namespaces'],
    ['nodeName', pod('  nodeName: node-1'), 'set spec.nodeName'],
    ['serviceAccountName', pod('  serviceAccountName: admin'), 'set spec.serviceAccountName'],
    ['pod runAsUser 0', pod('  securityContext:\n    runAsUser: 0'), 'set pod runAsUser to 0 (root)'],
    ['pod runAsGroup 0', pod('  securityContext:\n    runAsGroup: 0'), 'set pod runAsGroup to 0 (root)'],
    [
      'sysctls',
      pod('  securityContext:\n    sysctls:\n    - name: net.core.somaxconn\n      value: "1024"'),
      'define sysctls',
    ],
    [
      'capabilities',
      pod('', '    securityContext:\n      capabilities:\n        add: ["SYS_ADMIN"]'),
      'add capabilities',
    ],
    [
      'allowPrivilegeEscalation',
      pod('', '    securityContext:\n      allowPrivilegeEscalation: true'),
      'set allowPrivilegeEscalation: true',
    ],
    [
      'ephemeralContainers',
      pod('  ephemeralContainers:\n  - name: debug\n    image: busybox'),
      'define ephemeralContainers',
    ],
    [
      'volumeMounts',
      pod('', '    volumeMounts:\n    - name: data\n      mountPath: /host'),
      'define custom volumeMounts',
    ],
    ['envFrom', pod('', '    envFrom:\n    - secretRef:\n        name: s'), 'define envFrom'],
    [
      'env.valueFrom',
      pod(
        '',
        '    env:\n    - name: PLAIN\n      value: ok\n    - name: STOLEN\n      valueFrom:\n        secretKeyRef:\n          name: s\n          key: k',
      ),
      'define env.valueFrom (env "STOLEN")',
    ],
    [
      'lifecycle',
      pod('', '    lifecycle:\n      postStart:\n        exec:\n          command: ["sh"]'),
      'define container lifecycle hooks',
    ],
    [
      'livenessProbe',
      pod('', '    livenessProbe:\n      exec:\n        command: ["true"]'),
      'define container livenessProbe',
    ],
    [
      'readinessProbe',
      pod('', '    readinessProbe:\n      exec:\n        command: ["true"]'),
      'define container readinessProbe',
    ],
    [
      'startupProbe',
      pod('', '    startupProbe:\n      exec:\n        command: ["true"]'),
      'define container startupProbe',
    ],
  ];

  it.each(rejected)('rejects %s', (_name, yaml, what) => {
    let result: unknown;
    expect(() => {
      result = loadHelperPodTemplate(yaml, false);
    }).toThrow(
      new HelperPodTemplateError(
        `helper pod template must not ${what} unless allow-unsafe-helper-pod-template is enabled`,
      ),
    );
    expect(result).toBeUndefined();
    expect(loadHelperPodTemplate(yaml, true).spec?.containers).toHaveLength(1);
  });

  it('rejects two containers with its own message', () => {
    const yaml = pod('', '  - name: sidecar\n    image: busybox');
    expect(() => loadHelperPodTemplate(yaml, false)).toThrow(
      new HelperPodTemplateError('helper pod template must specify exactly one container'),
    );
    expect(loadHelperPodTemplate(yaml, true).spec?.containers).toHaveLength(2);
  });

  it('checks in upstream order (first failure wins)', () => {
    const yaml = pod(
      '  volumes:\n  - name: v\n    emptyDir: {}\n  nodeName: n\n  initContainers:\n  - name: i\n    image: b',
    );
    expect(() => loadHelperPodTemplate(yaml, false)).toThrow('must not define initContainers');
  });

  it.each([
    [
      'pod hardening',
      pod(
        '  securityContext:\n    runAsNonRoot: true\n    runAsUser: 1000\n    fsGroup: 1000\n    seccompProfile:\n      type: RuntimeDefault',
      ),
    ],
    [
      'container hardening',
      pod(
        '',
        '    securityContext:\n      runAsNonRoot: true\n      readOnlyRootFilesystem: true\n      allowPrivilegeEscalation: false\n      privileged: false\n      capabilities:\n        drop: ["ALL"]',
      ),
    ],
    ['container runAsUser 0 (not checked upstream)', pod('', '    securityContext:\n      runAsUser: 0')],
    [
      'scheduling, resources, plain env, labels',
      `metadata:
  name: h
  labels: {a: b}
  annotations: {c: d}
spec:
  priorityClassName: p
  nodeSelector: {disk: ssd}
  tolerations: []
  hostNetwork: false
  containers:
  - name: helper-pod
    image: busybox
    imagePullPolicy: Always
    resources:
      limits: {cpu: 100m}
    env:
    - name: A
      value: b
`,
    ],
  ])('accepts %s', (_name, yaml) => {
    expect(() => loadHelperPodTemplate(yaml, false)).not.toThrow();
  });

  it('accepts a privileged template with hostPath / in unsafe mode', () => {
    const yaml = pod(
      '  volumes:\n  - name: root\n    hostPath:\n      path: /',
      '    securityContext:\n      privileged: true',
    );
    expect(() => loadHelperPodTemplate(yaml, false)).toThrow('must not define custom volumes');
    expect(loadHelperPodTemplate(yaml, true).spec?.volumes?.[0]?.hostPath?.path).toBe('/');
  });

  it('exports the flag name', () => {
    expect(FLAG_ALLOW_UNSAFE_HELPER_POD_TEMPLATE).toBe('allow-unsafe-helper-pod-template');
  });
});
