import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/objects.js';
import { resourceByKey, type ResourceType } from '../../src/api/resources.js';
import { formatTable } from '../../src/format/table-text.js';
import { humanDuration, toTable, type Table } from '../../src/server/table.js';

const NOW = new Date('2024-05-01T12:00:00Z');
const pods = resourceByKey('pods');
const pvs = resourceByKey('persistentvolumes');
const pvcs = resourceByKey('persistentvolumeclaims');
const classes = resourceByKey('storage.k8s.io/storageclasses');

/** The cells of the single row the object prints as, at NOW. */
function cells(r: ResourceType, obj: KubeObject): unknown[] {
  return toTable(r, [obj], { resourceVersion: '1', now: NOW }).rows[0]!.cells;
}

const boundPv: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: {
    name: 'pvc-5f0c1b2a',
    uid: '0b6e4a44-1f7c-4d7e-9a55-3f1f7c0b8e01',
    resourceVersion: '42',
    creationTimestamp: '2024-05-01T11:56:40Z',
    annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
    finalizers: ['kubernetes.io/pv-protection'],
  },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Delete',
    storageClassName: 'local-path',
    volumeMode: 'Filesystem',
    hostPath: { path: '/var/local-path-provisioner/pvc-5f0c1b2a_default_data', type: 'DirectoryOrCreate' },
    claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: 'c1' },
  },
  status: { phase: 'Bound', lastPhaseTransitionTime: '2024-05-01T11:56:41Z' },
};

const boundPvc: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name: 'data',
    namespace: 'default',
    uid: 'c1',
    resourceVersion: '43',
    creationTimestamp: '2024-05-01T11:56:40Z',
    annotations: {
      'pv.kubernetes.io/bind-completed': 'yes',
      'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
    },
    finalizers: ['kubernetes.io/pvc-protection'],
  },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '512Mi' } },
    storageClassName: 'local-path',
    volumeMode: 'Filesystem',
    volumeName: 'pvc-5f0c1b2a',
  },
  status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
};

const pendingPvc: KubeObject = {
  metadata: { name: 'pending', namespace: 'default', creationTimestamp: '2024-05-01T11:59:55Z' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'local-path' },
  status: { phase: 'Pending' },
};

describe('PersistentVolume printer', () => {
  it('prints a bound volume', () => {
    expect(cells(pvs, boundPv)).toEqual([
      'pvc-5f0c1b2a',
      '1Gi',
      'RWO',
      'Delete',
      'Bound',
      'default/data',
      'local-path',
      '<unset>',
      '',
      '3m20s',
      'Filesystem',
    ]);
  });

  it('orders and de-duplicates access modes, prefers the beta class annotation, shows Terminating', () => {
    const pv: KubeObject = {
      metadata: {
        name: 'old',
        creationTimestamp: '2024-05-01T11:00:00Z',
        deletionTimestamp: '2024-05-01T11:59:00Z',
        annotations: { 'volume.beta.kubernetes.io/storage-class': 'legacy' },
      },
      spec: {
        accessModes: ['ReadWriteOncePod', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce', 'ReadOnlyMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'ignored',
        volumeAttributesClassName: 'gold',
      },
      status: { phase: 'Released', reason: 'Failed' },
    };
    expect(cells(pvs, pv)).toEqual([
      'old',
      '0',
      'RWO,ROX,RWX,RWOP',
      'Retain',
      'Terminating',
      '',
      'legacy',
      'gold',
      'Failed',
      '60m',
      '<unset>',
    ]);
  });
});

describe('PersistentVolumeClaim printer', () => {
  it('prints a bound claim with the volume capacity, not the request', () => {
    expect(cells(pvcs, boundPvc)).toEqual([
      'data',
      'Bound',
      'pvc-5f0c1b2a',
      '1Gi',
      'RWO',
      'local-path',
      '<unset>',
      '3m20s',
      'Filesystem',
    ]);
  });

  it('leaves capacity and access modes empty until the claim names a volume', () => {
    expect(cells(pvcs, pendingPvc)).toEqual([
      'pending',
      'Pending',
      '',
      '',
      '',
      'local-path',
      '<unset>',
      '5s',
      '<unset>',
    ]);
  });

  it('shows Terminating for a claim being deleted', () => {
    const pvc = { ...boundPvc, metadata: { ...boundPvc.metadata, deletionTimestamp: '2024-05-01T11:59:59Z' } };
    expect(cells(pvcs, pvc)[1]).toBe('Terminating');
  });
});

describe('StorageClass printer', () => {
  it('marks the default class and prints the spelled-out fields', () => {
    const sc: KubeObject = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: {
        name: 'local-path',
        creationTimestamp: '2024-04-29T09:00:00Z',
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      },
      provisioner: 'rancher.io/local-path',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    };
    expect(cells(classes, sc)).toEqual([
      'local-path (default)',
      'rancher.io/local-path',
      'Delete',
      'WaitForFirstConsumer',
      false,
      '2d3h',
    ]);
  });

  it('defaults reclaim policy and binding mode, honours the beta annotation, ignores "false"', () => {
    const base = { provisioner: 'example.com/fast', allowVolumeExpansion: true };
    const beta: KubeObject = {
      ...base,
      metadata: { name: 'beta', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } },
    };
    const notDefault: KubeObject = {
      ...base,
      metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'false' } },
    };
    expect(cells(classes, beta)).toEqual([
      'beta (default)',
      'example.com/fast',
      'Delete',
      'Immediate',
      true,
      '<unknown>',
    ]);
    expect(cells(classes, notDefault)[0]).toBe('fast');
  });
});

