import { describe, expect, it } from 'vitest';
import { applyDefaults, defaultsForCreate, defaultsForUpdate, podQOSClass } from '../../src/api/defaults.js';
import type { KubeObject } from '../../src/api/objects.js';
import { resourceByKey } from '../../src/api/resources.js';

const r = (key: string) => resourceByKey(key);

function defaulted(key: string, obj: KubeObject): KubeObject {
  applyDefaults(r(key), obj);
  return obj;
}

const pod = (spec: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'p', namespace: 'default' },
  spec,
  status: {},
});

describe('PersistentVolumeClaim defaults', () => {
  it('sets volumeMode Filesystem and phase Pending on a new claim', () => {
    const pvc = defaulted('persistentvolumeclaims', {
      metadata: { name: 'c', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: {},
    });
    expect(pvc.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      volumeMode: 'Filesystem',
    });
    expect(pvc.status).toEqual({ phase: 'Pending' });
  });

  it('keeps an explicit Block volumeMode and a stored Bound phase', () => {
    const pvc = defaulted('persistentvolumeclaims', {
      metadata: { name: 'c' },
      spec: { volumeMode: 'Block' },
      status: { phase: 'Bound' },
    });
    expect(pvc.spec).toMatchObject({ volumeMode: 'Block' });
    expect(pvc.status).toEqual({ phase: 'Bound' });
  });
  it('serves the times a condition left out as null, as Go serialises a zero metav1.Time', () => {
    const pvc = defaulted('persistentvolumeclaims', {
      metadata: { name: 'c' },
      spec: {},
      status: { conditions: [{ type: 'Resizing', status: 'True' }] },
    });
    expect(pvc.status).toEqual({
      phase: 'Pending',
      conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: null }],
    });
  });

  it('names a data source in both dataSource and dataSourceRef on create, apiGroup null when not given', () => {
    const pvc: KubeObject = {
      metadata: { name: 'c' },
      spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } },
      status: {},
    };
    defaultsForCreate(r('persistentvolumeclaims'), pvc, { storageProtection: false });
    expect(pvc.spec).toMatchObject({
      dataSource: { apiGroup: null, kind: 'PersistentVolumeClaim', name: 'src' },
      dataSourceRef: { apiGroup: null, kind: 'PersistentVolumeClaim', name: 'src' },
    });
    const fromRef: KubeObject = {
      metadata: { name: 'c' },
      spec: { dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' } },
      status: {},
    };
    defaultsForCreate(r('persistentvolumeclaims'), fromRef, { storageProtection: false });
    expect((fromRef.spec as Record<string, unknown>).dataSource).toEqual({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: 's',
    });
  });
});

describe('PersistentVolume defaults', () => {
  it('sets reclaim policy Retain, volumeMode Filesystem, hostPath type "" and phase Pending', () => {
    const pv = defaulted('persistentvolumes', {
      metadata: { name: 'v' },
      spec: { hostPath: { path: '/data' } },
      status: {},
    });
    expect(pv.spec).toEqual({
      hostPath: { path: '/data', type: '' },
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
    });
    expect(pv.status).toEqual({ phase: 'Pending' });
  });

  it('keeps an explicit Delete reclaim policy', () => {
    const pv = defaulted('persistentvolumes', {
      metadata: { name: 'v' },
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
    });
    expect(pv.spec).toMatchObject({ persistentVolumeReclaimPolicy: 'Delete' });
  });
});

