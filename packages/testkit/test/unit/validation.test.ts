import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import type { KubeObject } from '../../src/api/objects.js';
import { resourceByKey } from '../../src/api/resources.js';
import { invalid } from '../../src/api/status.js';
import type { FieldError } from '../../src/api/status.js';
import {
  invalidFor,
  kindOf,
  nameParameterError,
  validateCreate,
  validateName,
  validateUpdate,
} from '../../src/api/validation.js';

const r = (key: string) => resourceByKey(key);

/** The field errors as the Invalid message renders them: `field: detail`. */
const rendered = (errors: readonly FieldError[]) => errors.map((e) => `${e.field}: ${e.message}`);

/** Defaults then validates a new object, as the store does. */
function create(key: string, obj: KubeObject): string[] {
  applyDefaults(r(key), obj);
  return rendered(validateCreate(r(key), obj));
}

/** Defaults then validates an update against a defaulted, stored copy. */
function update(key: string, oldObj: KubeObject, change: (o: KubeObject) => void, subresource?: 'status'): string[] {
  applyDefaults(r(key), oldObj);
  const next = structuredClone(oldObj);
  change(next);
  applyDefaults(r(key), next);
  return rendered(validateUpdate(r(key), next, oldObj, subresource));
}

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QNAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: 'default',
  uid: 'u-1',
  resourceVersion: '1',
  creationTimestamp: '2025-01-01T00:00:00Z',
  ...extra,
});
const pvc = (spec: Record<string, unknown>, name = 'c'): KubeObject => ({ metadata: meta(name), spec, status: {} });
const goodClaimSpec = () => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
const pv = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'v' }, spec, status: {} });
const goodPVSpec = () => ({
  accessModes: ['ReadWriteOnce'],
  capacity: { storage: '1Gi' },
  hostPath: { path: '/data' },
});
const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: meta('p'), spec, status: {} });