describe('Pod printer', () => {
  const container = { name: 'main', image: 'busybox:1.36' };
  const pod = (status: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', creationTimestamp: '2024-05-01T09:00:00Z' },
    spec: { containers: [container], nodeName: 'node-1' },
    status,
    ...extra,
  });

  it('prints a Completed pod with the Completed row condition', () => {
    const completed = pod({
      phase: 'Succeeded',
      podIP: '10.244.0.7',
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted' }],
      containerStatuses: [
        {
          name: 'main',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2024-05-01T09:00:05Z' } },
        },
      ],
    });
    const row = toTable(pods, [completed], { resourceVersion: '1', now: NOW }).rows[0]!;
    expect(row.cells).toEqual(['p', '0/1', 'Completed', '0', '3h', '10.244.0.7', 'node-1', '<none>', '<none>']);
    expect(row.conditions).toEqual([
      { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
    ]);
  });

  it('prints Terminating for a running pod being deleted', () => {
    const running = pod(
      {
        phase: 'Running',
        podIPs: [{ ip: '10.244.0.8' }],
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'main', ready: true, restartCount: 0, state: { running: { startedAt: '2024-05-01T09:00:02Z' } } },
        ],
      },
      {
        metadata: {
          name: 'web',
          namespace: 'default',
          creationTimestamp: '2024-05-01T11:15:00Z',
          deletionTimestamp: '2024-05-01T11:59:30Z',
        },
      },
    );
    const row = toTable(pods, [running], { resourceVersion: '1', now: NOW }).rows[0]!;
    expect(row.cells.slice(0, 6)).toEqual(['web', '1/1', 'Terminating', '0', '45m', '10.244.0.8']);
    expect(row.conditions).toBeUndefined();
  });

  it('shows waiting and terminated container reasons, and restarts with the last restart age', () => {
    const crashing = pod({
      phase: 'Running',
      containerStatuses: [
        {
          name: 'main',
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m20s' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: '2024-05-01T11:59:15Z' } },
        },
      ],
    });
    expect(cells(pods, crashing).slice(0, 4)).toEqual(['p', '0/1', 'CrashLoopBackOff', '4 (45s ago)']);

    const creating = pod({
      phase: 'Pending',
      containerStatuses: [
        { name: 'main', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
      ],
    });
    expect(cells(pods, creating).slice(0, 6)).toEqual(['p', '0/1', 'ContainerCreating', '0', '3h', '<none>']);

    const failed = pod({
      phase: 'Failed',
      containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 1, reason: 'Error' } } }],
    });
    const row = toTable(pods, [failed], { resourceVersion: '1', now: NOW }).rows[0]!;
    expect(row.cells[2]).toBe('Error');
    expect(row.conditions?.[0]?.reason).toBe('Failed');

    const killed = pod({
      phase: 'Running',
      containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 137, signal: 9 } } }],
    });
    expect(cells(pods, killed)[2]).toBe('Signal:9');
  });

  it('shows init progress, the phase without statuses, NodeLost as Unknown, and readiness gates', () => {
    const initializing = pod(
      {
        phase: 'Pending',
        initContainerStatuses: [{ name: 'init', ready: false, restartCount: 0, state: { running: {} } }],
      },
      { spec: { initContainers: [{ name: 'init' }], containers: [container] } },
    );
    expect(cells(pods, initializing).slice(1, 3)).toEqual(['0/1', 'Init:0/1']);

    expect(cells(pods, pod({ phase: 'Pending' })).slice(1, 4)).toEqual(['0/1', 'Pending', '0']);

    const lost = pod(
      { phase: 'Running', reason: 'NodeLost' },
      { metadata: { name: 'p', deletionTimestamp: '2024-05-01T11:00:00Z' } },
    );
    expect(cells(pods, lost)[2]).toBe('Unknown');

    const gated = pod(
      { phase: 'Running', conditions: [{ type: 'example.com/ready', status: 'True' }] },
      {
        spec: {
          containers: [container],
          readinessGates: [{ conditionType: 'example.com/ready' }, { conditionType: 'example.com/other' }],
        },
      },
    );
    expect(cells(pods, gated)[8]).toBe('1/2');
  });
});

