/**
 * The Go library's TestTopologyParams (controller_test.go, v13): runs the controller against the testkit API server
 * and checks what the first provision call got: the selected node and the class's allowedTopologies.
 *
 * Differences from Go:
 * - Go's provisioner records the selected *Node object* (v12 and earlier fetched it); v13 and this port pass only
 *   its name (`selectedNodeName`), so that is what is compared. node-1 is still created, as the Go fixture does.
 * - Go sleeps 2 resync periods and reads the first call from the channel; here the test polls for the first call.
 */
import type { V1PersistentVolumeClaim, V1StorageClass, V1TopologySelectorTerm } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import {
  PROVISIONER,
  newClaim,
  newStorageClass,
  newStorageClassWithAllowedTopologies,
  testProvisioner,
} from './fixtures.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const dummyAllowedTopology: V1TopologySelectorTerm[] = [
  { matchLabelExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', values: ['zone1'] }] },
];
const WFFC: Partial<V1StorageClass> = { volumeBindingMode: 'WaitForFirstConsumer' };
const SELECTED_NODE = { 'volume.kubernetes.io/selected-node': 'node-1' };

describe('TestTopologyParams', () => {
  const cases: {
    name: string;
    node?: boolean;
    class: () => V1StorageClass;
    claim: () => V1PersistentVolumeClaim;
    expected: { selectedNodeName: string; allowedTopologies: V1TopologySelectorTerm[] | undefined };
  }[] = [
    {
      name: 'provision without topology information',
      class: () => newStorageClass('class-1', PROVISIONER),
      claim: () => newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, ''),
      expected: { selectedNodeName: '', allowedTopologies: undefined },
    },
    {
      name: 'provision with AllowedTopologies',
      class: () => newStorageClassWithAllowedTopologies('class-1', PROVISIONER, dummyAllowedTopology),
      claim: () => newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, ''),
      expected: { selectedNodeName: '', allowedTopologies: dummyAllowedTopology },
    },
    {
      name: 'provision with selected node',
      node: true,
      class: () => newStorageClass('class-1', PROVISIONER, WFFC),
      claim: () => newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, '', SELECTED_NODE),
      expected: { selectedNodeName: 'node-1', allowedTopologies: undefined },
    },
    {
      name: 'provision with AllowedTopologies and selected node',
      node: true,
      class: () => newStorageClass('class-1', PROVISIONER, { ...WFFC, allowedTopologies: dummyAllowedTopology }),
      claim: () => newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, '', SELECTED_NODE),
      expected: { selectedNodeName: 'node-1', allowedTopologies: dummyAllowedTopology },
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const provisioner = testProvisioner();
      h = await startHarness(provisioner, { classes: [c.class()], claims: [c.claim()] }, {}, (kit) => {
        if (c.node === true)
          kit.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
      });
      await expect.poll(() => provisioner.calls.length, WAIT).toBeGreaterThan(0);
      const first = provisioner.calls[0]!;
      expect({ selectedNodeName: first.selectedNodeName, allowedTopologies: first.allowedTopologies }).toEqual(
        c.expected,
      );
    });
  }
});
