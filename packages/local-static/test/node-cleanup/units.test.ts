/**
 * The node-cleanup controller's rules on their own: the node names of a PV (upstream's table of
 * `GetLocalPersistentVolumeNodeNames`, and the stricter reading it acts on), the class filter and "a node exists".
 */
import { createStore } from '@kprov/provisioner-lib';
import type { V1Node, V1NodeSelectorTerm, V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { anyNodeExists, hostnameIndex, HOSTNAME_INDEX } from '../../src/node-cleanup/node-exists.js';
import { isLocalVolumeOfClass, localVolumeNodeNames, pinnedNodeNames } from '../../src/node-cleanup/node-names.js';

const HOSTNAME = 'kubernetes.io/hostname';

/** A PV named foo with `terms` as its required node affinity (undefined: no node affinity). */
function pv(terms?: V1NodeSelectorTerm[]): V1PersistentVolume {
  return {
    metadata: { name: 'foo' },
    spec: terms === undefined ? {} : { nodeAffinity: { required: { nodeSelectorTerms: terms } } },
  };
}

function term(...expressions: [key: string, values?: string[], operator?: string][]): V1NodeSelectorTerm {
  return {
    matchExpressions: expressions.map(([key, values, operator]) => ({
      key,
      operator: operator ?? 'In',
      ...(values === undefined ? {} : { values }),
    })),
  };
}

describe('node names of a PV', () => {
  // Upstream's TestGetPersistentVolumeNodeNames, case by case, then the stricter reading the controller acts on.
  const cases: {
    name: string;
    pv: V1PersistentVolume | undefined;
    names: string[] | undefined;
    pinned: string[] | undefined;
  }[] = [
    { name: 'nil PV', pv: undefined, names: undefined, pinned: undefined },
    { name: 'PV missing node affinity', pv: pv(), names: undefined, pinned: undefined },
    {
      name: 'PV node affinity missing required',
      pv: { metadata: { name: 'foo' }, spec: { nodeAffinity: {} } },
      names: undefined,
      pinned: undefined,
    },
    {
      name: 'PV node affinity required without its terms',
      pv: { metadata: { name: 'foo' }, spec: { nodeAffinity: { required: {} as never } } },
      names: [],
      pinned: undefined,
    },
    { name: 'PV node affinity required zero selector terms', pv: pv([]), names: [], pinned: undefined },
    { name: 'PV node affinity required zero match expressions', pv: pv([term()]), names: [], pinned: undefined },
    {
      name: 'PV node affinity required multiple match expressions',
      pv: pv([term(['foo'], ['bar'])]),
      names: [],
      pinned: undefined,
    },
    {
      name: 'PV node affinity required single match expression with no values',
      pv: pv([term([HOSTNAME, []])]),
      names: [],
      pinned: undefined,
    },
    {
      name: 'PV node affinity required single match expression with single node',
      pv: pv([term([HOSTNAME, ['node1']])]),
      names: ['node1'],
      pinned: ['node1'],
    },
    {
      name: 'PV node affinity required single match expression with multiple nodes',
      pv: pv([term([HOSTNAME, ['node1', 'node2']])]),
      names: ['node1', 'node2'],
      pinned: ['node1', 'node2'],
    },
    {
      name: 'PV node affinity required multiple match expressions with multiple nodes',
      pv: pv([term(['bar', ['node1', 'node2']], [HOSTNAME, ['node3', 'node4']])]),
      names: ['node3', 'node4'],
      pinned: ['node3', 'node4'],
    },
    {
      name: 'PV node affinity required multiple node selectors multiple match expressions with multiple nodes',
      pv: pv([term([HOSTNAME, ['node1', 'node2']], [HOSTNAME, ['node2', 'node3']]), term([HOSTNAME, ['node1']])]),
      names: ['node1', 'node2'],
      pinned: ['node1', 'node2'],
    },
    // Beyond upstream's table.
    {
      name: 'hostname expression with an operator other than In',
      pv: pv([term([HOSTNAME, ['node1'], 'NotIn'])]),
      names: [],
      pinned: undefined,
    },
    {
      name: 'hostname expressions of one term without a common node',
      pv: pv([term([HOSTNAME, ['node1']], [HOSTNAME, ['node2']])]),
      names: [],
      pinned: undefined,
    },
    {
      name: 'a second term admitting the nodes of a zone (a class selector)',
      pv: pv([term([HOSTNAME, ['node1']]), term(['topology.kubernetes.io/zone', ['zone-a']])]),
      names: ['node1'],
      pinned: undefined,
    },
    {
      name: 'a second term pinned to another node',
      pv: pv([term([HOSTNAME, ['node2']]), term([HOSTNAME, ['node1']])]),
      names: ['node1', 'node2'],
      pinned: ['node1', 'node2'],
    },
  ];

  it.each(cases)('$name', ({ pv: volume, names, pinned }) => {
    expect(localVolumeNodeNames(volume)).toEqual(names);
    if (volume !== undefined) expect(pinnedNodeNames(volume)).toEqual(pinned);
  });
});

describe('local PV of an opted-in class', () => {
  const local = (className?: string): V1PersistentVolume => ({
    spec: { local: { path: '/mnt/disks/a' }, ...(className === undefined ? {} : { storageClassName: className }) },
  });
  it.each([
    { name: 'matching class', pv: local('sc1'), classes: ['sc1'], want: true },
    { name: 'one of several classes', pv: local('sc2'), classes: ['sc1', 'sc2'], want: true },
    { name: 'another class', pv: local('sc3'), classes: ['sc1', 'sc2'], want: false },
    { name: 'no class opted in', pv: local('sc1'), classes: [], want: false },
    { name: 'a PV without a class', pv: local(), classes: ['sc1'], want: false },
    {
      name: 'not a local PV',
      pv: { spec: { hostPath: { path: '/tmp' }, storageClassName: 'sc1' } },
      classes: ['sc1'],
      want: false,
    },
  ])('$name', ({ pv: volume, classes, want }) => {
    expect(isLocalVolumeOfClass(volume, new Set(classes))).toBe(want);
  });
});

describe('a node exists', () => {
  const { store, writer } = createStore<V1Node>({ indexers: { [HOSTNAME_INDEX]: hostnameIndex } });
  const node = (name: string, hostname?: string): V1Node => ({
    metadata: { name, resourceVersion: '1', ...(hostname === undefined ? {} : { labels: { [HOSTNAME]: hostname } }) },
  });
  writer.apply({ type: 'Init' });
  for (const n of [node('node1', 'node1'), node('ip-10-0-0-7.ec2.internal', 'ip-10-0-0-7'), node('bare')])
    writer.apply({ type: 'InitApply', object: n });
  writer.apply({ type: 'InitDone', resourceVersion: '1' });

  it.each([
    { name: 'by name', names: ['node1'], want: true },
    { name: 'by name, without a hostname label', names: ['bare'], want: true },
    { name: 'by its kubernetes.io/hostname label', names: ['ip-10-0-0-7'], want: true },
    { name: 'one of several, the others unknown', names: ['gone1', 'node1', 'gone2'], want: true },
    { name: 'none of them', names: ['gone1', 'gone2'], want: false },
    { name: 'no names', names: [], want: false },
    // Upstream cannot make a label selector of it, and fails safe.
    { name: 'a name that cannot be a label value', names: ['a'.repeat(64)], want: true },
  ])('$name', ({ names, want }) => {
    expect(anyNodeExists(store, names)).toBe(want);
  });
});