describe('other printers', () => {
  it('prints nodes with status, roles and the wide node info', () => {
    const node: KubeObject = {
      metadata: {
        name: 'node-1',
        creationTimestamp: '2024-04-01T12:00:00Z',
        labels: { 'node-role.kubernetes.io/control-plane': '' },
      },
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [{ type: 'InternalIP', address: '172.18.0.2' }],
        nodeInfo: { kubeletVersion: 'v1.31.0', osImage: 'Debian GNU/Linux 12 (bookworm)' },
      },
    };
    expect(cells(resourceByKey('nodes'), node)).toEqual([
      'node-1',
      'Ready,SchedulingDisabled',
      'control-plane',
      '30d',
      'v1.31.0',
      '172.18.0.2',
      '<none>',
      'Debian GNU/Linux 12 (bookworm)',
      '<unknown>',
      '<unknown>',
    ]);
  });

  it('prints core and events.k8s.io events alike', () => {
    const core: KubeObject = {
      metadata: { name: 'data.17c9', namespace: 'default' },
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'default' },
      type: 'Normal',
      reason: 'ProvisioningSucceeded',
      message: 'Successfully provisioned volume pvc-5f0c1b2a\n',
      source: { component: 'rancher.io/local-path' },
      firstTimestamp: '2024-05-01T11:56:41Z',
      lastTimestamp: '2024-05-01T11:58:00Z',
      count: 2,
    };
    const expected = [
      '2m',
      'Normal',
      'ProvisioningSucceeded',
      'persistentvolumeclaim/data',
      '',
      'rancher.io/local-path',
      'Successfully provisioned volume pvc-5f0c1b2a',
      '3m19s',
      2,
      'data.17c9',
    ];
    expect(cells(resourceByKey('events'), core)).toEqual(expected);
    const modern: KubeObject = {
      metadata: { name: 'data.17c9', namespace: 'default' },
      regarding: { kind: 'PersistentVolumeClaim', name: 'data' },
      type: 'Normal',
      reason: 'ProvisioningSucceeded',
      note: 'Successfully provisioned volume pvc-5f0c1b2a',
      reportingController: 'rancher.io/local-path',
      reportingInstance: 'local-path-provisioner-0',
      eventTime: '2024-05-01T11:59:57.900001Z',
    };
    expect(cells(resourceByKey('events.k8s.io/events'), modern)).toEqual([
      '2s',
      'Normal',
      'ProvisioningSucceeded',
      'persistentvolumeclaim/data',
      '',
      'rancher.io/local-path, local-path-provisioner-0',
      'Successfully provisioned volume pvc-5f0c1b2a',
      '2s',
      1,
      'data.17c9',
    ]);
  });

  it('counts data keys, secrets, and prints the lease holder', () => {
    const meta = { name: 'x', creationTimestamp: '2024-05-01T11:59:00Z' };
    expect(
      cells(resourceByKey('configmaps'), { metadata: meta, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }),
    ).toEqual(['x', 3, '60s']);
    expect(cells(resourceByKey('secrets'), { metadata: meta, type: 'Opaque', data: { a: 'MQ==' } })).toEqual([
      'x',
      'Opaque',
      1,
      '60s',
    ]);
    expect(cells(resourceByKey('serviceaccounts'), { metadata: meta, secrets: [{ name: 's' }] })).toEqual([
      'x',
      1,
      '60s',
    ]);
    expect(cells(resourceByKey('namespaces'), { metadata: meta, status: { phase: 'Active' } })).toEqual([
      'x',
      'Active',
      '60s',
    ]);
    expect(
      cells(resourceByKey('coordination.k8s.io/leases'), { metadata: meta, spec: { holderIdentity: 'node-1' } }),
    ).toEqual(['x', 'node-1', '60s']);
  });

  it('falls back to the default Name / Created At columns for types without a printer', () => {
    const widgets: ResourceType = {
      ...pods,
      group: 'example.com',
      plural: 'widgets',
      singular: 'widget',
      kind: 'Widget',
    };
    const table = toTable(
      widgets,
      [{ metadata: { name: 'w', creationTimestamp: '2024-05-01T11:00:00Z' } }, { metadata: { name: 'z' } }],
      {
        resourceVersion: '9',
        now: NOW,
      },
    );
    expect(table.columnDefinitions.map((c) => [c.name, c.type, c.format])).toEqual([
      ['Name', 'string', 'name'],
      ['Created At', 'date', ''],
    ]);
    expect(table.rows.map((r) => r.cells)).toEqual([
      ['w', '2024-05-01T11:00:00Z'],
      ['z', '0001-01-01T00:00:00Z'],
    ]);
  });
});