describe('StorageClass defaults', () => {
  it('sets reclaimPolicy Delete and volumeBindingMode Immediate', () => {
    const sc = defaulted('storage.k8s.io/storageclasses', { metadata: { name: 's' }, provisioner: 'example.com/p' });
    expect(sc).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
  });

  it('keeps explicit Retain and WaitForFirstConsumer', () => {
    const sc = defaulted('storage.k8s.io/storageclasses', {
      metadata: { name: 's' },
      provisioner: 'p',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    expect(sc).toMatchObject({ reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' });
  });
});

describe('Pod defaults', () => {
  it('fills the pod spec, container and status defaults the server returns for a minimal pod', () => {
    const p = defaulted(
      'pods',
      pod({ containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] }),
    );
    expect(p.spec).toEqual({
      containers: [
        {
          name: 'app',
          image: 'nginx:1.27',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          resources: {},
        },
      ],
      enableServiceLinks: true,
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      priority: 0,
      preemptionPolicy: 'PreemptLowerPriority',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    });
    expect(p.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['registry.example.com:5000/team/app', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000', 'IfNotPresent'],
  ])('defaults imagePullPolicy of %s to %s', (image, policy) => {
    const p = defaulted('pods', pod({ containers: [{ name: 'c', image }] }));
    expect((p.spec as { containers: { imagePullPolicy: string }[] }).containers[0]?.imagePullPolicy).toBe(policy);
  });

  it('keeps an explicit imagePullPolicy and service account', () => {
    const p = defaulted(
      'pods',
      pod({ serviceAccountName: 'builder', containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'Never' }] }),
    );
    expect(p.spec).toMatchObject({
      serviceAccountName: 'builder',
      serviceAccount: 'builder',
      containers: [{ imagePullPolicy: 'Never' }],
    });
  });

  it('takes the service account from the deprecated serviceAccount field', () => {
    const p = defaulted('pods', pod({ serviceAccount: 'legacy', containers: [{ name: 'c', image: 'nginx' }] }));
    expect(p.spec).toMatchObject({ serviceAccountName: 'legacy', serviceAccount: 'legacy' });
  });

  it('defaults volume sources: emptyDir for none, hostPath type, modes 420 and token expiry', () => {
    const p = defaulted(
      'pods',
      pod({
        containers: [{ name: 'c', image: 'nginx' }],
        volumes: [
          { name: 'scratch' },
          { name: 'host', hostPath: { path: '/var/log' } },
          { name: 'cfg', configMap: { name: 'settings' } },
          { name: 'creds', secret: { secretName: 's' } },
          { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
        ],
      }),
    );
    expect((p.spec as { volumes: unknown[] }).volumes).toEqual([
      { name: 'scratch', emptyDir: {} },
      { name: 'host', hostPath: { path: '/var/log', type: '' } },
      { name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } },
      { name: 'creds', secret: { secretName: 's', defaultMode: 420 } },
      {
        name: 'token',
        projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }], defaultMode: 420 },
      },
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    ]);
  });

  it('copies limits into missing requests and classifies the pod Guaranteed', () => {
    const p = defaulted(
      'pods',
      pod({ containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m', memory: '128Mi' } } }] }),
    );
    expect(p.spec).toMatchObject({
      containers: [
        { resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '500m', memory: '128Mi' } } },
      ],
    });
    expect(p.status).toMatchObject({ qosClass: 'Guaranteed' });
  });

  it('classifies requests without matching limits as Burstable', () => {
    expect(podQOSClass({ containers: [{ resources: { requests: { memory: '64Mi' } } }] })).toBe('Burstable');
    expect(
      podQOSClass({ containers: [{ resources: { requests: { cpu: '1' }, limits: { cpu: '1000m', memory: '1Gi' } } }] }),
    ).toBe('Burstable');
    expect(podQOSClass({ containers: [{ resources: { requests: { 'ephemeral-storage': '1Gi' } } }] })).toBe(
      'BestEffort',
    );
  });

  it('does not add default tolerations a pod already has', () => {
    const p = defaulted(
      'pods',
      pod({ containers: [{ name: 'c', image: 'nginx' }], tolerations: [{ operator: 'Exists' }] }),
    );
    expect((p.spec as { tolerations: unknown[] }).tolerations).toEqual([{ operator: 'Exists' }]);
  });

  it('sets hostPort to containerPort for host-network pods', () => {
    const p = defaulted(
      'pods',
      pod({ hostNetwork: true, containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 8080 }] }] }),
    );
    expect(p.spec).toMatchObject({
      containers: [{ ports: [{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }] }],
    });
  });
});

describe('other kinds', () => {
  it('gives a namespace phase Active and the kubernetes.io/metadata.name label', () => {
    const ns = defaulted('namespaces', { metadata: { name: 'team-a', labels: { owner: 'me' } }, status: {} });
    expect(ns.metadata.labels).toEqual({ owner: 'me', 'kubernetes.io/metadata.name': 'team-a' });
    expect(ns.status).toEqual({ phase: 'Active' });
  });

  it('types a secret Opaque and folds stringData into base64 data', () => {
    const s = defaulted('secrets', {
      metadata: { name: 's' },
      data: { a: 'eA==' },
      stringData: { b: 'hello', a: 'y' },
    });
    expect(s).toEqual({ metadata: { name: 's' }, type: 'Opaque', data: { a: 'eQ==', b: 'aGVsbG8=' } });
  });

  it('serializes the zero-valued fields of a core/v1 Event as the server does', () => {
    const e = defaulted('events', { metadata: { name: 'e', namespace: 'default' }, reason: 'Started' });
    expect(e).toEqual({
      metadata: { name: 'e', namespace: 'default' },
      reason: 'Started',
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    });
  });

  it('gives a Lease an empty spec and leaves a ConfigMap alone', () => {
    expect(defaulted('coordination.k8s.io/leases', { metadata: { name: 'l' } }).spec).toEqual({});
    expect(defaulted('configmaps', { metadata: { name: 'c' } })).toEqual({ metadata: { name: 'c' } });
  });

  it('defaults node allocatable to capacity', () => {
    const n = defaulted('nodes', { metadata: { name: 'n' }, status: { capacity: { cpu: '4' } } });
    expect(n.status).toEqual({ capacity: { cpu: '4' }, allocatable: { cpu: '4' } });
  });
});