describe('object metadata', () => {
  it('requires a name or generateName and renders the full Invalid message', () => {
    const obj: KubeObject = { metadata: { namespace: 'default' } };
    const errors = validateCreate(r('configmaps'), obj);
    expect(rendered(errors)).toEqual(['metadata.name: Required value: name or generateName is required']);
    expect(invalid('', 'ConfigMap', '', errors).status.message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it('rejects a name that is not a DNS-1123 subdomain with the regex in the message', () => {
    expect(create('configmaps', { metadata: { name: 'Bad_Name', namespace: 'default' } })).toEqual([
      `metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
    ]);
  });

  it('holds namespaces to DNS-1123 labels', () => {
    expect(create('namespaces', { metadata: { name: 'a.b' } })).toEqual([
      'metadata.name: Invalid value: "a.b": must not contain dots',
    ]);
    expect(create('namespaces', { metadata: { name: 'a_b' } })).toEqual([
      `metadata.name: Invalid value: "a_b": ${LABEL_MSG}`,
    ]);
  });

  it('accepts a generateName ending in a dash and checks the generated name', () => {
    expect(
      create('configmaps', { metadata: { generateName: 'job-', name: 'job-x7k2p', namespace: 'default' } }),
    ).toEqual([]);
    expect(
      create('configmaps', { metadata: { generateName: 'Job-', name: 'Job-x7k2p', namespace: 'default' } }),
    ).toEqual([
      `metadata.generateName: Invalid value: "Job-": ${SUBDOMAIN_MSG}`,
      `metadata.name: Invalid value: "Job-x7k2p": ${SUBDOMAIN_MSG}`,
    ]);
  });

  it('only holds core/v1 Event names to the path-segment rule, but events.k8s.io ones to DNS subdomains', () => {
    const core = (name: string): KubeObject => ({
      metadata: { name, namespace: 'default' },
      involvedObject: { namespace: 'default' },
    });
    expect(create('events', core('Pod.Started_1'))).toEqual([]);
    expect(create('events', core('a/b'))).toEqual(['metadata.name: Invalid value: "a/b": may not contain \'/\'']);
    const strict: KubeObject = {
      metadata: { name: 'Pod.Started_1', namespace: 'default' },
      eventTime: '2025-01-01T00:00:00.000000Z',
      reportingController: 'example.com/ctrl',
      reportingInstance: 'ctrl-1',
      action: 'Bind',
      reason: 'Bound',
      type: 'Normal',
      regarding: { namespace: 'default' },
    };
    expect(create('events.k8s.io/events', strict)).toEqual([
      `metadata.name: Invalid value: "Pod.Started_1": ${SUBDOMAIN_MSG}`,
    ]);
  });

  it('reports label key and value problems on metadata.labels', () => {
    expect(
      create('configmaps', {
        metadata: { name: 'c', namespace: 'default', labels: { 'bad key': 'ok', good: '-bad-' } },
      }),
    ).toEqual([
      `metadata.labels: Invalid value: "bad key": ${QNAME_PART_MSG}`,
      `metadata.labels: Invalid value: "-bad-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    ]);
  });

  it('limits annotations to 256 KiB in total', () => {
    const big = 'x'.repeat(256 * 1024);
    expect(create('configmaps', { metadata: { name: 'c', namespace: 'default', annotations: { a: big } } })).toEqual([
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
  });

  it('requires finalizers to be qualified names and core-kind ones to be prefixed unless standard', () => {
    expect(
      create('configmaps', {
        metadata: { name: 'c', namespace: 'default', finalizers: ['kubernetes', 'example.com/ok', 'mine', 'a/b/c'] },
      }),
    ).toEqual([
      `metadata.finalizers: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      'metadata.finalizers[2]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified',
    ]);
    const lease: KubeObject = { metadata: { name: 'l', namespace: 'default', finalizers: ['mine'] } };
    expect(create('coordination.k8s.io/leases', lease)).toEqual([]);
  });

  it('ignores a namespace on cluster-scoped kinds, which the server clears', () => {
    expect(create('persistentvolumes', { metadata: { name: 'v', namespace: 'default' }, spec: goodPVSpec() })).toEqual(
      [],
    );
  });

  it('keeps name, uid and creationTimestamp immutable on update', () => {
    const errs = update('configmaps', { metadata: meta('c') }, (o) => {
      o.metadata.uid = 'u-2';
      o.metadata.creationTimestamp = '2025-06-01T10:00:00Z';
    });
    expect(errs).toEqual([
      'metadata.uid: Invalid value: "u-2": field is immutable',
      'metadata.creationTimestamp: Invalid value: 2025-06-01 10:00:00 +0000 UTC: field is immutable',
    ]);
  });

  it('checks names for URLs and per kind', () => {
    expect(validateName(r('namespaces'), 'a.b')).toEqual(['must not contain dots']);
    expect(validateName(r('configmaps'), 'a.b')).toEqual([]);
    expect(nameParameterError('..')?.status.message).toBe('Name parameter invalid: "..": may not be \'..\'');
    expect(nameParameterError('fine')).toBeUndefined();
    expect(kindOf(r('storage.k8s.io/storageclasses'))).toEqual({ group: 'storage.k8s.io', kind: 'StorageClass' });
  });
});

describe('PersistentVolumeClaim create', () => {
  it('requires at least one access mode, as the client sees it', () => {
    const obj = pvc({ resources: { requests: { storage: '1Gi' } } });
    applyDefaults(r('persistentvolumeclaims'), obj);
    expect(
      invalidFor(r('persistentvolumeclaims'), 'c', validateCreate(r('persistentvolumeclaims'), obj)).status.message,
    ).toBe(
      'PersistentVolumeClaim "c" is invalid: spec.accessModes: Required value: at least 1 access mode is required',
    );
  });

  it('accepts a well-formed claim', () => {
    expect(create('persistentvolumeclaims', pvc(goodClaimSpec()))).toEqual([]);
  });

  it('rejects unknown access modes, mixing ReadWriteOncePod, a missing or zero size and a bad volumeMode', () => {
    expect(
      create(
        'persistentvolumeclaims',
        pvc({ accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'RWX'], volumeMode: 'Raw', resources: {} }),
      ),
    ).toEqual([
      'spec.accessModes: Unsupported value: "RWX": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
      'spec.resources[storage]: Required value',
      'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ]);
    expect(
      create(
        'persistentvolumeclaims',
        pvc({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0' } } }),
      ),
    ).toEqual(['spec.resources[storage]: Invalid value: "0": must be greater than zero']);
  });

  it('checks storageClassName and dataSource', () => {
    expect(
      create(
        'persistentvolumeclaims',
        pvc({ ...goodClaimSpec(), storageClassName: 'Fast_SSD', dataSource: { kind: 'VolumeSnapshot', name: 's' } }),
      ),
    ).toEqual([
      `spec.storageClassName: Invalid value: "Fast_SSD": ${SUBDOMAIN_MSG}`,
      `spec.dataSource: Invalid value: "VolumeSnapshot": must be 'PersistentVolumeClaim' when referencing the default apiGroup`,
    ]);
  });
});

describe('PersistentVolumeClaim update', () => {
  const SPEC_IMMUTABLE =
    'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n';

  it('forbids changing the access modes with the real message and a diff', () => {
    const errs = update('persistentvolumeclaims', pvc(goodClaimSpec()), (o) => {
      (o.spec as { accessModes: string[] }).accessModes = ['ReadWriteMany'];
    });
    expect(errs).toHaveLength(1);
    expect(errs[0]?.startsWith(SPEC_IMMUTABLE)).toBe(true);
    expect(errs[0]).toContain('accessModes');
  });

  it('allows setting volumeName once but not changing it', () => {
    expect(
      update(
        'persistentvolumeclaims',
        pvc(goodClaimSpec()),
        (o) => ((o.spec as Record<string, unknown>).volumeName = 'pv-1'),
      ),
    ).toEqual([]);
    const bound = pvc({ ...goodClaimSpec(), volumeName: 'pv-1' });
    expect(
      update('persistentvolumeclaims', bound, (o) => ((o.spec as Record<string, unknown>).volumeName = 'pv-2'))[0],
    ).toMatch(/^spec: Forbidden: spec is immutable/);
  });

  it('allows growing the request of a bound claim only', () => {
    const grow = (o: KubeObject) =>
      ((o.spec as { resources: { requests: Record<string, string> } }).resources.requests.storage = '2Gi');
    const bound = pvc(goodClaimSpec());
    bound.status = { phase: 'Bound', capacity: { storage: '1Gi' } };
    expect(update('persistentvolumeclaims', bound, grow)).toEqual([]);
    expect(update('persistentvolumeclaims', pvc(goodClaimSpec()), grow)[0]).toMatch(
      /^spec: Forbidden: spec is immutable/,
    );
  });

  it('forbids shrinking a bound claim to its status capacity', () => {
    const bound = pvc({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } });
    bound.status = { phase: 'Bound', capacity: { storage: '1Gi' } };
    expect(
      update(
        'persistentvolumeclaims',
        bound,
        (o) => ((o.spec as { resources: { requests: Record<string, string> } }).resources.requests.storage = '1024Mi'),
      ),
    ).toEqual(['spec.resources.requests.storage: Forbidden: field can not be less than status.capacity']);
  });

  it('allows setting storageClassName on a claim that had none, but not changing it', () => {
    expect(
      update(
        'persistentvolumeclaims',
        pvc(goodClaimSpec()),
        (o) => ((o.spec as Record<string, unknown>).storageClassName = 'fast'),
      ),
    ).toEqual([]);
    const classed = pvc({ ...goodClaimSpec(), storageClassName: 'fast' });
    expect(
      update(
        'persistentvolumeclaims',
        classed,
        (o) => ((o.spec as Record<string, unknown>).storageClassName = 'slow'),
      )[0],
    ).toMatch(/^spec: Forbidden/);
  });

  it('reports a volumeMode change on the bare volumeMode path, as upstream does', () => {
    const errs = update(
      'persistentvolumeclaims',
      pvc(goodClaimSpec()),
      (o) => ((o.spec as Record<string, unknown>).volumeMode = 'Block'),
    );
    expect(errs[1]).toBe('volumeMode: Invalid value: "Block": field is immutable');
  });

  it('lets a status update through with the stored spec', () => {
    expect(
      update(
        'persistentvolumeclaims',
        pvc(goodClaimSpec()),
        (o) => (o.status = { phase: 'Bound', capacity: { storage: '1Gi' } }),
        'status',
      ),
    ).toEqual([]);
  });
});

describe('PersistentVolume', () => {
  it('accepts a hostPath volume', () => {
    expect(create('persistentvolumes', pv(goodPVSpec()))).toEqual([]);
  });

  it('requires access modes, capacity and a volume source', () => {
    expect(create('persistentvolumes', pv({}))).toEqual([
      'spec.accessModes: Required value',
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
      'spec: Required value: must specify a volume type',
    ]);
  });

  it('allows only one volume source and a path for hostPath', () => {
    expect(
      create('persistentvolumes', pv({ ...goodPVSpec(), hostPath: { path: '' }, nfs: { server: 'nfs', path: '/x' } })),
    ).toEqual(['spec.hostPath.path: Required value', 'spec.nfs: Forbidden: may not specify more than 1 volume type']);
  });

  it('requires node affinity for local volumes', () => {
    const { hostPath: _unused, ...rest } = goodPVSpec();
    expect(create('persistentvolumes', pv({ ...rest, local: { path: '/mnt/disks/a' } }))).toEqual([
      'spec.nodeAffinity: Required value: Local volume requires node affinity',
    ]);
    expect(
      create(
        'persistentvolumes',
        pv({ ...rest, local: { path: '/mnt/disks/a' }, nodeAffinity: { required: { nodeSelectorTerms: [] } } }),
      ),
    ).toEqual([
      'spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term',
    ]);
  });

  it('rejects an unknown reclaim policy', () => {
    expect(create('persistentvolumes', pv({ ...goodPVSpec(), persistentVolumeReclaimPolicy: 'Keep' }))).toEqual([
      'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
    ]);
  });

  it('freezes the volume source and node affinity but lets claimRef change', () => {
    const stored = pv({
      ...goodPVSpec(),
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }] } },
    });
    const source = update(
      'persistentvolumes',
      structuredClone(stored),
      (o) => ((o.spec as Record<string, unknown>).hostPath = { path: '/other' }),
    );
    expect(source).toHaveLength(1);
    expect(
      source[0]?.startsWith(
        'spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n',
      ),
    ).toBe(true);
    const affinity = update(
      'persistentvolumes',
      structuredClone(stored),
      (o) => delete (o.spec as Record<string, unknown>).nodeAffinity,
    );
    expect(affinity).toEqual([
      'nodeAffinity: Invalid value: null: field is immutable, except for updating from beta label to GA',
    ]);
    expect(
      update(
        'persistentvolumes',
        structuredClone(stored),
        (o) => ((o.spec as Record<string, unknown>).claimRef = { namespace: 'default', name: 'c' }),
      ),
    ).toEqual([]);
  });
});

describe('StorageClass', () => {
  const sc = (extra: Record<string, unknown> = {}): KubeObject => ({
    metadata: { name: 'fast' },
    provisioner: 'example.com/csi',
    ...extra,
  });

  it('requires a provisioner that is a qualified name', () => {
    expect(create('storage.k8s.io/storageclasses', { metadata: { name: 'fast' } })).toEqual([
      'provisioner: Required value',
    ]);
    expect(create('storage.k8s.io/storageclasses', sc({ provisioner: 'a/b/c' }))[0]).toMatch(
      /^provisioner: Invalid value: "a\/b\/c": a qualified name must/,
    );
  });

  it('accepts only Delete and Retain, and Immediate or WaitForFirstConsumer', () => {
    expect(
      create('storage.k8s.io/storageclasses', sc({ reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' })),
    ).toEqual([
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ]);
  });

  it('forbids updating parameters, provisioner, reclaimPolicy and volumeBindingMode, in one bracketed message', () => {
    const stored = sc({ parameters: { type: 'ssd' } });
    applyDefaults(r('storage.k8s.io/storageclasses'), stored);
    const next = sc({
      parameters: { type: 'hdd' },
      provisioner: 'example.com/other',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    applyDefaults(r('storage.k8s.io/storageclasses'), next);
    const errors = validateUpdate(r('storage.k8s.io/storageclasses'), next, stored);
    expect(invalidFor(r('storage.k8s.io/storageclasses'), 'fast', errors).status.message).toBe(
      'StorageClass.storage.k8s.io "fast" is invalid: [parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden., reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]',
    );
  });

  it('lets labels and allowVolumeExpansion change', () => {
    expect(
      update('storage.k8s.io/storageclasses', sc(), (o) => {
        o.metadata.labels = { tier: 'gold' };
        o.allowVolumeExpansion = true;
      }),
    ).toEqual([]);
  });
});

describe('Pod create', () => {
  it('accepts a defaulted minimal pod', () => {
    expect(create('pods', pod({ containers: [{ name: 'app', image: 'nginx' }] }))).toEqual([]);
  });

  it('requires at least one container', () => {
    expect(create('pods', pod({ containers: [] }))).toEqual(['spec.containers: Required value']);
  });

  it('requires container names and images, unique names, and mounts of declared volumes', () => {
    expect(
      create(
        'pods',
        pod({
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'data', emptyDir: {} },
          ],
          containers: [
            { name: '', image: '' },
            { name: 'app', image: 'nginx', volumeMounts: [{ name: 'missing', mountPath: '/m' }] },
            { name: 'app', image: ' nginx' },
          ],
        }),
      ),
    ).toEqual([
      'spec.volumes[1].name: Duplicate value: "data"',
      'spec.containers[0].name: Required value',
      'spec.containers[0].image: Required value',
      'spec.containers[1].volumeMounts[0].name: Not found: "missing"',
      'spec.containers[2].name: Duplicate value: "app"',
      'spec.containers[2].image: Invalid value: " nginx": must not have leading or trailing whitespace',
    ]);
  });

  it('rejects an unknown restartPolicy and a bad container name', () => {
    expect(create('pods', pod({ restartPolicy: 'Sometimes', containers: [{ name: 'App', image: 'nginx' }] }))).toEqual([
      `spec.containers[0].name: Invalid value: "App": ${LABEL_MSG}`,
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it('rejects two volume sources in one volume', () => {
    expect(
      create(
        'pods',
        pod({
          volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }],
          containers: [{ name: 'c', image: 'i' }],
        }),
      ),
    ).toEqual(['spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type']);
  });
});

describe('Pod update', () => {
  const stored = () => pod({ containers: [{ name: 'app', image: 'nginx:1' }] });
  const containers = (o: KubeObject) => (o.spec as { containers: Record<string, unknown>[] }).containers;

  it('allows changing a container image', () => {
    expect(update('pods', stored(), (o) => (containers(o)[0]!.image = 'nginx:2'))).toEqual([]);
  });

  it('forbids other spec changes with the real message', () => {
    const errs = update('pods', stored(), (o) => ((o.spec as Record<string, unknown>).restartPolicy = 'Never'));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(
      /^spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`,`spec\.initContainers\[\*\]\.image`,`spec\.activeDeadlineSeconds`,`spec\.tolerations` \(only additions to existing tolerations\),`spec\.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/,
    );
  });

  it('forbids adding containers', () => {
    expect(update('pods', stored(), (o) => containers(o).push({ name: 'side', image: 'busybox' }))).toEqual([
      'spec.containers: Forbidden: pod updates may not add or remove containers',
    ]);
  });

  it('allows adding tolerations but not changing existing ones', () => {
    const tolerated = () =>
      pod({ containers: [{ name: 'app', image: 'nginx:1' }], tolerations: [{ key: 'k', operator: 'Exists' }] });
    const tolerations = (o: KubeObject) => (o.spec as { tolerations: Record<string, unknown>[] }).tolerations;
    expect(update('pods', tolerated(), (o) => tolerations(o).push({ key: 'other', operator: 'Exists' }))).toEqual([]);
    expect(
      update('pods', tolerated(), (o) => Object.assign(tolerations(o)[0]!, { operator: 'Equal', value: 'v' })),
    ).toEqual(['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds']);
  });

  it('re-adds an edited default toleration on update, so the edit fails the toleration rules instead', () => {
    expect(
      update(
        'pods',
        stored(),
        (o) => ((o.spec as { tolerations: Record<string, unknown>[] }).tolerations[0]!.effect = 'NoSchedule'),
      ),
    ).toEqual([
      'spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
    ]);
  });

  it('keeps qosClass immutable on a status update', () => {
    expect(
      update('pods', stored(), (o) => (o.status = { phase: 'Running', qosClass: 'Guaranteed' }), 'status'),
    ).toEqual(['status.qosClass: Invalid value: "Guaranteed": field is immutable']);
  });
});

describe('other kinds', () => {
  it('requires a positive lease duration', () => {
    expect(
      create('coordination.k8s.io/leases', {
        metadata: { name: 'l', namespace: 'default' },
        spec: { leaseDurationSeconds: 0 },
      }),
    ).toEqual(['spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0']);
  });

  it('checks ConfigMap keys and keys present in both data and binaryData', () => {
    expect(
      create('configmaps', {
        metadata: { name: 'c', namespace: 'default' },
        data: { 'a b': 'x', k: 'v' },
        binaryData: { k: 'dg==' },
      }),
    ).toEqual([
      `data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      'data[k]: Invalid value: "k": duplicate of key present in binaryData',
    ]);
  });

  it('requires the keys of typed secrets and keeps the type immutable', () => {
    expect(
      create('secrets', {
        metadata: { name: 's', namespace: 'default' },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'eA==' },
      }),
    ).toEqual(['data[tls.key]: Required value']);
    expect(update('secrets', { metadata: meta('s') }, (o) => (o.type = 'example.com/custom'))).toEqual([
      'type: Invalid value: "example.com/custom": field is immutable',
    ]);
  });

  it('keeps a namespace Active unless it is being deleted', () => {
    expect(
      update(
        'namespaces',
        { metadata: { name: 'n', uid: 'u', creationTimestamp: '2025-01-01T00:00:00Z' } },
        (o) => (o.status = { phase: 'Terminating' }),
        'status',
      ),
    ).toEqual(['status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty']);
  });

  it('reports an error found by both the generic and the kind rules once', () => {
    const errs = update('serviceaccounts', { metadata: meta('sa') }, (o) => (o.metadata.labels = { 'a b': 'x' }));
    expect(errs).toEqual([`metadata.labels: Invalid value: "a b": ${QNAME_PART_MSG}`]);
  });
});