describe('the Table envelope', () => {
  it('carries list metadata, every column with its priority, and PartialObjectMetadata rows by default', () => {
    const table = toTable(pvcs, [boundPvc], { resourceVersion: '43', continueToken: 'abc', now: NOW });
    expect(table.kind).toBe('Table');
    expect(table.apiVersion).toBe('meta.k8s.io/v1');
    expect(table.metadata).toEqual({ resourceVersion: '43', continue: 'abc' });
    expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Status', 0],
      ['Volume', 0],
      ['Capacity', 0],
      ['Access Modes', 0],
      ['StorageClass', 0],
      ['VolumeAttributesClass', 0],
      ['Age', 0],
      ['VolumeMode', 1],
    ]);
    expect(table.columnDefinitions[0]).toMatchObject({ type: 'string', format: 'name' });
    expect(table.rows[0]!.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: boundPvc.metadata,
    });
  });

  it('includes the full object or nothing as asked, and leaves empty metadata out', () => {
    const pvc = { metadata: pendingPvc.metadata, spec: pendingPvc.spec };
    const full = toTable(pvcs, [pvc], { includeObject: 'Object', resourceVersion: '' });
    expect(full.metadata).toEqual({});
    expect(full.rows[0]!.object).toEqual({ kind: 'PersistentVolumeClaim', apiVersion: 'v1', ...pvc });
    const none = toTable(pvcs, [pvc], { includeObject: 'None', resourceVersion: '5' });
    expect(none.rows[0]).not.toHaveProperty('object');
    expect(JSON.parse(JSON.stringify(none))).toEqual(none);
  });

  it('lists the pod columns with the wide ones at priority 1', () => {
    const table = toTable(pods, [], { resourceVersion: '1' });
    expect(table.rows).toEqual([]);
    expect(table.columnDefinitions.map((c) => `${c.name}:${c.priority}`)).toEqual([
      'Name:0',
      'Ready:0',
      'Status:0',
      'Restarts:0',
      'Age:0',
      'IP:1',
      'Node:1',
      'Nominated Node:1',
      'Readiness Gates:1',
    ]);
  });
});