describe('defaultsForCreate', () => {
  const now = new Date('2025-01-02T03:04:05.678Z');

  it('adds the kubernetes finalizer to a new namespace', () => {
    const ns: KubeObject = { metadata: { name: 'n' }, status: {} };
    defaultsForCreate(r('namespaces'), ns);
    expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ns.status).toEqual({ phase: 'Active' });
  });

  it('stamps a new PV Pending with a transition time and the pv-protection finalizer', () => {
    const pv: KubeObject = { metadata: { name: 'v' }, spec: { hostPath: { path: '/d' } }, status: {} };
    defaultsForCreate(r('persistentvolumes'), pv, { now });
    expect(pv.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: '2025-01-02T03:04:05Z' });
    expect(pv.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('gives a new PVC the default StorageClass and the pvc-protection finalizer', () => {
    const pvc: KubeObject = { metadata: { name: 'c', finalizers: ['example.com/f'] }, spec: {}, status: {} };
    defaultsForCreate(r('persistentvolumeclaims'), pvc, { defaultStorageClass: 'standard' });
    expect(pvc.spec).toMatchObject({ storageClassName: 'standard' });
    expect(pvc.metadata.finalizers).toEqual(['example.com/f', 'kubernetes.io/pvc-protection']);
  });

  it('leaves an explicit empty storageClassName alone and can skip the protection finalizer', () => {
    const pvc: KubeObject = { metadata: { name: 'c' }, spec: { storageClassName: '' }, status: {} };
    defaultsForCreate(r('persistentvolumeclaims'), pvc, { defaultStorageClass: 'standard', storageProtection: false });
    expect(pvc.spec).toMatchObject({ storageClassName: '' });
    expect(pvc.metadata.finalizers).toBeUndefined();
  });

  it('marks a gated pod not scheduled and mounts the service-account token when asked', () => {
    const p = pod({ schedulingGates: [{ name: 'example.com/wait' }], containers: [{ name: 'c', image: 'nginx' }] });
    defaultsForCreate(r('pods'), p, { serviceAccountTokenVolume: 'kube-api-access-abcde' });
    expect(p.status).toEqual({
      phase: 'Pending',
      qosClass: 'BestEffort',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: null,
          reason: 'SchedulingGated',
          message: 'Scheduling is blocked due to non-empty scheduling gates',
        },
      ],
    });
    expect(p.spec).toMatchObject({
      containers: [
        {
          volumeMounts: [
            {
              name: 'kube-api-access-abcde',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
        },
      ],
      volumes: [{ name: 'kube-api-access-abcde', projected: { defaultMode: 420 } }],
    });
  });
});

describe('defaultsForUpdate', () => {
  it('keeps the stored namespace finalizers on a main-resource update', () => {
    const ns: KubeObject = { metadata: { name: 'n' }, spec: { finalizers: [] }, status: { phase: 'Active' } };
    defaultsForUpdate(r('namespaces'), ns, { metadata: { name: 'n' }, spec: { finalizers: ['kubernetes'] } });
    expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
  });

  it('stamps lastPhaseTransitionTime when a PV status update changes the phase', () => {
    const old: KubeObject = {
      metadata: { name: 'v' },
      status: { phase: 'Pending', lastPhaseTransitionTime: '2025-01-01T00:00:00Z' },
    };
    const changed: KubeObject = { metadata: { name: 'v' }, spec: {}, status: { phase: 'Bound' } };
    defaultsForUpdate(r('persistentvolumes'), changed, old, 'status', { now: new Date('2025-02-01T00:00:00Z') });
    expect(changed.status).toEqual({ phase: 'Bound', lastPhaseTransitionTime: '2025-02-01T00:00:00Z' });
    const same: KubeObject = { metadata: { name: 'v' }, spec: {}, status: { phase: 'Pending' } };
    defaultsForUpdate(r('persistentvolumes'), same, old, 'status');
    expect(same.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: '2025-01-01T00:00:00Z' });
  });

  it('backfills a pods/status update without qosClass from the stored pod', () => {
    const old = pod({ containers: [{ name: 'c', image: 'nginx' }] });
    old.status = { phase: 'Running', qosClass: 'Burstable' };
    const next = pod({ containers: [{ name: 'c', image: 'nginx' }] });
    next.status = { phase: 'Running' };
    defaultsForUpdate(r('pods'), next, old, 'status');
    expect(next.status).toEqual({ phase: 'Running', qosClass: 'Burstable' });
  });
});