describe('humanDuration', () => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  const d = 24 * h;
  const y = 365 * d;
  it.each([
    [-2 * s, '<invalid>'],
    [-1999, '0s'],
    [-1, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [2 * m - 1, '119s'],
    [2 * m, '2m'],
    [3 * m + 20 * s, '3m20s'],
    [10 * m - 1, '9m59s'],
    [10 * m, '10m'],
    [3 * h - 1, '179m'],
    [3 * h, '3h'],
    [3 * h + 5 * m, '3h5m'],
    [8 * h - 1, '7h59m'],
    [8 * h, '8h'],
    [48 * h - 1, '47h'],
    [48 * h, '2d'],
    [2 * d + 3 * h, '2d3h'],
    [8 * d - 1, '7d23h'],
    [8 * d, '8d'],
    [2 * y - 1, '729d'],
    [2 * y, '2y'],
    [2 * y + 47 * d, '2y47d'],
    [8 * y - 1, '7y364d'],
    [8 * y, '8y'],
    [20 * y + 100 * d, '20y'],
  ])('%i ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('reads <unknown> for a missing creationTimestamp and cuts stored times to seconds', () => {
    expect(cells(resourceByKey('namespaces'), { metadata: { name: 'n' } })[2]).toBe('<unknown>');
    // 11:58:00.999 is stored as 11:58:00, so this is 120s old: "2m", not "119s".
    expect(
      cells(resourceByKey('namespaces'), { metadata: { name: 'n', creationTimestamp: '2024-05-01T11:58:00.999Z' } })[2],
    ).toBe('2m');
  });
});

describe('formatTable', () => {
  const table = (): Table => toTable(pvcs, [boundPvc, pendingPvc], { resourceVersion: '43', now: NOW });

  it('prints like kubectl get', () => {
    expect(formatTable(table())).toBe(
      [
        'NAME      STATUS    VOLUME         CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE',
        'data      Bound     pvc-5f0c1b2a   1Gi        RWO            local-path     <unset>                 3m20s',
        'pending   Pending                                            local-path     <unset>                 5s',
        '',
      ].join('\n'),
    );
  });

  it('adds the wide columns and a NAMESPACE column when asked', () => {
    expect(formatTable(table(), { wide: true, namespaceColumn: true })).toBe(
      [
        'NAMESPACE   NAME      STATUS    VOLUME         CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE     VOLUMEMODE',
        'default     data      Bound     pvc-5f0c1b2a   1Gi        RWO            local-path     <unset>                 3m20s   Filesystem',
        'default     pending   Pending                                            local-path     <unset>                 5s      <unset>',
        '',
      ].join('\n'),
    );
  });

  it('keeps columns at least six wide, cuts cells at line breaks, prints non-strings, and prints nothing without rows', () => {
    const small = {
      columnDefinitions: [
        { name: 'A', priority: 0 },
        { name: 'Hidden', priority: 1 },
        { name: 'B', priority: 0 },
        { name: 'C', priority: 0 },
      ],
      rows: [{ cells: ['x', 'h', 'two\nlines', 3] }, { cells: ['y', 'h', null, true] }, { cells: ['z', 'h', '', ''] }],
    };
    expect(formatTable(small)).toBe(
      ['A     B        C', 'x     two...   3', `y${' '.repeat(14)}true`, `z${' '.repeat(14)}`, ''].join('\n'),
    );
    expect(formatTable({ ...small, rows: [] })).toBe('');
  });
});
